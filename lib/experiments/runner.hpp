// Running an experiment's cases in parallel into a results folder, resumably.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <vector>

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

// Runs every case not already in OUT/results.jsonl. Ctrl-C (SIGINT) or SIGTERM stops handing
// out cases and waits for those in flight; a second one abandons them. Records are written as
// cases finish; their content does not depend on the thread count.
RunSummary run_experiment(const ExperimentSpec& spec, const std::vector<Case>& cases,
                          const CaseBackend& backend, const RunOptions& options);

}  // namespace simprec::experiments
