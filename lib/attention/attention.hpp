// Emulated attention, forward and backward: standard ("baseline") attention and
// FlashAttention-2 (query tiles Br x key/value tiles Bc, online softmax), rounding at the named
// sites of an AttentionConfig; and the double-precision reference computed on the same inputs.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "lib/attention/config.hpp"
#include "lib/tracing/site_trace.hpp"

namespace simprec::attention {

// Tensors are C-order (batch, heads, N, d); batch x heads independent problems.
struct AttentionShape {
  int64_t batch = 1, heads = 1;
  int64_t nq = 0, nk = 0;  // query and key/value sequence lengths
  int64_t d = 0;           // query/key head dimension
  int64_t dv = 0;          // value head dimension
  int64_t problems() const { return batch * heads; }
  bool operator==(const AttentionShape&) const = default;
};

struct AttentionInputs {
  AttentionShape shape;
  std::vector<double> q, k, v;  // (B,H,nq,d), (B,H,nk,d), (B,H,nk,dv)
  std::vector<double> d_out;    // (B,H,nq,dv); empty: forward only
  bool has_grad() const { return !d_out.empty(); }
  // Throws std::invalid_argument on sizes that disagree with the shape or non-finite values.
  void validate() const;
};

struct AttentionOutputs {
  std::vector<double> o;           // (B,H,nq,dv), values in the o_out format
  std::vector<double> lse;         // (B,H,nq), natural-log log-sum-exp of the scaled scores
  std::vector<double> dq, dk, dv;  // with d_out
  std::vector<double> delta;       // D per query row (backward only)
  std::array<tracing::SiteTrace, kSiteCount> traces{};  // filled when config.trace
};

double softmax_scale(const AttentionConfig& config, const AttentionShape& shape);

// The inputs as rounded at the `input` site (what both the emulation and the reference see).
AttentionInputs round_inputs(const AttentionInputs& inputs, const AttentionConfig& config);

// Runs the configured algorithm on `inputs` (rounded at the input site first). Parallel over
// batch x heads with config.threads threads; bit-identical for any thread count.
AttentionOutputs run_attention(const AttentionInputs& inputs, const AttentionConfig& config);

// Standard attention in double: scores and products by compensated dot products (twice the
// working precision, Ogita-Rump-Oishi Dot2), exp and log from libm. Its relative error is
// ~1e-16, far below any emulated format. `inputs` are used as given (round them first).
AttentionOutputs reference_attention(const AttentionInputs& inputs, double scale, bool causal,
                                     unsigned threads = 0);

}  // namespace simprec::attention
