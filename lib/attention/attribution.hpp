// Which rounding sites cause the output bias: rerun with one site at a time made exact (fp64),
// and separately made unbiased (stochastic rounding in its own format), and rank the sites by
// how much of the output's mean signed error each one removes.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "lib/attention/attention.hpp"
#include "lib/metrics/error_metrics.hpp"

namespace simprec::attention {

struct SiteAttribution {
  Site site;
  double bias_without = 0;     // the target's bias with this site changed
  double bias_without_se = 0;  // its standard error across draws
  double explained = 0;        // bias_full - bias_without
  double fraction = 0;         // explained / bias_full
};

struct AttributionResult {
  std::string target;  // "o", "dq", "dk", "dv", "delta"
  double bias_full = 0, bias_full_se = 0;
  std::vector<SiteAttribution> exact;       // ranked, largest fraction first
  std::vector<SiteAttribution> stochastic;  // ranked; only sites in formats below fp64
  nlohmann::json to_json() const;
  std::string table() const;  // readable ranked table
};

// The tensor of `outputs` named by target ("o", "dq", "dk", "dv", "delta").
const std::vector<double>& output_tensor(const AttentionOutputs& outputs, std::string_view target);

// Sites considered: every site other than `input` that rounds (not fp64 nearest already), and
// for target "o" only forward sites. `reference` is reference_attention on the rounded inputs.
AttributionResult attribute_sites(const AttentionInputs& inputs, const AttentionConfig& config,
                                  const AttentionOutputs& reference, std::string_view target = "o",
                                  bool with_stochastic = true);

}  // namespace simprec::attention
