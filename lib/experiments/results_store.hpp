// DIR/results.jsonl: one self-describing JSON record per finished case, each appended with a
// single write and flushed to disk, so that an interrupted run loses at most the cases in
// flight; DIR/experiment.json says which experiment the folder belongs to.
#pragma once

#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lib/experiments/experiment_spec.hpp"

namespace simprec::experiments {

class ResultsStore {
 public:
  // Opens (or creates) `dir` for `spec`. Refuses, with std::runtime_error, a folder that holds
  // another experiment's results (or anything that is not a results folder) unless `force`;
  // with `force` the old results are moved aside to results.jsonl.previous and the run starts
  // afresh. Also refuses an unwritable folder.
  ResultsStore(std::filesystem::path dir, const ExperimentSpec& spec, bool force);
  ~ResultsStore();
  ResultsStore(const ResultsStore&) = delete;
  ResultsStore& operator=(const ResultsStore&) = delete;

  // Records already in the file, by case id (a torn last line, from a crash mid-write, is cut).
  const std::map<std::string, nlohmann::json>& finished() const { return finished_; }
  // Appends one record; safe to call from several threads.
  void append(const nlohmann::json& record);
  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
  std::map<std::string, nlohmann::json> finished_;
  std::mutex mutex_;
  int fd_ = -1;
};

// Every complete record of DIR/results.jsonl, in case order; throws std::runtime_error when the
// folder has no results.
std::vector<nlohmann::json> read_results(const std::filesystem::path& dir);

}  // namespace simprec::experiments
