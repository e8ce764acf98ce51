// What an emulated attention run computes: the strategy in every slot of its numerics
// (strategy.hpp), its parameters, a rounding specification for every named site, and the
// mitigations. Kernel models build these (model.hpp); `--set` and `--mitigation` edit them.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "lib/attention/device_function.hpp"
#include "lib/attention/masking.hpp"
#include "lib/attention/site.hpp"
#include "lib/attention/strategies/backward.hpp"
#include "lib/attention/strategies/block_mask.hpp"
#include "lib/attention/strategies/delta_sum.hpp"
#include "lib/attention/strategies/device_math.hpp"
#include "lib/attention/strategies/exp_impl.hpp"
#include "lib/attention/strategies/flex_compile.hpp"
#include "lib/attention/strategies/grad_scale.hpp"
#include "lib/attention/strategies/key_order.hpp"
#include "lib/attention/strategies/kv_group_sum.hpp"
#include "lib/attention/strategies/lse_impl.hpp"
#include "lib/attention/strategies/norm.hpp"
#include "lib/attention/strategies/passes.hpp"
#include "lib/attention/strategies/query_order.hpp"
#include "lib/attention/strategies/rescale.hpp"
#include "lib/attention/strategies/rowsum_block.hpp"
#include "lib/attention/strategies/rowsum_rescale.hpp"
#include "lib/attention/strategies/softmax_scale.hpp"
#include "lib/attention/strategies/tiling.hpp"
#include "lib/attention/strategy.hpp"

