#include "lib/reports/plots.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>

#include "lib/limits/strict_parse.hpp"
#include "lib/reports/result_view.hpp"

namespace simprec::reports {
namespace {

namespace fs = std::filesystem;

bool have_gnuplot() {
  return std::system("command -v gnuplot >/dev/null 2>&1") == 0;
}

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) out += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
  return out + "\"";
}

// Runs a gnuplot script; true when the PNG came out.
bool run_gnuplot(const fs::path& script, const fs::path& png) {
  const std::string command = "gnuplot " + quote(script.string()) + " >/dev/null 2>&1";
  return std::system(command.c_str()) == 0 && fs::exists(png);
}

std::string series_name(const CaseView& c) {
  std::string name = c.impl_name() + " " + c.format();
  if (c.tile() != "default") name += " " + c.tile();
  if (c.mitigations() != "-") name += " +" + c.mitigations();
  return name;
}

// Mean RMS error of O against N, one line per implementation/format/tile/input.
bool deviation_plot(const fs::path& dir, const std::vector<nlohmann::json>& records,
                    fs::path& png) {
  std::map<std::string, std::map<long long, std::pair<double, int>>> series;
  for (const auto& r : records) {
    const CaseView c{r};
    const double rms = c.metric("o", "rms");
    if (std::isnan(rms) || c.seq_len() <= 0) continue;
    auto& point = series[series_name(c) + " on " + c.input_name()][c.seq_len()];
    point.first += rms;
    point.second += 1;
  }
  // A line needs two lengths; configurations run at one length only have no place here.
  std::erase_if(series, [](const auto& entry) { return entry.second.size() < 2; });
  if (series.empty()) return false;
  std::ofstream data(dir / "deviation_vs_seq_len.dat");
  for (const auto& [name, points] : series) {
    data << "\"" << name << "\"\n";
    for (const auto& [n, p] : points) data << n << ' ' << p.first / p.second << '\n';
    data << "\n\n";
  }
  data.close();
  png = dir.parent_path() / "deviation_vs_seq_len.png";
  std::ofstream gp(dir / "deviation_vs_seq_len.gp");
  gp << "set terminal png size 1000,650 noenhanced\nset output " << quote(png.string()) << "\n"
     << "set title 'RMS error of O against the fp64 reference'\nset xlabel 'sequence length N'\n"
     << "set ylabel 'RMS error'\nset logscale xy\nset key outside right\nset grid\n"
     << "plot for [i=0:" << series.size() - 1 << "] "
     << quote((dir / "deviation_vs_seq_len.dat").string())
     << " index i using 1:2 with linespoints title columnheader(1)\n";
  gp.close();
  return run_gnuplot(dir / "deviation_vs_seq_len.gp", png);
}

// Paper B's Fig. 5: each flash case's max |error| of O over its baseline's on the same inputs,
// against the number of key tiles ceil(N / Bc) of the tile it ran with; one line per
// implementation, format and input.
bool ratio_plot(const fs::path& dir, const std::vector<nlohmann::json>& records, fs::path& png) {
  std::map<std::string, std::map<long long, double>> series;
  for (const auto& p : baseline_pairs(records)) {
    const CaseView t{*p.test}, b{*p.baseline};
    const long long bc = t.run_tile().second;
    const double ratio = t.metric("o", "max_abs") / b.metric("o", "max_abs");
    if (bc <= 0 || t.seq_len() <= 0 || !std::isfinite(ratio) || ratio <= 0) continue;
    series[t.impl_name() + " " + t.format() + " on " + t.input_name()]
          [(t.seq_len() + bc - 1) / bc] = ratio;
  }
  std::erase_if(series, [](const auto& entry) { return entry.second.size() < 2; });
  if (series.empty()) return false;
  const std::string stem = "flash_vs_baseline_vs_key_tiles";
  std::ofstream data(dir / (stem + ".dat"));
  for (const auto& [name, points] : series) {
    data << "\"" << name << "\"\n";
    for (const auto& [tiles, ratio] : points) data << tiles << ' ' << ratio << '\n';
    data << "\n\n";
  }
  data.close();
  png = dir.parent_path() / (stem + ".png");
  std::ofstream gp(dir / (stem + ".gp"));
  gp << "set terminal png size 1000,650 noenhanced\nset output " << quote(png.string()) << "\n"
     << "set title 'max |O - O_ref| of flash over the baseline on the same inputs'\n"
     << "set xlabel 'key tiles ceil(N / Bc)'\nset ylabel 'ratio'\nset logscale xy\n"
     << "set key outside right\nset grid\n"
     << "plot for [i=0:" << series.size() - 1 << "] " << quote((dir / (stem + ".dat")).string())
     << " index i using 1:2 with linespoints title columnheader(1)\n";
  gp.close();
  return run_gnuplot(dir / (stem + ".gp"), png);
}

