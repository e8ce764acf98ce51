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
//   kExp2Scaled: u(x) = round(round(x*scale')*log2e') with scale' and log2e' = log2(e) rounded
//            at exp_arg; a = round(u(S) - u(m)); P = exp2(a) (Triton's FlexAttention: the
//            score times SM_SCALE, then times RCP_LN2, then the max subtracted)
//   kExp2ScaledFma: as kExp2Scaled with the last product and the subtraction fused:
//            a = fma(round(S*scale'), log2e', -u(m)), one rounding (LLVM's contraction of it)
enum class ExpImpl : uint8_t { kExact, kNatural, kExp2Fma, kExp2, kExp2Scaled, kExp2ScaledFma };

// True for the exp implementations that evaluate exp2 of an argument in base 2.
inline bool is_exp2(ExpImpl e) {
  return e != ExpImpl::kExact && e != ExpImpl::kNatural;
}
// True for the exp2 implementations whose row shift is u(m) (kExp2Scaled, kExp2ScaledFma).
inline bool is_exp2_scaled(ExpImpl e) {
  return e == ExpImpl::kExp2Scaled || e == ExpImpl::kExp2ScaledFma;
}

// kFused: O accumulates across key/value blocks in the pv_acc accumulator (FA2).
// kPerBlock: each block's P.V is rounded at pv_acc, then added to O at o_update (paper A).
enum class PvMode : uint8_t { kFused, kPerBlock };

// Flash attention's final normalisation at o_norm: kReciprocal rounds 1/l, then O*(1/l) (FA2);
// kDivide rounds O/l once (PyTorch's oc.div_(l) in paper A's reference); kDivFull is the H100's
// div.full.f32 (a Triton kernel's acc / l): O * rcp.approx(l) rounded at o_norm, with the
// measured rcp.approx (emulation/device_math/sm90_mufu.hpp) where l is an fp32 value.
enum class NormMode : uint8_t { kReciprocal, kDivide, kDivFull };

// How flash attention computes alpha, the factor that rescales O and l when the row max grows:
//   kExact:     alpha = exp(scale*(m_old - m_new)), rounded once at o_rescale
//   kExp2Shift: alpha = exp2(round(shift_old - shift_new)), the difference of the two exponent
//               shifts round(m*c) rounded at o_rescale, then exp2 rounded at o_rescale (or the
//               device's exp2, see exp2_table): what a kernel computing exp2f(shift_old -
//               shift_new) does. Needs exp_impl exp2-fma or exp2.
//   kExp2Diff:  alpha = exp2(round(round(m_old - m_new) * c)), the difference of the raw maxima
//               and its product with c each rounded at o_rescale, then exp2 at o_rescale: what
//               FlashAttention-2's softmax_rescale_o computes. Needs exp_impl exp2-fma or exp2.
//   kExp2ShiftFma: alpha = exp2(round(shift_old - m_new * c)), the new shift's product exact
//               (fma(-c, m_new, shift_old), as Triton contracts exp2(shift_old - m_new * c)),
//               rounded at o_rescale, then exp2 at o_rescale. The argument is the rounding error
//               of m*c, not zero, when the max did not grow, so l and O are rescaled after every
//               key block but the first. Needs an exp2 exp_impl.
enum class RescaleImpl : uint8_t { kExact, kExp2Shift, kExp2Diff, kExp2ShiftFma };

// How a key block's P enters flash attention's row sum l (rowsum_lanes = 1 only): kRunning adds
// the block's columns to l in order; kWarpGroups sums each group of 32 columns in 4 lanes from
// zero (lane t: columns j with (j % 8) / 2 == t), combines them (l0 + l1) + (l2 + l3) and adds the
// groups to l in order (the memory-efficient kernel's iterative_softmax); kQuadFma sums the
// block's columns in 4 lanes from zero (lane t: columns j with (j % 8) / 2 == t, in order),
// combines them (l0 + l2) + (l1 + l3) and updates l = fma(l, alpha, block sum) with one rounding,
// alpha the block's rescale factor (1 when the max did not grow): Triton's tl.sum over an MMA
// accumulator layout (a thread's columns in order, then the quad's shuffles) and the contracted
// l_i * alpha + sum of FlexAttention.
enum class RowsumBlock : uint8_t { kRunning, kWarpGroups, kQuadFma };

