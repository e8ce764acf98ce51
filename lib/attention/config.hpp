// What an emulated attention run computes: the algorithm, its structural choices, a rounding
// specification for every named site, and the mitigations. Presets build these (preset.hpp);
// `--set` and `--mitigation` edit them.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "lib/attention/device_function.hpp"
#include "lib/attention/site.hpp"

namespace simprec::attention {

enum class Algorithm : uint8_t { kStandard, kFlash };

// How P is computed from the scores S (m the row max, scale the softmax scale):
//   kExact:  P = exp(scale*(S - m)), argument in double, exp correctly rounded (elementary.hpp)
//   kNatural: a = round(S*scale) - round(m*scale), both rounded at exp_arg; P = exp(a)
//            (PyTorch math and paper A; the max element gives exactly 1)
//   kExp2Fma: c = fp32(scale*log2 e); a = fma(S, c, -round(m*c)), one rounding; P = exp2(a)
//            (FlashAttention-2 upstream; the max element need not give exactly 1)
//   kExp2:   a = round(S*c) - round(m*c), two roundings; P = exp2(a) (PyTorch's vendored FA2)
enum class ExpImpl : uint8_t { kExact, kNatural, kExp2Fma, kExp2 };

// kFused: O accumulates across key/value blocks in the pv_acc accumulator (FA2).
// kPerBlock: each block's P.V is rounded at pv_acc, then added to O at o_update (paper A).
enum class PvMode : uint8_t { kFused, kPerBlock };

// Flash attention's final normalisation at o_norm: kReciprocal rounds 1/l, then O*(1/l) (FA2);
// kDivide rounds O/l once (PyTorch's oc.div_(l) in paper A's reference).
enum class NormMode : uint8_t { kReciprocal, kDivide };

// How flash attention computes alpha, the factor that rescales O and l when the row max grows:
//   kExact:     alpha = exp(scale*(m_old - m_new)), rounded once at o_rescale
//   kExp2Shift: alpha = exp2(round(shift_old - shift_new)), the difference of the two exponent
//               shifts round(m*c) rounded at o_rescale, then exp2 rounded at o_rescale (or the
//               device's exp2, see exp2_table): what a kernel computing exp2f(shift_old -
//               shift_new) does. Needs exp_impl exp2-fma or exp2.
//   kExp2Diff:  alpha = exp2(round(round(m_old - m_new) * c)), the difference of the raw maxima
//               and its product with c each rounded at o_rescale, then exp2 at o_rescale: what
//               FlashAttention-2's softmax_rescale_o computes. Needs exp_impl exp2-fma or exp2.
enum class RescaleImpl : uint8_t { kExact, kExp2Shift, kExp2Diff };

// How a key block's P enters flash attention's row sum l (rowsum_lanes = 1 only): kRunning adds
// the block's columns to l in order; kWarpGroups sums each group of 32 columns in 4 lanes from
// zero (lane t: columns j with (j % 8) / 2 == t), combines them (l0 + l1) + (l2 + l3) and adds the
// groups to l in order (the memory-efficient kernel's iterative_softmax).
enum class RowsumBlock : uint8_t { kRunning, kWarpGroups };

// How flash attention's forward pass forms the LSE from the row max m and the row sum l, each
// rounding at lse:
//   kExact:        round(m*scale + log l) (log in double).
//   kFmaLog:       round(m*scale + round(log l)): FlashAttention-2's fma(m, scale, __logf(l)).
//   kShiftDivLog2e: round(round(shift / log2e') + round(log l)) with shift = round(m*c) the exp2
//                  shift and log2e' = log2(e) rounded at exp_arg: the memory-efficient kernel's
//                  mi / kLog2e + logf(s_prime). Needs an exp2 exp_impl (else kExact).
// The device's __logf and logf are approximations; log here is libm's, rounded at lse.
enum class LseImpl : uint8_t { kExact, kFmaLog, kShiftDivLog2e };

std::string_view to_string(Algorithm a);
std::string_view to_string(ExpImpl e);
std::string_view to_string(PvMode m);
std::string_view to_string(RescaleImpl r);
ExpImpl parse_exp_impl(std::string_view text);
Algorithm parse_algorithm(std::string_view text);

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

// How D = rowsum(dO o O) is formed in the flash backward pass; kFromDpP uses rowsum(dP o P),
// the variant paper A found stable (standard attention always uses it, as autograd does).
enum class DeltaMode : uint8_t { kFromOutput, kFromDpP };

// The order in which a flash backward kernel adds the products of D = rowsum(dO o O), each
// addition rounded at d (kFromOutput only):
//   kSequential: one dot product over the row in column order (d's accumulation model).
//   kFa2:        FlashAttention-2's dot_do_o: T = G/8 threads per row, G = 64 when dv is a
//                multiple of 64, else 32 (the backward traits' kBlockKSmem); thread t sums, in
//                column order from zero, the chunks of 8 columns c with c % T == t; then a
//                butterfly all-reduce with offsets T/2, ..., 1.
//   kMemEff:     the memory-efficient kernel's computeDelta: T = Bc/32 threads per row (its
//                128 threads per 64 queries at 64x64 tiles), chunks of 8 columns (1 when dv is not
//                a multiple of 8) dealt out the same way; the butterfly's offsets are 1, ..., T/2.
enum class DeltaSum : uint8_t { kSequential, kFa2, kMemEff };

// The order of the flash backward pass over (key/value block, query block) pairs, which fixes the
// order in which dK and dV accumulate over query blocks and dQ over key blocks:
//   kAscending:  each key block takes the query blocks in increasing order (dQ of a query block
//                sees the key blocks in increasing order).
//   kDescending: each key block takes the query blocks from the last to the first
//                (FlashAttention-2's compute_dq_dk_dv_1colblock).
//   kSplitKeys:  the memory-efficient kernel with split keys: the thread block of key block s
//                starts at query block s (mod the number of query blocks) and wraps around; dQ of a
//                query block sees the key blocks in the order the blocks reach it (key block s at
//                step (i - s) mod n, ties by s). Causal masks start every key block at its first
//                visible query block. With B*H >= 256 and Nk <= 2*Bc PyTorch's heuristic runs one
//                split, and run_attention takes kAscending, as that kernel does.
enum class QueryOrder : uint8_t { kAscending, kDescending, kSplitKeys };

// How dQ accumulates across key blocks: kChained continues the dq_acc product chain from the
// previous key block's accumulator; kBlockPartials chains each key block's product from zero and
// adds it to dQ with one rounding at dq_acc's format (FlashAttention-2's fp32 atomicAdd into
// dq_accum, in key-block order: the kernel's own order is nondeterministic).
enum class DqMode : uint8_t { kChained, kBlockPartials };

// Where the softmax scale enters the gradients dQ and dK:
//   kExactProduct: grad_out rounds scale*acc once.
//   kFp32ThenCast: acc*scale rounded at the accumulator's site (dq_acc, dk_acc), then cast at
//                  grad_out (FlashAttention-2's epilogues and convert_dQ).
//   kScaleDs:      dS*scale rounded at ds before the cast at ds_cast; the accumulators are cast
//                  unscaled (the memory-efficient kernel).
enum class GradScale : uint8_t { kExactProduct, kFp32ThenCast, kScaleDs };

// The P that dS = P o (dP - D) multiplies: kExp, P as rounded at exp (FlashAttention-2's fp32
// scores); kCast, P as cast at p_cast_bwd (the memory-efficient kernel keeps P in F).
enum class DsProb : uint8_t { kExp, kCast };

// How the backward pass of an exp2 exp_impl turns the LSE into its shift: kExact rounds the
// exact lse*log2(e) at exp_arg; kFp32Log2e multiplies by log2(e) rounded at exp_arg first
// (FlashAttention-2: lse * float(M_LOG2E)).
enum class LseLog2e : uint8_t { kExact, kFp32Log2e };

// The forward pass's order over a query block's key blocks: kAscending, or kDescending (last to
// first, as FlashAttention-2's compute_attn_1rowblock runs them).
enum class KeyOrder : uint8_t { kAscending, kDescending };

// Whose kernel selection picks, from the shape (head dimension, Sq, Sk, causal, B*H against the
// multiprocessors), what the configuration leaves automatic: the tiles (block_rows = 0), the
// backward tiles (bwd_block_rows = 0) and the forward pass's key splits (kv_splits = 0); see
// lib/attention/dispatch.hpp. kNone: the backward tile is the forward one, one split.
enum class Dispatch : uint8_t { kNone, kTorchFlash, kTorchEfficient };

struct AttentionConfig {
  std::string preset = "fp64";
  Format low_precision = formats::fp64;  // the preset's format parameter; also the I/O format
  Algorithm algorithm = Algorithm::kFlash;
  ExpImpl exp_impl = ExpImpl::kNatural;
  PvMode pv_mode = PvMode::kFused;
  NormMode norm_mode = NormMode::kReciprocal;
  DeltaMode delta_mode = DeltaMode::kFromOutput;
  RescaleImpl rescale = RescaleImpl::kExact;
  LseImpl lse_impl = LseImpl::kExact;
  // The flash backward pass's structure (see the enums above); the defaults are the fa2 model.
  // bwd_exp_impl, when set, is the exp implementation of the backward pass (the forward pass's
  // exp_impl otherwise).
  std::optional<ExpImpl> bwd_exp_impl;
  DeltaSum delta_sum = DeltaSum::kSequential;
  QueryOrder query_order = QueryOrder::kAscending;
  DqMode dq_mode = DqMode::kChained;
  GradScale grad_scale = GradScale::kExactProduct;
  DsProb ds_p = DsProb::kExp;
  LseLog2e lse_log2e = LseLog2e::kExact;
  // Flash attention's row sum l as this many partial sums (1 or 4). With 4, column j of a key
  // block (j counted from the block's first column) goes to partial (j % 8) / 2, the mma.sync
  // accumulator layout of a thread quad; each partial is rescaled by alpha and adds its block
  // terms in column order at rowsum; at the end l = (l0 + l2) + (l1 + l3), each sum rounded at
  // rowsum (the quad's butterfly all-reduce). Standard attention ignores it.
  int rowsum_lanes = 1;
  RowsumBlock rowsum_block = RowsumBlock::kRunning;
  std::array<SiteSpec, kSiteCount> sites{};
  int block_rows = 64;  // Br (0 with block_cols 0: the dispatch's tile)
  int block_cols = 64;  // Bc
  // The flash backward pass's tile; 0: the dispatch's, or the forward tile without one.
  int bwd_block_rows = 0;
  int bwd_block_cols = 0;
  KeyOrder key_order = KeyOrder::kAscending;
  Dispatch dispatch = Dispatch::kNone;
  // The forward pass's key/value splits (FlashAttention-2's split-KV kernel: each split runs
  // the online softmax over its share of the key blocks and writes O and LSE in fp32, a combine
  // kernel merges them; lib/attention/dispatch.hpp). 0: the dispatch's heuristic.
  int kv_splits = 1;
  // The whole problem's batch x heads and the GPU's multiprocessors, which the dispatch weighs
  // (a run may emulate a few heads of a larger batch); batch_heads 0: the run's own B*H.
  int batch_heads = 0;
  int sms = 132;
  bool causal = false;
  std::optional<double> scale;  // default 1/sqrt(d)
  BetaRowmax beta_rowmax;
  std::vector<std::string> mitigations;  // as given, for reports
  std::vector<std::string> overrides;    // as given, for reports
  uint64_t seed = 0;                     // random streams of stochastic rounding
  // Stochastic rounding at p_cast draws its bits from tiled_random::p_draw(seed, problem, row,
  // column, bits) (emulation/tiled_random.hpp, the layout the CUDA kernels use) instead of the
  // site's random stream; the bit count must divide 32.
  bool tiled_random = false;
  // Values of the device's exp2 (fp32 argument bits -> fp32 result bits). When set, exp_impl is
  // exp2-fma or exp2, and the result site (exp for P, o_rescale for alpha) is fp32
  // round-to-nearest-even, every exp2 of an fp32 argument is looked up here; an argument the
  // table lacks gets exp2 rounded at the site and is reported in AttentionOutputs::exp2_misses
  // (run_attention_with_device_function fills the table from those).
  std::shared_ptr<const DeviceFunctionTable> exp2_table;
  unsigned threads = 0;  // 0: hardware concurrency
  bool trace = false;    // collect per-site rounding statistics

