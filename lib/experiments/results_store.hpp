// DIR/results.jsonl: one self-describing JSON record per finished case, each line checksummed
// (record_line.hpp) and appended with a single write flushed to disk, so that an interrupted run
// loses at most the cases in flight; DIR/experiment.json says which experiment the folder
// belongs to.
//
// A line that holds no usable record (damaged, edited by hand, of the wrong layout) is reported
// by its line number: every good record before and after it is kept, a run moves the line to
// DIR/results.jsonl.damaged, and only the cases without a good record run again. The folder is
// locked (flock on DIR/run.lock) while a run writes to it; a second run on the same folder is
// refused with the pid and host of the first. Every file of the folder is written through
// limits::OutputFolder: never through a symbolic link.
#pragma once

#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lib/experiments/experiment_spec.hpp"
#include "lib/limits/output_folder.hpp"

namespace simprec::experiments {

// A line of results.jsonl that holds no usable record.
struct SkippedLine {
  size_t line = 0;  // 1-based
  std::string reason;
  std::string text;  // the line as it was (empty for a torn last line)
};

struct ResultsFile {
  std::vector<nlohmann::json> records;  // good records, in file order, the first of each case id
  std::vector<std::string> good_lines;  // their lines, as written
  std::vector<SkippedLine> skipped;     // bad lines and later duplicates of a case id
};

// "skipped 2 lines of DIR/results.jsonl that hold no usable record: line 5 (not JSON), ..."
// (empty when none were skipped).
std::string skipped_lines_text(const std::filesystem::path& file,
                               const std::vector<SkippedLine>& skipped);

class ResultsStore {
 public:
  // Opens (or creates) `dir` for `spec`. Refuses, with std::runtime_error, a folder that holds
  // another experiment's results (or anything that is not a results folder) unless `force`;
  // with `force` the old results.jsonl and experiment.json are moved aside to the first free
  // pair of names results.jsonl.previous[.N], experiment.json.previous[.N] (no --force ever
  // replaces saved records) and the run starts afresh. Also refuses an unwritable folder, a
  // folder another run holds locked, and files of the folder that are symbolic links.
  ResultsStore(std::filesystem::path dir, const ExperimentSpec& spec, bool force);
  ~ResultsStore();
  ResultsStore(const ResultsStore&) = delete;
  ResultsStore& operator=(const ResultsStore&) = delete;

  // Records already in the file, by case id (a torn last line, from a crash mid-write, is cut).
  const std::map<std::string, nlohmann::json>& finished() const { return finished_; }
  // Lines of the existing file that were skipped (and moved to results.jsonl.damaged).
  const std::vector<SkippedLine>& skipped() const { return skipped_; }
  // ".previous" or ".previous.N" when --force moved earlier results aside; empty otherwise.
  const std::string& previous_suffix() const { return previous_suffix_; }
  // Appends one record; safe to call from several threads.
  void append(const nlohmann::json& record);
  const std::filesystem::path& dir() const { return dir_; }

 private:
  void open_locked(const ExperimentSpec& spec, bool force);

  std::filesystem::path dir_;
  limits::OutputFolder folder_;
  std::string previous_suffix_;
  std::map<std::string, nlohmann::json> finished_;
  std::vector<SkippedLine> skipped_;
  std::mutex mutex_;
  int fd_ = -1;
  int lock_fd_ = -1;
};

// Every good record of DIR/results.jsonl, in case order, and the lines skipped; throws
// std::runtime_error when the folder has no results.
ResultsFile read_results_file(const std::filesystem::path& dir);
// The records alone.
std::vector<nlohmann::json> read_results(const std::filesystem::path& dir);

}  // namespace simprec::experiments