// How alpha rescales the rowsum_lanes=4 partial sums of l when a key block arrives: kMul rounds
// l * alpha at o_rescale, then adds the block's terms at rowsum; kFma forms fma(l, alpha, first
// term) with one rounding at rowsum, then adds the rest: FlashAttention-2's softmax_rescale_o
// (`row_sum *= scores_scale`, then reduce_sum's first `row_sum + p`) as nvcc contracts it. With
// alpha = 1 (the max did not grow) both give l + p. Measured on the H100: kFma gives PyTorch's
// flash LSE and O bit for bit on every recorded shape (docs/torch_kernels.md).
enum class RowsumRescale : uint8_t { kMul, kFma };

// How flash attention's forward pass forms the LSE from the row max m and the row sum l, each
// rounding at lse:
//   kExact:        round(m*scale + log l) (log in double).
//   kFmaLog:       round(m*scale + round(log l)): FlashAttention-2's fma(m, scale, __logf(l)).
//   kShiftDivLog2e: round(round(shift / log2e') + round(log l)) with shift the exp2 shift
//                  (round(m*c), or u(m) for exp2-scaled) and log2e' = log2(e) rounded at exp_arg:
//                  the memory-efficient kernel's mi / kLog2e + logf(s_prime). Needs an exp2
//                  exp_impl (else kExact).
//   kLog2:         the base-2 LSE lse2 = round(u(m) + round(log2 l)) (u(m) the row shift of
//                  exp2-scaled), reported as round(lse2 * ln2') with ln2' = ln 2 rounded at lse:
//                  FlexAttention's m_i + log2(l_i), which torch multiplies by ln 2 in fp32. The
//                  backward pass recomputes P from lse2: the forward's of the same run, or from a
//                  given LSE the fp32 value that reports it (SiteArithmetic::base2_lse). Needs
//                  exp_impl exp2-scaled or exp2-scaled-fma.
//   kFmaLog2Div:   round(round(fma(m, c, round(log2 l))) / log2e'), c = scale*log2(e) and log2e'
//                  rounded at exp_arg: (m * c + log2(l)) / log2(e) with the product contracted, as
//                  Triton compiles it (examples/python/triton_flash_forward.py).
//   kFmaLog2DivFull: kFmaLog2Div with the division as the H100's div.full.f32, which Triton
//                  emits for fp32 `/`: round(x * rcp.approx(log2e')) (emulation/device_math).
// The device's __logf, logf and lg2.approx are approximations; log and log2 here are libm's,
// rounded at lse, except with device_math=sm90 at an fp32 lse site: log is __logf for fma-log
// and libdevice's logf for shift-div-log2e, and the log2 of log2 and fma-log2-div(-full)
// libdevice's log2f (what tl.log2 compiles to), all bit-exact.
enum class LseImpl : uint8_t {
  kExact,
  kFmaLog,
  kShiftDivLog2e,
  kLog2,
  kFmaLog2Div,
  kFmaLog2DivFull
};

// Which key blocks a causal flash pass visits in which order:
//   kNone:          ascending key blocks up to the diagonal.
//   kDiagonalFirst: FlexAttention's causal block mask (sparse blocks of 128 x 128): for each query
//                   block, the key blocks of the partial sparse blocks (the diagonal's, and any
//                   reaching past a length 128 does not divide: create_block_mask pads with
//                   False) first, then the full ones, each in increasing order; in the backward
//                   pass dQ sees the key blocks in that order and dK, dV the query blocks
//                   likewise (partial, then full).
enum class BlockMask : uint8_t { kNone, kDiagonalFirst };
// Where exp_impl = exp2-scaled-fma fuses the exponent argument's last product and subtraction.
// FlexAttention's Triton kernels multiply the scores by log2 e, then subtract the max; Triton
// contracts the two into an fma unless a mask's select stands between them (it folds the select
// into the product, leaving no product to fuse). Blocks with a select take exp2-scaled's
// separate product and subtraction instead (measured on an H100, docs/torch_kernels.md):
//   kNone: none; exp_impl holds in every key block;
//   kStatic: compiled for the shape (torch.compile's first compilation): the block mask's
//            partial sparse blocks and, where a length is not a multiple of 128 (Triton's
//            IS_DIVISIBLE off: every block checks its bounds), every block of both passes;
//   kDynamic: compiled for symbolic lengths (torch.compile's dynamic shapes, after a
//             recompilation for a new length): every block checks the bounds, so none fuses.
enum class FlexCompile : uint8_t { kNone, kStatic, kDynamic };
inline constexpr int64_t kSparseBlock = 128;  // FlexAttention's default BLOCK_SIZE