  SiteSpec& site(Site s) { return sites[static_cast<int>(s)]; }
  const SiteSpec& site(Site s) const { return sites[static_cast<int>(s)]; }
};

// "SITE=FORMAT:ROUNDING[:ACCUMULATION]"; also the structural keys exp_impl=, algorithm=,
// pv_mode=, norm=, rescale=exact|exp2-shift|exp2-diff, rowsum_lanes=1|4,
// rowsum_block=running|warp-groups,
// lse_impl=exact|fma-log|shift-div-log2e, and for the flash
// backward pass bwd_exp_impl=(an exp_impl)|same, delta_sum=sequential|fa2|mem-eff,
// query_order=ascending|descending|split-keys, dq=chained|block-partials,
// grad_scale=exact|fp32-then-cast|ds, ds_p=exp|cast, lse_log2e=exact|fp32. Throws
// std::invalid_argument on unknown sites, formats, modes or accumulation models.
void apply_override(AttentionConfig& config, std::string_view assignment);

// "beta-rowmax[:beta[:eps]]", "sr-p[:bits]", "sr-p-tiled[:bits]" (sr-p with tiled_random),
// "sr-o[:bits]", "hp:SITE[:FORMAT]", "delta-dpp" (D from rowsum(dP o P)). Throws
// std::invalid_argument on unknown names.
void apply_mitigation(AttentionConfig& config, std::string_view text);

// Every site made exact (fp64, nearest, sequential in double) except the input site.
void make_site_exact(AttentionConfig& config, Site site);
// The site rounded stochastically in its own format.
void make_site_stochastic(AttentionConfig& config, Site site, int bits = 32);

nlohmann::json to_json(const AttentionConfig& config);

}  // namespace simprec::attention