namespace simprec::attention {

// The arithmetic of beta-rowmax's threshold and shifted max (lib/attention/beta_rowmax.hpp).
enum class BetaArithmetic : uint8_t {
  kFp64,  // t = RN64(r_m - eps/scale), shifted max RN64(beta * r_m)
  kFp32,  // the GPU kernels': e = fp32(eps/scale), t = fp32(r_m - e), fp32(fp32(beta) * r_m)
};
std::string_view to_string(BetaArithmetic a);

// Paper A's mitigation: when the block's row max r_m of the scaled scores is repeated within eps
// (a score s counts when scale*s >= scale*r_m - eps), subtract beta*r_m (r_m > 0) or 0 (r_m < 0)
// instead of r_m.
struct BetaRowmax {
  bool enabled = false;
  double beta = 2.0;
  double eps = 1e-3;
  BetaArithmetic arithmetic = BetaArithmetic::kFp64;
};

// The granularity of a quantisation scale (lib/attention/input_quantization.hpp): one scale for
// the whole tensor (every batch and head), one per problem (batch x head: FlashAttention-3's
// descale factors), one per block of rows (Q: block_rows query rows, K: block_cols keys), or one
// per channel (a column of V over every key, SageAttention2).
enum class QuantScale : uint8_t { kTensor, kHead, kBlock, kChannel };

// Q, K and V quantised after the input site, each group of values with its own fp32 scale from
// its largest magnitude (docs/fp8_attention.md, "Scaled inputs"). qk: the element format of Q and
// K (none: not quantised), or int8 (SageAttention's symmetric INT8); v: V's element format.
struct InputQuantization {
  std::optional<Format> qk;
  bool qk_int8 = false;
  QuantScale qk_scale = QuantScale::kHead;
  std::optional<Format> v;
  QuantScale v_scale = QuantScale::kHead;
  bool k_smooth = false;  // K minus its per-channel mean over the keys first (SageAttention)
  bool quantizes_qk() const { return qk.has_value() || qk_int8; }
  bool active() const { return quantizes_qk() || v.has_value() || k_smooth; }
};

struct AttentionConfig {
  std::string preset = "fp64";
  Format low_precision = formats::fp64;  // the preset's format parameter; also the I/O format
  // The strategy in each slot (lib/attention/strategies/: `simprec numerics --list` lists them
  // with what each computes); a default-constructed configuration holds each slot's default.
  Choice<Algorithm> algorithm;
  Choice<ExpArg> exp_impl;
  Choice<PvMode> pv_mode;
  Choice<Norm> norm;
  Choice<DeltaMode> delta;
  Choice<Rescale> rescale;
  Choice<Lse> lse_impl;
  // The backward pass's exp implementation; unset: the forward pass's.
  std::optional<Choice<ExpArg>> bwd_exp_impl;
  Choice<DeltaSum> delta_sum;
  Choice<QueryOrder> query_order;
  Choice<SplitTies> split_ties;
  Choice<DqMode> dq;
  Choice<GradScale> grad_scale;
  Choice<KvGroupSum> kv_group_sum;
  Choice<DsProb> ds_p;
  Choice<LseLog2e> lse_log2e;
  Choice<DeviceMath> device_math;
  Choice<SoftmaxScale> softmax_scale;
  // Flash attention's row sum l as this many partial sums (1 or 4). With 4, column j of a key
  // block (j counted from the block's first column) goes to partial (j % 8) / 2, the mma.sync
  // accumulator layout of a thread quad; each partial is rescaled by alpha and adds its block
  // terms in column order at rowsum; at the end l = (l0 + l2) + (l1 + l3), each sum rounded at
  // rowsum (the quad's butterfly all-reduce). Standard attention ignores it.
  int rowsum_lanes = 1;
  Choice<RowSum> rowsum_block;
  Choice<RowsumRescale> rowsum_rescale;
  // Two-level P.V accumulation (flash, pv_mode fused, forward pass): 0 keeps one accumulator,
  // chained at pv_acc across every key block. K > 0 starts the pv_acc chain from zero every K
  // key blocks and adds each finished chain to a second accumulator at o_update (the promotion
  // of FP8 tensor-core partial sums to fp32 registers, DeepSeek-V3 section 3.3.2); both are
  // rescaled by alpha when the max grows.
  int pv_promote_blocks = 0;
  // P times this power of two before the cast at p_cast, and O divided by it (exactly) before
  // the normalisation: FP8 kernels scale P in [0, 1] into e4m3's range (forward pass only).
  double p_scale = 1.0;
  // FlashAttention-4's lazy rescaling (flash, forward pass): while a key block raises a row's
  // max by at most this many log2 units, (m_new - m_used) * scale * log2(e) <= threshold in
  // exact arithmetic, the row keeps the max it uses (m_used) and nothing is rescaled, so P may
  // exceed 1 (up to 2^threshold). 0: rescale whenever the max grows.
  double lazy_rescale = 0.0;
  InputQuantization quant;
  // rowsum_block=quad-fma over this many warps (1 or 2): with 2, warp w holds the key block's
  // columns j with (j / 8) % 2 == w (an mma.sync layout with two warps along the keys), each warp's
  // lanes are combined as with one, and the block sum is W0 + W1.
  int rowsum_warps = 1;
  Choice<BlockMask> block_mask;
  Choice<FlexCompile> flex_compile;
  // The lengths and head dimension (Sq, Sk, d) a torch.compile graph was first compiled for
  // (flex_compile=automatic-dynamic); zeros: the run's own, as for a graph's first call.
  std::array<int64_t, 3> compiled_for{};
  Choice<TileRule> tile_rule;
  std::array<SiteSpec, kSiteCount> sites{};
  int block_rows = 64;  // Br (0 with block_cols 0: the dispatch's tile)
  int block_cols = 64;  // Bc
  Choice<FlashState> flash_state;
  // > 0: the tile comes from FlashAttention-1's rule for an SRAM of this many elements and the
  // head dimension (block_order; with_sram_tile), replacing block_rows and block_cols.
  int64_t sram = 0;
  Choice<BlockOrder> block_order;
  // The flash backward pass's tile; 0: the dispatch's, or the forward tile without one.
  int bwd_block_rows = 0;
  int bwd_block_cols = 0;
  Choice<KeyOrder> key_order;
  Choice<Dispatch> dispatch;
  // The forward pass's key/value splits (FlashAttention-2's split-KV kernel: each split runs
  // the online softmax over its share of the key blocks and writes O and LSE in fp32, a combine
  // kernel merges them; lib/attention/dispatch.hpp). 0: the dispatch's heuristic.
  int kv_splits = 1;
  // The whole problem's batch x heads and the GPU's multiprocessors, which the dispatch weighs
  // (a run may emulate a few heads of a larger batch); batch_heads 0: the run's own B*H.
  int batch_heads = 0;
  int sms = 132;
  bool causal = false;
  // Masks, biases and score modifications beyond the top-left causal mask (masking.hpp).
  Masking masking;
  std::optional<double> scale;  // default 1/sqrt(d)
  BetaRowmax beta_rowmax;
  std::vector<std::string> mitigations;  // as given, for reports
  std::vector<std::string> overrides;    // as given, for reports
  uint64_t seed = 0;                     // random streams of stochastic rounding
  // Stochastic rounding at p_cast draws its bits from tiled_random::p_draw(seed, problem, row,
  // column, bits) (emulation/tiled_random.hpp, the layout the CUDA kernels use) instead of the
  // site's random stream; the bit count must divide 32.
  bool tiled_random = false;
  // Values of the functions the caller supplies (device_function.hpp: fp32 argument bits ->
  // fp32 result bits), one table per function. Where a function's table is set, that function
  // of an fp32 argument at an fp32 round-to-nearest-even site is looked up there before
  // device_math's (exp2 where the exponent is in base 2); an argument the table lacks is
  // computed as without the table and reported in AttentionOutputs::device_misses
  // (run_attention_with_device_functions fills the tables from those).
  DeviceFunctionTables device_tables{};
  unsigned threads = 0;  // 0: hardware concurrency
  bool trace = false;    // collect per-site rounding statistics

