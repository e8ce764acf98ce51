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
#include "lib/reports/comparisons.hpp"
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

// cairo's antialiased PNG; text as written (names hold underscores, which gnuplot's enhanced
// text would read as subscripts).
std::string terminal(int width, int height) {
  return "set terminal pngcairo size " + std::to_string(width) + "," + std::to_string(height) +
         " noenhanced font 'Sans,10'\n";
}

std::string number(double x) {
  std::ostringstream s;
  s.precision(6);
  s << x;
  return s.str();
}

// A y range that holds zero and [lo, hi], with a margin on the sides away from zero: bars
// start at zero, and the axis must show where that is.
std::string yrange_from_zero(double lo, double hi) {
  lo = std::min(lo, 0.0);
  hi = std::max(hi, 0.0);
  if (!(hi > lo)) hi = lo + 1;
  const double margin = 0.08 * (hi - lo);
  return "set yrange [" + number(lo < 0 ? lo - margin : 0.0) + ":" +
         number(hi > 0 ? hi + margin : 0.0) + "]\n";
}

// A value of a data file; "-" (read as missing: `set datafile missing '-'`) when not finite.
std::string value_or_missing(double x) {
  return std::isfinite(x) ? number(x) : "-";
}

// Tics at the given values only: the lengths or tile counts a sweep ran at.
std::string tics_at(const std::set<long long>& values) {
  std::string list;
  for (const long long v : values) list += (list.empty() ? "" : ", ") + std::to_string(v);
  return "(" + list + ")";
}

// Tics at 1, 2 and 5 times the powers of ten in [lo, hi] (lo > 0), at every multiple where the
// range spans less than two decades: a log axis with labels however narrow its range.
std::string log_tics(double lo, double hi) {
  const std::vector<double> multiples =
      hi < 100 * lo ? std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8, 9} : std::vector<double>{1, 2, 5};
  std::string list;
  for (int e = static_cast<int>(std::floor(std::log10(lo))); e <= std::ceil(std::log10(hi)); ++e) {
    for (const double m : multiples) {
      const double v = m * std::pow(10.0, e);
      if (v >= lo && v <= hi) list += (list.empty() ? "" : ", ") + number(v);
    }
  }
  return "(" + list + ")";
}

// A key entry for a reference line drawn with `set arrow` (which has none of its own).
std::string reference_key(const std::string& title) {
  return ", NaN with lines dt 2 lc 'black' title " + quote(title);
}

// Labels rotated under a bar chart reach past the last bar by about their length: the right
// margin (in characters) that keeps the longest inside the picture.
int right_margin_for(size_t longest_label) {
  return 4 + static_cast<int>(0.8 * static_cast<double>(longest_label));
}

// Mean RMS error of O against N, one line per implementation/format/tile/input.
bool deviation_plot(const PlotFolders& folders, const std::vector<nlohmann::json>& records,
                    fs::path& png) {
  const fs::path& dir = folders.work.path();
  std::map<std::string, std::map<long long, std::pair<double, int>>> series;
  for (const auto& r : records) {
    const CaseView c{r};
    const double rms = c.metric("o", "rms");
    if (!(rms > 0) || !std::isfinite(rms) || c.seq_len() <= 0) continue;
    auto& point = series[series_name(c) + " on " + c.input_name()][c.seq_len()];
    point.first += rms;
    point.second += 1;
  }
  // A line needs two lengths; configurations run at one length only have no place here.
  std::erase_if(series, [](const auto& entry) { return entry.second.size() < 2; });
  if (series.empty()) return false;
  std::ostringstream data;
  std::set<long long> lengths;
  double lo = INFINITY, hi = 0;
  for (const auto& [name, points] : series) {
    data << "\"" << name << "\"\n";
    for (const auto& [n, p] : points) {
      const double mean = p.first / p.second;
      data << n << ' ' << number(mean) << '\n';
      lengths.insert(n);
      lo = std::min(lo, mean);
      hi = std::max(hi, mean);
    }
    data << "\n\n";
  }
  std::ostringstream gp;
  gp << terminal(1000, 650) << "set title 'RMS error of O against the fp64 reference'\n"
     << "set xlabel 'sequence length N (keys)'\nset ylabel 'RMS of O - O_ref (units of V)'\n"
     << "set logscale xy\nset xrange [" << number(*lengths.begin() / 1.2) << ":"
     << number(*lengths.rbegin() * 1.2) << "]\nset xtics " << tics_at(lengths) << "\n"
     << "set yrange [" << number(lo / 1.3) << ":" << number(hi * 1.3) << "]\nset ytics "
     << log_tics(lo / 1.3, hi * 1.3) << "\nset key outside top center horizontal\nset grid\n"
     << "plot for [i=0:" << series.size() - 1 << "] "
     << quote((dir / "deviation_vs_seq_len.dat").string())
     << " index i using 1:2 with linespoints lw 1.5 title columnheader(1)\n";
  return render(folders, "deviation_vs_seq_len", data.str(), gp.str(), png);
}

