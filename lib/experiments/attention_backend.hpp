// Runs experiment cases on the emulated attention (lib/attention): builds the inputs and the
// configuration a case names, runs it and the fp64 reference, and returns the metrics, the
// per-site traces and (when asked) the attribution of the bias to sites.
#pragma once

#include "lib/experiments/experiment_spec.hpp"

namespace simprec::experiments {

class AttentionBackend final : public CaseBackend {
 public:
  void check_input(const InputSpec& input) const override;
  void check_implementation(const ImplementationSpec& impl) const override;
  nlohmann::json run_case(const nlohmann::json& params, unsigned threads) const override;
  limits::MemoryEstimate estimate_memory(const nlohmann::json& params) const override;
};

}  // namespace simprec::experiments
