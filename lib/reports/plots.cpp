#include "lib/reports/plots.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>

#include "lib/limits/output_folder.hpp"
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

// Runs gnuplot with `args` (no shell: the paths are passed as they are), its output discarded;
// true when it exits with 0.
bool run_gnuplot(std::vector<const char*> args) {
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  pid_t child = -1;
  const int spawned = ::posix_spawnp(&child, args[0], &actions, nullptr,
                                     const_cast<char* const*>(args.data()), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return false;
  int status = 0;
  while (::waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) return false;
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// The folders of the plots: data and scripts go to DIR/plots/, the PNGs to DIR.
struct PlotFolders {
  const limits::OutputFolder& work;
  const limits::OutputFolder& out;
};

// Writes STEM.dat and STEM.gp into the work folder and runs gnuplot into STEM.png; true when the
// PNG came out. gnuplot writes into a fresh temporary file of the output folder, renamed over
// STEM.png (a link there is replaced, never written through); the script leaves the output to
// its caller, so that it can be rerun by hand: gnuplot -e "set output 'STEM.png'" STEM.gp.
bool render(const PlotFolders& folders, const std::string& stem, const std::string& data,
            const std::string& script, fs::path& png) {
  folders.work.write_file(stem + ".dat", data);
  folders.work.write_file(
      stem + ".gp", "# gnuplot -e \"set output '" + stem + ".png'\" " + stem + ".gp\n" + script);
  limits::ReplacingFile image(folders.out, stem + ".png");
  const std::string script_path = (folders.work.path() / (stem + ".gp")).string();
  const std::string output = "set output " + quote(image.temporary_path().string());
  struct stat info {};
  if (!run_gnuplot({"gnuplot", "-e", output.c_str(), script_path.c_str()}) ||
      ::stat(image.temporary_path().c_str(), &info) != 0 || info.st_size == 0)
    return false;
  image.commit();
  png = folders.out.path() / (stem + ".png");
  return true;
}

std::string series_name(const CaseView& c) {
  std::string name = c.impl_name() + " " + c.format();
  if (c.tile() != "default") name += " " + c.tile();
  if (c.mitigations() != "-") name += " +" + c.mitigations();
  return name;
}

// Mean RMS error of O against N, one line per implementation/format/tile/input.
bool deviation_plot(const PlotFolders& folders, const std::vector<nlohmann::json>& records,
                    fs::path& png) {
  const fs::path& dir = folders.work.path();
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
  std::ostringstream data;
  for (const auto& [name, points] : series) {
    data << "\"" << name << "\"\n";
    for (const auto& [n, p] : points) data << n << ' ' << p.first / p.second << '\n';
    data << "\n\n";
  }
  std::ostringstream gp;
  gp << "set terminal png size 1000,650 noenhanced\n"
     << "set title 'RMS error of O against the fp64 reference'\nset xlabel 'sequence length N'\n"
     << "set ylabel 'RMS error'\nset logscale xy\nset key outside right\nset grid\n"
     << "plot for [i=0:" << series.size() - 1 << "] "
     << quote((dir / "deviation_vs_seq_len.dat").string())
     << " index i using 1:2 with linespoints title columnheader(1)\n";
  return render(folders, "deviation_vs_seq_len", data.str(), gp.str(), png);
}

// Paper B's Fig. 5: each flash case's max |error| of O over its baseline's on the same inputs,
// against the number of key tiles ceil(N / Bc) of the tile it ran with; one line per
// implementation, format and input.
bool ratio_plot(const PlotFolders& folders, const std::vector<nlohmann::json>& records,
                fs::path& png) {
  const fs::path& dir = folders.work.path();
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
  std::ostringstream data;
  for (const auto& [name, points] : series) {
    data << "\"" << name << "\"\n";
    for (const auto& [tiles, ratio] : points) data << tiles << ' ' << ratio << '\n';
    data << "\n\n";
  }
  std::ostringstream gp;
  gp << "set terminal png size 1000,650 noenhanced\n"
     << "set title 'max |O - O_ref| of flash over the baseline on the same inputs'\n"
     << "set xlabel 'key tiles ceil(N / Bc)'\nset ylabel 'ratio'\nset logscale xy\n"
     << "set key outside right\nset grid\n"
     << "plot for [i=0:" << series.size() - 1 << "] " << quote((dir / (stem + ".dat")).string())
     << " index i using 1:2 with linespoints title columnheader(1)\n";
  return render(folders, stem, data.str(), gp.str(), png);
}

// For each case with attribution: the output bias z-score with each site made exact.
bool site_plot(const PlotFolders& folders, const std::vector<nlohmann::json>& records,
               fs::path& png) {
  const fs::path& dir = folders.work.path();
  std::ostringstream data;
  std::vector<std::string> titles;
  int blocks = 0;
  // The four cases with the most significant bias are the ones worth a look.
  std::vector<const nlohmann::json*> ranked;
  for (const auto& r : records) {
    if (CaseView{r}.attribution()) ranked.push_back(&r);
  }
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto* x, const auto* y) {
    return std::fabs(number_in(*CaseView{*x}.attribution(), "bias_z")) >
           std::fabs(number_in(*CaseView{*y}.attribution(), "bias_z"));
  });
  for (const auto* record : ranked) {
    const CaseView c{*record};
    const auto* a = c.attribution();
    if (!a->contains("sites") || blocks >= 4) continue;
    titles.push_back(series_name(c) + " on " + c.input_name() +
                     ", N = " + std::to_string(c.seq_len()));
    data << "\"(as configured)\" " << number_in(*a, "bias_z") << '\n';
    for (const auto& s : (*a)["sites"]) {
      data << "\"" << s.value("site", "?") << "\" " << number_in(s, "bias_z_exact") << '\n';
    }
    data << "\n\n";
    ++blocks;
  }
  if (blocks == 0) return false;
  std::ostringstream gp;
  gp << "set terminal png size 1000," << 350 * blocks << " noenhanced\n"
     << "set multiplot layout " << blocks << ",1\nset style fill solid 0.6\nset boxwidth 0.7\n"
     << "set ylabel 'bias z of O'\nset xtics rotate by -30\nset grid ytics\n";
  for (int i = 0; i < blocks; ++i) {
    gp << "set title " << quote("bias z of O with each site made exact: " + titles[i]) << "\nplot "
       << quote((dir / "bias_z_per_site.dat").string()) << " index " << i
       << " using 0:2:xtic(1) with boxes notitle\n";
  }
  gp << "unset multiplot\n";
  return render(folders, "bias_z_per_site", data.str(), gp.str(), png);
}