// Paper B's Fig. 5: each flash configuration's error of O over its baseline's on the same inputs
// against the number of key tiles ceil(N / Bc), one line per configuration and input: the RMS
// ratio the verdict quotes on the left, paper B's max |error| ratio on the right, on one scale.
bool ratio_plot(const PlotFolders& folders, const std::vector<nlohmann::json>& records,
                fs::path& png) {
  const fs::path& dir = folders.work.path();
  std::ostringstream data;
  size_t blocks = 0;
  double hi = 1;  // the baseline's level is always in view
  std::set<long long> tiles;
  for (const auto& [name, ratios] : baseline_ratios(records)) {
    std::vector<const BaselineRatio*> points;
    for (const auto& r : ratios) {
      if (r.key_tiles > 0 && std::isfinite(r.max_abs)) points.push_back(&r);
    }
    if (points.size() < 2) continue;  // a line needs two lengths
    data << "\"" << name << "\"\n";
    for (const auto* r : points) {
      data << r->key_tiles << ' ' << r->seq_len << ' ' << number(r->rms) << ' '
           << number(r->max_abs) << '\n';
      hi = std::max({hi, r->rms, r->max_abs});
      tiles.insert(r->key_tiles);
    }
    data << "\n\n";
    ++blocks;
  }
  if (blocks == 0) return false;
  const std::string stem = "flash_vs_baseline_vs_key_tiles";
  const std::string file = quote((dir / (stem + ".dat")).string());
  std::ostringstream gp;
  gp << terminal(1200, 600) << "# columns: key tiles, N, RMS ratio, max |error| ratio\n"
     << "set multiplot title 'Error of O of flash over the baseline on the same inputs and "
        "format'\n"
     << "set logscale x 2\nset xrange [" << number(*tiles.begin() / 1.3) << ":"
     << number(*tiles.rbegin() * 1.3) << "]\nset xtics " << tics_at(tiles) << "\n"
     << yrange_from_zero(0, hi) << "set grid\nset xlabel 'key tiles ceil(N / Bc)'\n"
     << "set ylabel 'flash / baseline'\nset tmargin at screen 0.86\nset bmargin at screen 0.3\n"
     << "set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead dt 2 lc 'black'\n"
     << "set key at screen 0.5, 0.12 center center horizontal maxrows 3\n"
     << "set lmargin at screen 0.07\nset rmargin at screen 0.48\n"
     << "set title 'RMS |O - O_ref| ratio (the verdict quotes it)'\n"
     << "plot for [i=0:" << blocks - 1 << "] " << file
     << " index i using 1:3 with linespoints lw 1.5 title columnheader(1)"
     << reference_key("1: as accurate as the baseline") << "\n"
     << "unset key\nset lmargin at screen 0.57\nset rmargin at screen 0.98\n"
     << "set title 'max |O - O_ref| ratio (paper B, Fig. 5)'\n"
     << "plot for [i=0:" << blocks - 1 << "] " << file
     << " index i using 1:4 with linespoints lw 1.5 notitle\nunset multiplot\n";
  return render(folders, stem, data.str(), gp.str(), png);
}

// For the cases with attribution and the most significant bias of O (the ones the verdict names
// sites for): the share of that bias each site explains when made exact and when rounded
// stochastically, the two shares the verdict quotes.
bool site_plot(const PlotFolders& folders, const std::vector<nlohmann::json>& records,
               fs::path& png) {
  const fs::path& dir = folders.work.path();
  std::ostringstream data;
  std::vector<std::string> titles;
  std::vector<double> lows, highs;
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
    if (!a->contains("sites") || (*a)["sites"].empty() || titles.size() >= 4) continue;
    titles.push_back(series_name(c) + " on " + c.input_name() + ", N = " +
                     std::to_string(c.seq_len()) + ": bias of " + a->value("output", "o") +
                     " as configured, z = " + fmt(number_in(*a, "bias_z"), 3));
    double lo = 0, hi = 0;
    for (const auto& s : (*a)["sites"]) {
      const double exact = 100 * number_in(s, "explained_exact");
      const double sr = 100 * number_in(s, "explained_sr");
      data << "\"" << s.value("site", "?") << "\" " << value_or_missing(exact) << ' '
           << value_or_missing(sr) << '\n';
      for (const double x : {exact, sr}) {
        if (std::isfinite(x)) lo = std::min(lo, x), hi = std::max(hi, x);
      }
    }
    lows.push_back(lo);
    highs.push_back(std::max(hi, 10.0));  // the verdict's threshold stays in view
    data << "\n\n";
  }
  if (titles.empty()) return false;
  const int blocks = static_cast<int>(titles.size());
  const std::string stem = "bias_explained_per_site";
  std::ostringstream gp;
  gp << terminal(1000, 380 * blocks)
     << "# columns: site, % of the bias explained when made exact, when rounded stochastically\n"
     << "set datafile missing '-'\nset multiplot layout " << blocks << ",1\n"
     << "set style data histograms\nset style histogram clustered gap 1\n"
     << "set style fill solid 0.7 border -1\nset boxwidth 0.9\nset grid ytics\n"
     << "set xtics rotate by -30 left\nset key outside top center horizontal\n"
     << "set ylabel 'share of the bias explained (%)'\n"
     << "set arrow 1 from graph 0, first 10 to graph 1, first 10 nohead dt 2 lc 'black'\n";
  for (int i = 0; i < blocks; ++i) {
    gp << "set title " << quote(titles[i]) << "\n"
       << yrange_from_zero(lows[i], highs[i]) << "plot " << quote((dir / (stem + ".dat")).string())
       << " index " << i << " using 2:xtic(1) title 'site made exact', '' index " << i
       << " using 3 title 'site rounded stochastically'"
       << reference_key("10%: the least the verdict names") << "\n";
  }
  gp << "unset multiplot\n";
  return render(folders, stem, data.str(), gp.str(), png);
}

