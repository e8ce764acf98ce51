// The report's plots against its verdict, from records of the layout docs/experiments.md
// describes (written by hand, so that the expected numbers do not come from a run of the code
// under test): each plot's data file holds the quantity the verdict quotes, and bar charts have
// a y range that includes zero.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lib/reports/report.hpp"

namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

nlohmann::json o_metrics(double rms, double max_abs, double bias_z) {
  return {{"count", 4096},           {"nan_count", 0},     {"inf_count", 0},
          {"nonfinite_mismatch", 0}, {"max_abs", max_abs}, {"rms", rms},
          {"bias", bias_z * 1e-6},   {"bias_se", 1e-6},    {"bias_z", bias_z}};
}

nlohmann::json record(int index, const nlohmann::json& implementation, const std::string& input,
                      long long n, const nlohmann::json& results) {
  return {
      {"case_id", "case" + std::to_string(index)},
      {"case_index", index},
      {"experiment", "plots"},
      {"params",
       {{"implementation", implementation},
        {"input", {{"name", input}, {"generator", input}, {"shape", {32, 1, n, 64}}, {"seed", 7}}},
        {"analysis", {{"baseline", "baseline"}}}}},
      {"results", results}};
}

nlohmann::json site(const std::string& name, double exact, double sr) {
  return {{"site", name},   {"bias_exact", 0.0}, {"bias_z_exact", 0.0}, {"explained_exact", exact},
          {"bias_sr", 0.0}, {"bias_z_sr", 0.0},  {"explained_sr", sr}};
}

// Paper B's pair at two lengths, paper A's case with attribution, and one mitigation of it.
std::vector<nlohmann::json> records() {
  const nlohmann::json baseline{
      {"name", "baseline"}, {"preset", "baseline-lp"}, {"format", "bf16"}};
  const nlohmann::json flash{
      {"name", "flash"}, {"preset", "flash-lp"}, {"format", "bf16"}, {"tile", "64x64"}};
  const nlohmann::json tile{{"tile", {64, 64}}};
  // RMS ratios 0.002 / 0.0004 = 5 and 0.003 / 0.0004 = 7.5; max ratios 0.022 / 0.004 = 5.5
  // and 0.026 / 0.004 = 6.5.
  std::vector<nlohmann::json> out{
      record(0, baseline, "normal", 256, {{"outputs", {{"o", o_metrics(0.0004, 0.004, 0)}}}}),
      record(1, flash, "normal", 256,
             {{"outputs", {{"o", o_metrics(0.002, 0.022, 0)}}}, {"config", tile}}),
      record(2, baseline, "normal", 512, {{"outputs", {{"o", o_metrics(0.0004, 0.004, 0)}}}}),
      record(3, flash, "normal", 512,
             {{"outputs", {{"o", o_metrics(0.003, 0.026, 0)}}}, {"config", tile}})};
  const nlohmann::json paper_a{
      {"name", "paper_a"}, {"preset", "paper-a"}, {"format", "bf16"}, {"tile", "64x64"}};
  // Every share positive and far from zero: an autoscaled axis would not show zero.
  const nlohmann::json attribution{
      {"output", "o"},
      {"bias", -2e-5},
      {"bias_se", 1e-6},
      {"bias_z", -20},
      {"sites", {site("pv_acc", 0.45, 0.95), site("o_update", 0.40, 0.30)}}};
  out.push_back(record(4, paper_a, "repeated_max", 128,
                       {{"outputs", {{"o", o_metrics(0.01, 0.1, -20)}}},
                        {"attribution", attribution},
                        {"config", tile}}));
  nlohmann::json mitigated = paper_a;
  mitigated["mitigations"] = {"sr-o"};
  out.push_back(record(5, mitigated, "repeated_max", 128,
                       {{"outputs", {{"o", o_metrics(0.01, 0.1, 12)}}}, {"config", tile}}));
  return out;
}

class ReportPlots : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::system("command -v gnuplot >/dev/null 2>&1") != 0)
      GTEST_SKIP() << "gnuplot is not installed: no plots to check";
    // One folder per test: ctest runs the cases as processes side by side.
    dir_ = fs::path(::testing::TempDir()) /
           ("simprec_report_plots_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" +
            std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    {
      std::ofstream out(dir_ / "results.jsonl");
      for (const auto& r : records()) out << r.dump() << '\n';
    }
    simprec::reports::write_report(dir_);
    report_ = read(dir_ / "report.md");
  }
  fs::path dir_;
  std::string report_;
};

