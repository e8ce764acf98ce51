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
  // A given forward pass, as a backward kernel receives it: O (B,H,nq,dv) and LSE (B,H,nq),
  // both or neither, only with d_out. When given, run_attention does not run the forward pass:
  // the flash backward takes D from dO o O and recomputes P from this LSE, and the outputs' o
  // and lse are these. Used as given (not rounded at input). Standard attention's backward
  // recomputes P from the scores and does not read them.
  std::vector<double> o, lse;
  bool has_grad() const { return !d_out.empty(); }
  bool has_forward() const { return !o.empty() || !lse.empty(); }
  // Throws std::invalid_argument on sizes that disagree with the shape or non-finite values.
  void validate() const;
};

struct AttentionOutputs {
  std::vector<double> o;           // (B,H,nq,dv), values in the o_out format
  std::vector<double> lse;         // (B,H,nq), natural-log log-sum-exp of the scaled scores
  std::vector<double> dq, dk, dv;  // with d_out
  std::vector<double> delta;       // D per query row (backward only)
  std::array<tracing::SiteTrace, kSiteCount> traces{};  // filled when config.trace
  // The fp32 arguments (bit patterns, sorted, unique) whose exp2 config.exp2_table lacked;
  // their exp2 was rounded at the site instead.
  std::vector<uint32_t> exp2_misses;
};

double softmax_scale(const AttentionConfig& config, const AttentionShape& shape);

// The inputs as rounded at the `input` site (what both the emulation and the reference see).
AttentionInputs round_inputs(const AttentionInputs& inputs, const AttentionConfig& config);

// How run_attention may compute: kAllowed takes the float fast path (float_flash.hpp) for the
// configurations it computes bit-identically (the fp32 preset); kSiteBySite rounds site by site
// everywhere, for tests of that fast path.
enum class FastPath : uint8_t { kAllowed, kSiteBySite };

// Runs the configured algorithm on `inputs` (rounded at the input site first). Parallel over
// batch x heads with config.threads threads; bit-identical for any thread count.
AttentionOutputs run_attention(const AttentionInputs& inputs, const AttentionConfig& config,
                               FastPath fast_path = FastPath::kAllowed);

// run_attention with the device's exp2: runs, evaluates the arguments the table lacked in one
// call of `exp2`, adds them to a copy of config.exp2_table (or a new table) and runs again until
// a run misses nothing (the forward pass needs 2 runs; a backward pass that recomputes the LSE
// 3, since its arguments depend on exp2 values through the LSE). Throws std::runtime_error when
// `exp2` answers with the wrong count or after max_runs runs that still miss arguments.
AttentionOutputs run_attention_with_device_function(const AttentionInputs& inputs,
                                                    const AttentionConfig& config,
                                                    const DeviceFunction& exp2, int max_runs = 8);

// Standard attention in double: scores and products by compensated dot products (twice the
// working precision, Ogita-Rump-Oishi Dot2), exp and log from libm. Its relative error is
// ~1e-16, far below any emulated format. `inputs` are used as given (round them first).
AttentionOutputs reference_attention(const AttentionInputs& inputs, double scale, bool causal,
                                     unsigned threads = 0);

}  // namespace simprec::attention