// ULP-error histograms of O for the first case of each implementation.
bool histogram_plot(const PlotFolders& folders, const std::vector<nlohmann::json>& records,
                    fs::path& png) {
  const fs::path& dir = folders.work.path();
  std::ostringstream data;
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
  if (blocks == 0) return false;
  std::ostringstream gp;
  gp << "set terminal png size 1000,650 noenhanced\n"
     << "set title 'Error of O in ulps of the output format'\nset xlabel 'error (ulp)'\n"
     << "set ylabel 'fraction of elements'\nset logscale y\nset key outside right\nset grid\n"
     << "plot for [i=0:" << blocks - 1 << "] " << quote((dir / "error_histograms.dat").string())
     << " index i using 1:2 with linespoints title columnheader(1)\n";
  return render(folders, "error_histograms", data.str(), gp.str(), png);
}

// |bias z| of O without and with each mitigation, for cases that differ only in mitigations.
bool mitigation_plot(const PlotFolders& folders, const std::vector<nlohmann::json>& records,
                     fs::path& png) {
  const fs::path& dir = folders.work.path();
  std::ostringstream data;
  int rows = 0;
  for (const auto& [mitigated, unmitigated] : mitigation_pairs(records)) {
    const CaseView c{*mitigated}, before{*unmitigated};
    data << "\"" << c.preset() << " " << c.format() << " +" << c.mitigations() << " ("
         << c.input_name() << " N=" << c.seq_len() << ")\" "
         << std::fabs(before.metric("o", "bias_z")) << ' ' << std::fabs(c.metric("o", "bias_z"))
         << '\n';
    ++rows;
  }
  if (rows == 0) return false;
  std::ostringstream gp;
  gp << "set terminal png size 1000,650 noenhanced\n"
     << "set title '|bias z| of O before and after each mitigation (3 = significance line)'\n"
     << "set style data histograms\nset style histogram clustered\nset style fill solid 0.6\n"
     << "set xtics rotate by -25\nset grid ytics\nset arrow from graph 0, first 3 to graph 1, "
        "first 3 nohead dt 2\n"
     << "plot " << quote((dir / "mitigation.dat").string())
     << " using 2:xtic(1) title 'before', '' using 3 title 'after'\n";
  return render(folders, "mitigation", data.str(), gp.str(), png);
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
  const limits::OutputFolder out(dir, /*create=*/false);
  const limits::OutputFolder work(out, "plots");
  const PlotFolders folders{work, out};
  fs::path png;
  if (deviation_plot(folders, records, png)) result.files.push_back(png);
  if (ratio_plot(folders, records, png)) result.files.push_back(png);
  if (site_plot(folders, records, png)) result.files.push_back(png);
  if (histogram_plot(folders, records, png)) result.files.push_back(png);
  if (mitigation_plot(folders, records, png)) result.files.push_back(png);
  return result;
}

}  // namespace simprec::reports
