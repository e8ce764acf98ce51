// Running an experiment's cases in parallel into a results folder, resumably.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "lib/experiments/experiment_spec.hpp"

namespace simprec::experiments {

struct RunOptions {
  std::filesystem::path out;  // results folder
  bool force = false;         // replace another experiment's results
  bool quiet = false;
  unsigned threads = 0;  // 0: all cores
  // The memory bound: the largest estimate of one case (0: not estimated) and the limit; fewer
  // cases run at once where the limit would not hold them all.
  uint64_t case_memory_bytes = 0;
  uint64_t memory_limit_bytes = 0;
};

struct RunSummary {
  size_t total = 0, skipped = 0, ran = 0, failed = 0;
  bool interrupted = false;
};

// The other processes of a run shared among several (MPI ranks, lib/distributed/), as the
// process that keeps the results folder sees them.
class OtherProcesses {
 public:
  virtual ~OtherProcesses() = default;
  // Hands out cases from next_case() (an index into the run's case list; nullopt: none left)
  // to the other processes as they ask, passes each record they send to record(), and returns
  // once every one of them has finished. Runs on a thread of its own beside this process's
  // own cases.
  virtual void serve(const std::function<std::optional<size_t>()>& next_case,
                     const std::function<void(const nlohmann::json&)>& record) = 0;
  // Makes serve() return soon, from another thread, leaving the others waiting: for an error
  // in this process, after which the caller ends the whole run.
  virtual void stop() = 0;
};

// Runs every case not already in OUT/results.jsonl. Ctrl-C (SIGINT) or SIGTERM stops handing
// out cases and waits for those in flight; a second one abandons them. Records are written as
// cases finish; their content does not depend on the thread count. With `others`, the cases
// are shared with them and their records written here too.
RunSummary run_experiment(const ExperimentSpec& spec, const std::vector<Case>& cases,
                          const CaseBackend& backend, const RunOptions& options,
                          OtherProcesses* others = nullptr);

// A process that runs cases for another that keeps the results: runs the cases next_case()
// gives (an index into `cases`; nullopt: none left), as many at once as `options` allows, and
// hands each record to send(); both are called from several threads. Returns the number of
// cases run; stops early on SIGINT or SIGTERM as run_experiment does.
size_t run_cases_for_others(const ExperimentSpec& spec, const std::vector<Case>& cases,
                            const CaseBackend& backend, const RunOptions& options,
                            const std::function<std::optional<size_t>()>& next_case,
                            const std::function<void(const nlohmann::json&)>& send);

}  // namespace simprec::experiments
