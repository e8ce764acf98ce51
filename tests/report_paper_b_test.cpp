// What report.md says about paper B's comparison: the tile a case took from the sram rule, the
// number of key tiles, and each draw's max error beside the baseline's, from records of the
// layout docs/experiments.md describes (written by hand, so the expected text does not come from
// a run of the code under test).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "lib/reports/report.hpp"

namespace {

namespace fs = std::filesystem;

nlohmann::json record(int index, const std::string& name, const std::string& numerics,
                      double max_abs, double rms, double draw_mean, double draw_sd,
                      const nlohmann::json& config) {
  nlohmann::json o{{"count", 4096},
                   {"nan_count", 0},
                   {"inf_count", 0},
                   {"nonfinite_mismatch", 0},
                   {"max_abs", max_abs},
                   {"rms", rms},
                   {"draw_max_abs_mean", draw_mean},
                   {"draw_max_abs_sd", draw_sd}};
  return {
      {"case_id", "case" + std::to_string(index)},
      {"case_index", index},
      {"experiment", "paper_b"},
      {"params",
       {{"implementation", {{"name", name}, {"numerics", numerics}, {"format", "bf16"}}},
        {"input",
         {{"name", "normal"}, {"generator", "normal"}, {"shape", {4, 1, 1024, 32}}, {"seed", 1}}},
        {"analysis", {{"baseline", "baseline"}}}}},
      {"results", {{"outputs", {{"o", o}}}, {"config", config}}}};
}

TEST(PaperBReport, ShowsTheSramTileTheKeyTilesAndTheMaxPerDraw) {
  const fs::path dir =
      fs::path(::testing::TempDir()) / ("simprec_report_paper_b_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  {
    std::ofstream out(dir / "results.jsonl");
    out << record(0, "baseline", "baseline-lp", 0.004, 0.0004, 0.0032, 0.00055,
                  {{"tile", {64, 64}}})
               .dump()
        << '\n'
        << record(1, "paper_b", "paper-b,sram=512", 0.022, 0.002, 0.018, 0.0025,
                  {{"tile", {4, 4}}, {"sram", "512"}})
               .dump()
        << '\n';
  }
  simprec::reports::write_report(dir);
  std::ifstream in(dir / "report.md");
  std::stringstream text;
  text << in.rdbuf();
  // Ratios 0.002 / 0.0004 = 5 and 0.022 / 0.004 = 5.5; 1024 keys in tiles of 4 columns.
  const std::string row =
      "| paper_b | bf16 | 4x4 (sram 512) | normal | 1024 | 1 | 5 | 5.5 | 256 | 0.018 +- 0.0025 | "
      "0.0032 +- 0.00055 |";
  EXPECT_NE(text.str().find(row), std::string::npos) << text.str();
}

}  // namespace