// How the tile is chosen: kFixed, block_rows x block_cols as given; kFlexSm90, as PyTorch 2.11's
// FlexAttention forward picks on sm_90 (read from the kernels torch.compile generated on an
// H100): by head dimension, d <= 64: 128x128, d <= 96: 64x64, otherwise 128x64; and with fewer
// than 128 queries the flex-decoding kernel: max(16, Sq rounded up to a power of two) x 64 tiles,
// two warps side by side over each key block (rowsum_warps = 2). Its 264 key splits leave every
// key in the first split at the recorded shapes (the split's length rounds up to a multiple of
// the sparse block), so its combination step multiplies by exp2(0) = 1 and adds zeros: exact.
enum class TileRule : uint8_t { kFixed, kFlexSm90 };

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
//   kTriton:     a Triton reduction over the row padded to a power of two P: P/8 threads per row,
//                thread t sums columns [8t, 8t + 8) in order from zero, then a butterfly with
//                offsets P/16, ..., 1 (FlexAttention's delta kernel compiled as a persistent
//                reduction, XBLOCK = 8 rows over 2 warps: 8 bf16 per thread).
//   kTritonLooped: the same reduction compiled as a looped one (XBLOCK = 1, one warp per row):
//                32 threads, thread t sums columns [tC, tC + C) in order from zero, C = P/32
//                (at least 1), then a butterfly with offsets 16, ..., 1. Inductor chose it for one
//                held-out shape (docs/torch_kernels.md); its choice is not modelled.
enum class DeltaSum : uint8_t { kSequential, kFa2, kMemEff, kTriton, kTritonLooped };

// The order of the flash backward pass over (key/value block, query block) pairs, which fixes the
// order in which dK and dV accumulate over query blocks and dQ over key blocks:
//   kAscending:  each key block takes the query blocks in increasing order (dQ of a query block
//                sees the key blocks in increasing order).
//   kDescending: each key block takes the query blocks from the last to the first
//                (FlashAttention-2's compute_dq_dk_dv_1colblock).
//   kSplitKeys:  the memory-efficient kernel with split keys: the thread block of key block s
//                starts at query block s (mod the number of query blocks) and wraps around; dQ of a
//                query block sees the key blocks in the order the blocks reach it (key block s at
//                step (i - s) mod n; those of the same step in split_ties' order). Causal masks
//                start every key block at its first visible query block. With B*H >= 256 and Nk <=
//                2*Bc PyTorch's heuristic runs one split, and run_attention takes kAscending, as
//                that kernel does.
enum class QueryOrder : uint8_t { kAscending, kDescending, kSplitKeys };

// With query_order=split-keys, the order of the key blocks that reach a query block at the same
// step (the kernel's thread blocks take a lock to add their dQ, in an order the hardware
// decides):
//   kDescending: the higher key block first: the order the H100 gave most often (measured
//                against PyTorch's memory-efficient kernel, docs/torch_kernels.md);
//   kAscending:  the lower key block first;
//   kShuffled:   an order drawn from `seed`: what an arbitrary fixed order predicts.
enum class SplitTies : uint8_t { kDescending, kAscending, kShuffled };

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

// The device functions a kernel calls: kCorrectlyRounded, exp2 and log rounded at their sites;
// kSm90, the H100's ex2.approx.ftz.f32 for every exp2 of an fp32 argument at an fp32
// round-to-nearest-even site, its lg2.approx.ftz.f32 times ln 2 (CUDA's __logf) for the LSE's
// log where the kernel calls __logf (LseImpl kFmaLog), from the measured tables of
// emulation/device_math/sm90_mufu.hpp, and libdevice's expf and logf (their fp32 instruction
// sequences around ex2.approx, emulation/device_math/libdevice_expf_logf.hpp) where it calls
// expf and logf: the split-KV combine, the memory-efficient LSE and backward exp. Where the
// tables give no value (the log below 1) the site's rounding applies.
enum class DeviceMath : uint8_t { kCorrectlyRounded, kSm90 };

