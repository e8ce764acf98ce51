// Why an attention output holds NaN or infinite values, read from the forward pass's row sums:
// a row whose exps all underflowed has l = 0 and O = 0/0; a row sum that overflowed or took a
// NaN score gives inf/inf or NaN. Reports (stats.json, experiment records and reports) name the
// cause with these counts.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "lib/attention/config.hpp"
#include "lib/attention/tensors.hpp"

namespace simprec::attention {

struct RowSumDiagnosis {
  int64_t rows = 0;      // query rows of the forward pass (B x H x Nq)
  int64_t zero = 0;      // rows whose row sum l is 0
  int64_t infinite = 0;  // rows whose l is infinite
  int64_t nan = 0;       // rows whose l is NaN
  // Rows whose l is positive but so small that 1/l overflows o_norm's format (flash attention
  // with norm=reciprocal, FlashAttention-2's epilogue): O is infinite, or NaN where O's sum is 0.
  int64_t reciprocal_overflow = 0;
  // One sentence naming the cause, e.g. "beta-rowmax's shift (beta = 3) underflowed the row sum
  // to 0 in 56 of 256 rows, whose O is 0/0 = NaN"; empty when every row sum is finite and
  // positive.
  std::string cause;
};

// From outputs.row_sum (empty: O was given, nothing to diagnose) and the configuration that
// computed it.
RowSumDiagnosis diagnose_row_sums(const AttentionOutputs& outputs, const AttentionConfig& config);

// {"rows", "zero", "infinite", "nan", "reciprocal_overflow", "cause"}.
nlohmann::json to_json(const RowSumDiagnosis& d);

}  // namespace simprec::attention