// For each case with attribution: the output bias z-score with each site made exact.
bool site_plot(const fs::path& dir, const std::vector<nlohmann::json>& records, fs::path& png) {
  std::ofstream data(dir / "bias_z_per_site.dat");
  std::vector<std::string> titles;
  int blocks = 0;
  // The four cases with the most significant bias are the ones worth a look.
  std::vector<const nlohmann::json*> ranked;
  for (const auto& r : records) {
    if (CaseView{r}.attribution()) ranked.push_back(&r);
  }
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto* x, const auto* y) {
    return std::fabs(CaseView{*x}.attribution()->value("bias_z", 0.0)) >
           std::fabs(CaseView{*y}.attribution()->value("bias_z", 0.0));
  });
  for (const auto* record : ranked) {
    const CaseView c{*record};
    const auto* a = c.attribution();
    if (!a->contains("sites") || blocks >= 4) continue;
    titles.push_back(series_name(c) + " on " + c.input_name() +
                     ", N = " + std::to_string(c.seq_len()));
    data << "\"(as configured)\" " << a->value("bias_z", 0.0) << '\n';
    for (const auto& s : (*a)["sites"]) {
      data << "\"" << s.value("site", "?") << "\" " << s.value("bias_z_exact", 0.0) << '\n';
    }
    data << "\n\n";
    ++blocks;
  }
  data.close();
  if (blocks == 0) return false;
  png = dir.parent_path() / "bias_z_per_site.png";
  std::ofstream gp(dir / "bias_z_per_site.gp");
  gp << "set terminal png size 1000," << 350 * blocks << " noenhanced\nset output "
     << quote(png.string()) << "\n"
     << "set multiplot layout " << blocks << ",1\nset style fill solid 0.6\nset boxwidth 0.7\n"
     << "set ylabel 'bias z of O'\nset xtics rotate by -30\nset grid ytics\n";
  for (int i = 0; i < blocks; ++i) {
    gp << "set title " << quote("bias z of O with each site made exact: " + titles[i]) << "\nplot "
       << quote((dir / "bias_z_per_site.dat").string()) << " index " << i
       << " using 0:2:xtic(1) with boxes notitle\n";
  }
  gp << "unset multiplot\n";
  gp.close();
  return run_gnuplot(dir / "bias_z_per_site.gp", png);
}