// ULP-error histograms of O for the first case of each implementation.
bool histogram_plot(const PlotFolders& folders, const std::vector<nlohmann::json>& records,
                    fs::path& png) {
  const fs::path& dir = folders.work.path();
  std::ostringstream data;
  std::set<std::string> done;
  int blocks = 0, lowest = 0, highest = 0;
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
    if (bins.empty()) continue;
    lowest = std::min(lowest, bins.begin()->first);
    highest = std::max(highest, bins.rbegin()->first);
    data << "\"" << name << "\"\n";
    for (const auto& [b, n] : bins) data << b << ' ' << n / total << '\n';
    data << "\n\n";
    ++blocks;
  }
  if (blocks == 0) return false;
  // Whole ulps only, and few enough labels to stay apart.
  const int step = std::max(1, (highest - lowest + 15) / 16);
  std::ostringstream gp;
  gp << terminal(1000, 650) << "set title 'Error of O in ulps of the output format'\n"
     << "set xlabel 'error of O (ulps of the output format)'\n"
     << "set ylabel 'share of the elements of O'\nset logscale y\nset format y '%.0e'\n"
     << "set xrange [" << lowest - 0.5 << ":" << highest + 0.5 << "]\nset xtics " << step
     << "\nset key outside top center horizontal\nset grid\n"
     << "plot for [i=0:" << blocks - 1 << "] " << quote((dir / "error_histograms.dat").string())
     << " index i using 1:2 with linespoints lw 1.5 title columnheader(1)\n";
  return render(folders, "error_histograms", data.str(), gp.str(), png);
}

// |bias z| of O without and with each mitigation, for cases that differ only in mitigations.
bool mitigation_plot(const PlotFolders& folders, const std::vector<nlohmann::json>& records,
                     fs::path& png) {
  const fs::path& dir = folders.work.path();
  const auto pairs = mitigation_pairs(records);
  if (pairs.empty()) return false;
  // The inputs, named once in the title when every bar shares them.
  std::set<std::string> inputs;
  for (const auto& pair : pairs) {
    const CaseView c{*pair.mitigated};
    inputs.insert(c.input_name() + ", N = " + std::to_string(c.seq_len()));
  }
  const bool one_input = inputs.size() == 1;
  std::ostringstream data;
  size_t longest = 0;
  double hi = 3;  // the significance line stays in view
  for (const auto& [mitigated, unmitigated] : pairs) {
    const CaseView c{*mitigated}, before{*unmitigated};
    const double z_before = std::fabs(before.metric("o", "bias_z"));
    const double z_after = std::fabs(c.metric("o", "bias_z"));
    std::string label = c.preset() + " " + c.format() + " +" + c.mitigations();
    if (!one_input) label += " (" + c.input_name() + " N=" + std::to_string(c.seq_len()) + ")";
    longest = std::max(longest, label.size());
    data << quote(label) << ' ' << value_or_missing(z_before) << ' ' << value_or_missing(z_after)
         << '\n';
    for (const double z : {z_before, z_after}) {
      if (std::isfinite(z)) hi = std::max(hi, z);
    }
  }
  std::ostringstream gp;
  gp << terminal(1000, 650) << "set title "
     << quote("|bias z| of O before and after each mitigation" +
              (one_input ? " on " + *inputs.begin() : std::string()))
     << "\nset datafile missing '-'\nset style data histograms\nset style histogram clustered\n"
     << "set style fill solid 0.7 border -1\nset xtics rotate by -30 left\nset grid ytics\n"
     << "set ylabel '|bias z| of O (standard errors)'\nset key outside top center horizontal\n"
     << "set rmargin " << right_margin_for(longest) << "\n"
     << yrange_from_zero(0, hi)
     << "set arrow 1 from graph 0, first 3 to graph 1, first 3 nohead dt 2 lc 'black'\n"
     << "plot " << quote((dir / "mitigation.dat").string())
     << " using 2:xtic(1) title 'before', '' using 3 title 'after'"
     << reference_key("3: significant") << "\n";
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
