// The tensors of attention problems: their shape, the inputs and the outputs, and the softmax
// scale of a shape. Shared by the site-by-site engine (attention.hpp) and the float fast path
// (float_flash.hpp), which otherwise know nothing of each other.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "lib/attention/config.hpp"
#include "lib/tracing/site_trace.hpp"

namespace simprec::attention {

// Tensors are C-order (batch, heads, N, d); batch x heads independent problems. K and V may
// have fewer heads (grouped-query attention): query head h reads key/value head
// h / (heads / kv_heads()).
struct AttentionShape {
  int64_t batch = 1, heads = 1;
  int64_t nq = 0, nk = 0;  // query and key/value sequence lengths
  int64_t d = 0;           // query/key head dimension
  int64_t dv = 0;          // value head dimension
  int64_t heads_kv = 0;    // key/value heads, a divisor of heads; 0: heads
  int64_t problems() const { return batch * heads; }
  int64_t kv_heads() const { return heads_kv > 0 ? heads_kv : heads; }
  int64_t kv_problems() const { return batch * kv_heads(); }
  bool grouped() const { return kv_heads() != heads; }
  bool operator==(const AttentionShape&) const = default;
};

struct AttentionInputs {
  AttentionShape shape;
  std::vector<double> q, k, v;  // (B,H,nq,d), (B,Hkv,nk,d), (B,Hkv,nk,dv)
  std::vector<double> d_out;    // (B,H,nq,dv); empty: forward only
  // A given forward pass, as a backward kernel receives it: O (B,H,nq,dv) and LSE (B,H,nq),
  // both or neither, only with d_out. When given, run_attention does not run the forward pass:
  // the flash backward takes D from dO o O and recomputes P from this LSE, and the outputs' o
  // and lse are these. Used as given (not rounded at input). Standard attention's backward
  // recomputes P from the scores and does not read them.
  std::vector<double> o, lse;
  bool has_grad() const { return !d_out.empty(); }
  bool has_forward() const { return !o.empty() || !lse.empty(); }
  // Throws std::invalid_argument on sizes that disagree with the shape.
  void validate() const;
};

struct AttentionOutputs {
  std::vector<double> o;           // (B,H,nq,dv), values in the o_out format
  std::vector<double> lse;         // (B,H,nq), natural-log log-sum-exp of the scaled scores
  std::vector<double> dq, dk, dv;  // with d_out; dK and dV (B,Hkv,nk,d|dv)
  std::vector<double> delta;       // D per query row (backward only)
  // (B,H,nq): the forward pass's final row sum l of each query row (before the output is
  // normalised by it; flash_state=normalised: the last l written back). 0 where every exp
  // underflowed, which makes the row's O NaN (0/0). Empty when O was given.
  std::vector<double> row_sum;
  std::array<tracing::SiteTrace, kSiteCount> traces{};  // filled when config.trace
  // Per supplied function, the arguments (device_key: bit patterns; sorted, unique) its table in
  // config.device_tables lacked; they were computed as without the table.
  DeviceMisses device_misses{};
};

// Throws std::invalid_argument when a dimension is below 1 or above kMaxDimension, or when a
// tensor's element count (B*H*N*d, B*H*Nq*Nk per problem scores) does not fit in 64 bits.
void check_shape(const AttentionShape& shape);
inline constexpr int64_t kMaxDimension = int64_t{1} << 31;

// The softmax scale a configuration asks for: its scale, or 1/sqrt(d) (before softmax_scale's
// rounding, which the engine applies).
double softmax_scale(const AttentionConfig& config, const AttentionShape& shape);

}  // namespace simprec::attention