// How flash attention's forward pass carries its state across key/value tiles:
//   kRunning:    FlashAttention-2: O and l unnormalised against the running max m, rescaled by
//                alpha where m grows, O/l once after the last tile.
//   kNormalised: FlashAttention-1's Algorithm 1 (Dao et al. 2022): each tile's P~ from the
//                tile's own max m~ (exp_arg, exp), its sum l~ (rowsum) and P~V (pv_acc, from
//                zero); m_new = max(m, m~), a = exp(scale (m - m_new)) and b = exp(scale (m~ -
//                m_new)) (o_rescale), l_new = l a + b l~ (products at o_rescale, sum at
//                o_update), O = ((l a) O + b P~V) / l_new (products at o_rescale, sum at
//                o_update, quotient at o_norm): O, l and m are normalised and written back in
//                their sites' formats after every tile, and O is cast at o_out at the end.
enum class FlashState : uint8_t { kRunning, kNormalised };

// Which of FlashAttention-1's tile sizes for an SRAM of M elements (AttentionConfig::sram) go
// where, with c = ceil(M / 4d): kPaper Br = min(c, d) query rows, Bc = c key columns (the
// paper's rule); kSwapped Br = c, Bc = min(c, d); kSquare Br = Bc = c.
enum class BlockOrder : uint8_t { kPaper, kSwapped, kSquare };

// The forward pass's order over a query block's key blocks: kAscending, or kDescending (last to
// first, as FlashAttention-2's compute_attn_1rowblock runs them).
enum class KeyOrder : uint8_t { kAscending, kDescending };

// Whose kernel selection picks, from the shape (head dimension, Sq, Sk, causal, B*H against the
// multiprocessors), what the configuration leaves automatic: the tiles (block_rows = 0), the
// backward tiles (bwd_block_rows = 0) and the forward pass's key splits (kv_splits = 0); see
// lib/attention/dispatch.hpp. kNone: the backward tile is the forward one, one split.
enum class Dispatch : uint8_t { kNone, kTorchFlash, kTorchEfficient };

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
  SplitTies split_ties = SplitTies::kDescending;
  DqMode dq_mode = DqMode::kChained;
  GradScale grad_scale = GradScale::kExactProduct;
  DsProb ds_p = DsProb::kExp;
  LseLog2e lse_log2e = LseLog2e::kExact;
  DeviceMath device_math = DeviceMath::kCorrectlyRounded;
  // Flash attention's row sum l as this many partial sums (1 or 4). With 4, column j of a key
  // block (j counted from the block's first column) goes to partial (j % 8) / 2, the mma.sync
  // accumulator layout of a thread quad; each partial is rescaled by alpha and adds its block
  // terms in column order at rowsum; at the end l = (l0 + l2) + (l1 + l3), each sum rounded at
  // rowsum (the quad's butterfly all-reduce). Standard attention ignores it.
  int rowsum_lanes = 1;
  RowsumBlock rowsum_block = RowsumBlock::kRunning;
  RowsumRescale rowsum_rescale = RowsumRescale::kMul;
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
  BlockMask block_mask = BlockMask::kNone;
  FlexCompile flex_compile = FlexCompile::kNone;
  TileRule tile_rule = TileRule::kFixed;
  std::array<SiteSpec, kSiteCount> sites{};
  int block_rows = 64;  // Br (0 with block_cols 0: the dispatch's tile)
  int block_cols = 64;  // Bc
  FlashState flash_state = FlashState::kRunning;
  // > 0: the tile comes from FlashAttention-1's rule for an SRAM of this many elements and the
  // head dimension (block_order; with_sram_tile), replacing block_rows and block_cols.
  int64_t sram = 0;
  BlockOrder block_order = BlockOrder::kPaper;
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

// The configuration with block_rows and block_cols from FlashAttention-1's rule when sram > 0
// (BlockOrder), for head dimension d; unchanged otherwise. Throws std::invalid_argument when a
// tile size falls outside [1, 65536].
AttentionConfig with_sram_tile(const AttentionConfig& config, int64_t d);

}  // namespace simprec::attention