// ULP-error histograms of O for the first case of each implementation.
bool histogram_plot(const fs::path& dir, const std::vector<nlohmann::json>& records,
                    fs::path& png) {
  std::ofstream data(dir / "error_histograms.dat");
  std::set<std::string> done;
  int blocks = 0;
  for (const auto& r : records) {
    const CaseView c{r};
    if (!c.has_output("o") || blocks >= 6) continue;
    const std::string name = series_name(c) + " on " + c.input_name();
    if (!done.insert(name).second) continue;
    const auto& hist =
        r["results"]["outputs"]["o"].value("ulp_histogram", nlohmann::json::object());
    if (hist.empty()) continue;
    std::map<int, double> bins;
    double total = 0;
    for (const auto& [key, count] : hist.items()) {
      std::string k = key;
      if (k.rfind(">=", 0) == 0 || k.rfind("<=", 0) == 0) k = k.substr(2);
      const auto bin = limits::parse_int64(k);
      if (!bin || !count.is_number()) continue;  // not a histogram bin of docs/experiments.md
      bins[static_cast<int>(std::clamp<int64_t>(*bin, -1000, 1000))] += count.get<double>();
      total += count.get<double>();
    }
    data << "\"" << name << "\"\n";
    for (const auto& [b, n] : bins) data << b << ' ' << n / total << '\n';
    data << "\n\n";
    ++blocks;
  }
  data.close();
  if (blocks == 0) return false;
  png = dir.parent_path() / "error_histograms.png";
  std::ofstream gp(dir / "error_histograms.gp");
  gp << "set terminal png size 1000,650 noenhanced\nset output " << quote(png.string()) << "\n"
     << "set title 'Error of O in ulps of the output format'\nset xlabel 'error (ulp)'\n"
     << "set ylabel 'fraction of elements'\nset logscale y\nset key outside right\nset grid\n"
     << "plot for [i=0:" << blocks - 1 << "] " << quote((dir / "error_histograms.dat").string())
     << " index i using 1:2 with linespoints title columnheader(1)\n";
  gp.close();
  return run_gnuplot(dir / "error_histograms.gp", png);
}

// |bias z| of O without and with each mitigation, for cases that differ only in mitigations.
bool mitigation_plot(const fs::path& dir, const std::vector<nlohmann::json>& records,
                     fs::path& png) {
  std::ofstream data(dir / "mitigation.dat");
  int rows = 0;
  for (const auto& [mitigated, unmitigated] : mitigation_pairs(records)) {
    const CaseView c{*mitigated}, before{*unmitigated};
    data << "\"" << c.preset() << " " << c.format() << " +" << c.mitigations() << " ("
         << c.input_name() << " N=" << c.seq_len() << ")\" "
         << std::fabs(before.metric("o", "bias_z")) << ' ' << std::fabs(c.metric("o", "bias_z"))
         << '\n';
    ++rows;
  }
  data.close();
  if (rows == 0) return false;
  png = dir.parent_path() / "mitigation.png";
  std::ofstream gp(dir / "mitigation.gp");
  gp << "set terminal png size 1000,650 noenhanced\nset output " << quote(png.string()) << "\n"
     << "set title '|bias z| of O before and after each mitigation (3 = significance line)'\n"
     << "set style data histograms\nset style histogram clustered\nset style fill solid 0.6\n"
     << "set xtics rotate by -25\nset grid ytics\nset arrow from graph 0, first 3 to graph 1, "
        "first 3 nohead dt 2\n"
     << "plot " << quote((dir / "mitigation.dat").string())
     << " using 2:xtic(1) title 'before', '' using 3 title 'after'\n";
  gp.close();
  return run_gnuplot(dir / "mitigation.gp", png);
}

}  // namespace

PlotResult make_plots(const fs::path& dir, const std::vector<nlohmann::json>& records) {
  PlotResult result;
  if (!have_gnuplot()) {
    result.note =
        "gnuplot is not installed, so no plots were made: `apt-get install gnuplot-nox`, then "
        "`simprec report " +
        dir.string() + "`.";
    return result;
  }
  const fs::path work = dir / "plots";
  fs::create_directories(work);
  fs::path png;
  if (deviation_plot(work, records, png)) result.files.push_back(png);
  if (ratio_plot(work, records, png)) result.files.push_back(png);
  if (site_plot(work, records, png)) result.files.push_back(png);
  if (histogram_plot(work, records, png)) result.files.push_back(png);
  if (mitigation_plot(work, records, png)) result.files.push_back(png);
  return result;
}

}  // namespace simprec::reports
