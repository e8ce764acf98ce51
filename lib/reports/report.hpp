// The end products of a run, rebuilt from DIR/results.jsonl alone: summary.csv, report.md (the
// tables a reader needs and a plain-language verdict) and PNG plots made with gnuplot.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace simprec::reports {

struct ReportFiles {
  std::filesystem::path csv, markdown;
  std::vector<std::filesystem::path> plots;
  std::string plot_note;  // why plots are missing, when they are
  // The lines of results.jsonl that hold no usable record, when there are any (also in report.md).
  std::string skipped_note;
};

// Reads DIR/results.jsonl and writes the report files into DIR.
ReportFiles write_report(const std::filesystem::path& dir);

// The verdict lines alone (also the top of report.md).
std::vector<std::string> verdict(const std::vector<nlohmann::json>& records);

}  // namespace simprec::reports