// The rows of one series ("name" then rows, blocks apart) of a gnuplot data file.
std::vector<std::string> series_rows(const std::string& data, const std::string& name) {
  std::vector<std::string> rows;
  std::istringstream lines(data);
  std::string line;
  bool inside = false;
  while (std::getline(lines, line)) {
    if (line == "\"" + name + "\"") {
      inside = true;
    } else if (inside && line.empty()) {
      break;
    } else if (inside) {
      rows.push_back(line);
    }
  }
  return rows;
}

// Every `set yrange [lo:hi]` of a gnuplot script, as (lo, hi).
std::vector<std::pair<double, double>> yranges(const std::string& script) {
  std::vector<std::pair<double, double>> out;
  const std::regex range(R"(set yrange \[([^:\]]+):([^\]]+)\])");
  for (auto it = std::sregex_iterator(script.begin(), script.end(), range);
       it != std::sregex_iterator(); ++it)
    out.emplace_back(std::stod((*it)[1]), std::stod((*it)[2]));
  return out;
}

TEST_F(ReportPlots, TheRatioPlotHoldsTheRmsRatiosTheVerdictQuotes) {
  const std::string name = "`flash` (flash-lp, bf16, tile 64x64) on normal";
  EXPECT_NE(
      report_.find(name + " deviates 5x as much as the baseline at N = 256 and 7.5x at N = 512 "
                          "(RMS error of O against fp64)"),
      std::string::npos)
      << report_;
  const std::string data = read(dir_ / "plots" / "flash_vs_baseline_vs_key_tiles.dat");
  // Key tiles (256 / 64, 512 / 64), N, the RMS ratio, the max |error| ratio.
  EXPECT_EQ(series_rows(data, name), (std::vector<std::string>{"4 256 5 5.5", "8 512 7.5 6.5"}))
      << data;
  const std::string script = read(dir_ / "plots" / "flash_vs_baseline_vs_key_tiles.gp");
  // The first panel, the verdict's, plots the third column: the RMS ratio.
  const size_t first_plot = script.find("\nplot ");
  ASSERT_NE(first_plot, std::string::npos) << script;
  EXPECT_NE(script.find("using 1:3", first_plot), std::string::npos) << script;
  EXPECT_LT(script.find("using 1:3", first_plot), script.find("using 1:4", first_plot)) << script;
}

TEST_F(ReportPlots, TheSitePlotHoldsTheSharesTheVerdictQuotesFromZero) {
  EXPECT_NE(report_.find("the sites that explain it: pv_acc (95% when rounded stochastically), "
                         "o_update (40% when made exact)"),
            std::string::npos)
      << report_;
  const std::string data = read(dir_ / "plots" / "bias_explained_per_site.dat");
  // Site, % explained made exact, % explained rounded stochastically.
  EXPECT_NE(data.find("\"pv_acc\" 45 95\n"), std::string::npos) << data;
  EXPECT_NE(data.find("\"o_update\" 40 30\n"), std::string::npos) << data;
  const auto ranges = yranges(read(dir_ / "plots" / "bias_explained_per_site.gp"));
  ASSERT_EQ(ranges.size(), 1u);
  EXPECT_LE(ranges[0].first, 0);
  EXPECT_GE(ranges[0].second, 95);
  EXPECT_TRUE(fs::is_regular_file(dir_ / "bias_explained_per_site.png"));
}

TEST_F(ReportPlots, TheMitigationBarsStartFromZero) {
  const std::string data = read(dir_ / "plots" / "mitigation.dat");
  EXPECT_NE(data.find(" 20 12\n"), std::string::npos) << data;  // |z| before and after
  const auto ranges = yranges(read(dir_ / "plots" / "mitigation.gp"));
  ASSERT_EQ(ranges.size(), 1u);
  EXPECT_LE(ranges[0].first, 0);
  EXPECT_GE(ranges[0].second, 20);
}

}  // namespace
