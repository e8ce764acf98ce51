#include "lib/experiments/memory_plan.hpp"

#include <string>

namespace simprec::experiments {

void plan_case_memory(const std::vector<Case>& cases, const CaseBackend& backend,
                      const limits::MemoryLimit& limit, RunOptions& options) {
  limits::MemoryEstimate largest;
  for (const auto& c : cases) {
    const limits::MemoryEstimate estimate = backend.estimate_memory(c.params);
    limits::check_memory(estimate, limit,
                         "case " + std::to_string(c.index) + " (" + c.label() + ")");
    if (estimate.bytes() > largest.bytes()) largest = estimate;
  }
  options.case_memory_bytes = largest.bytes();
  options.memory_limit_bytes = limit.bytes;
}

}  // namespace simprec::experiments
