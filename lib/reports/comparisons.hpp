// The pairings of cases that the report's verdict and its plots compare, computed once so that a
// plot shows the very numbers the verdict quotes.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lib/reports/result_view.hpp"

namespace simprec::reports {

// "`flash` (flash-lp, bf16, tile 64x64)": an implementation as the verdict names it.
std::string describe(const CaseView& c);

// The implementation named by analysis.baseline ("" when none is).
std::string baseline_name(const std::vector<nlohmann::json>& records);

// Each case beside the baseline case (analysis.baseline) it should be compared with: same input,
// format and causal flag, no mitigations or overrides on either side.
struct BaselinePair {
  const nlohmann::json* test;
  const nlohmann::json* baseline;
};
std::vector<BaselinePair> baseline_pairs(const std::vector<nlohmann::json>& records);

// Each case with mitigations (and an output O) beside the case that differs from it only by having
// none, in record order; cases without such a partner are left out.
struct MitigationPair {
  const nlohmann::json* mitigated;
  const nlohmann::json* unmitigated;
};
std::vector<MitigationPair> mitigation_pairs(const std::vector<nlohmann::json>& records);

// Paper B's comparison at one sequence length: O's RMS and max |error| over the baseline's on the
// same inputs, each the mean over the cases (seeds) run at that length, and the number of key
// tiles ceil(N / Bc) of the tile the cases ran with (0 when unknown).
struct BaselineRatio {
  long long seq_len = 0;
  long long key_tiles = 0;
  double rms = 0;
  double max_abs = 0;
  int cases = 0;
};
// Per configuration and input ("`flash` (flash-lp, bf16, tile 64x64) on normal"), its ratios in
// ascending N; a case whose RMS ratio is not finite is left out.
std::map<std::string, std::vector<BaselineRatio>> baseline_ratios(
    const std::vector<nlohmann::json>& records);

}  // namespace simprec::reports
