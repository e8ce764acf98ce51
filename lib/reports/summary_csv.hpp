// DIR/summary.csv: one row per case, its parameters and the headline metrics of every output.
#pragma once

#include <filesystem>
#include <vector>

#include <nlohmann/json.hpp>

namespace simprec::reports {

void write_summary_csv(const std::vector<nlohmann::json>& records,
                       const std::filesystem::path& file);

}  // namespace simprec::reports
