// PNG plots of a run through gnuplot (Debian's gnuplot-nox), when it is installed.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace simprec::reports {

struct PlotResult {
  std::vector<std::filesystem::path> files;  // the PNGs made
  std::string note;                          // why some or all are missing
};

// deviation_vs_seq_len.png, flash_vs_baseline_vs_key_tiles.png, bias_explained_per_site.png,
// error_histograms.png, mitigation.png — each only where the results hold what it shows. Data
// and scripts go to DIR/plots/.
PlotResult make_plots(const std::filesystem::path& dir, const std::vector<nlohmann::json>& records);

}  // namespace simprec::reports
