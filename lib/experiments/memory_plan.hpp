// The memory bound of a run, checked for every case before any runs: by `simprec run` (also
// under --check) and by Python's run_experiment, so that both refuse the same experiment.
#pragma once

#include <vector>

#include "lib/experiments/experiment_spec.hpp"
#include "lib/experiments/runner.hpp"
#include "lib/limits/memory_bound.hpp"

namespace simprec::experiments {

// Throws std::invalid_argument ("case 3 (LABEL) needs an estimated X of memory, more than LIMIT
// (SOURCE)") for the first case whose estimate exceeds `limit`. Otherwise sets
// options.case_memory_bytes (the largest estimate) and options.memory_limit_bytes, from which
// the runner plans how many cases run at once.
void plan_case_memory(const std::vector<Case>& cases, const CaseBackend& backend,
                      const limits::MemoryLimit& limit, RunOptions& options);

}  // namespace simprec::experiments