  SiteSpec& site(Site s) { return sites[static_cast<int>(s)]; }
  const SiteSpec& site(Site s) const { return sites[static_cast<int>(s)]; }
  bool flash() const { return algorithm->flash(); }
  // The backward pass's exp implementation.
  const ExpArg& backward_exp() const { return bwd_exp_impl ? **bwd_exp_impl : *exp_impl; }
};

// "SITE=FORMAT:ROUNDING[:ACCUMULATION]", "GROUP=..." for a group of sites (site.hpp), or
// "OPTION=VALUE" for a slot's strategy or a parameter (options.hpp). Throws
// std::invalid_argument on unknown sites, options, strategies, formats, modes or accumulation
// models.
void apply_override(AttentionConfig& config, std::string_view assignment);
// The same without recording the assignment in config.overrides (a kernel model's own).
void apply_assignment(AttentionConfig& config, std::string_view assignment);

// "beta-rowmax[:beta[:eps]]", "sr-p[:bits]", "sr-p-tiled[:bits]" (sr-p with tiled_random),
// "sr-o[:bits]", "hp:SITE[:FORMAT]", "delta-dpp" (D from rowsum(dP o P)). Throws
// std::invalid_argument on unknown names.
void apply_mitigation(AttentionConfig& config, std::string_view text);

// Every site made exact (fp64, nearest, sequential in double) except the input site.
void make_site_exact(AttentionConfig& config, Site site);
// The site rounded stochastically in its own format.
void make_site_stochastic(AttentionConfig& config, Site site, int bits = 32);

nlohmann::json to_json(const AttentionConfig& config);

// The configuration with block_rows and block_cols from FlashAttention-1's rule when sram > 0
// (BlockOrder), for head dimension d; unchanged otherwise. Throws std::invalid_argument when a
// tile size falls outside [1, 65536].
AttentionConfig with_sram_tile(const AttentionConfig& config, int64_t d);

}  // namespace simprec::attention
