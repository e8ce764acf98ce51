#include "lib/attention/float_flash.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <numbers>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>
#include "emulation/cpu_level.hpp"
#include "emulation/elementary.hpp"
#include "emulation/tensor_core.hpp"
#include "lib/attention/product.hpp"
#if SIMPREC_AVX512_KERNELS
#include <immintrin.h>
#endif

namespace simprec::attention {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// The float copy of x[0..n); false when a value is not a float.
bool to_floats(const double* x, int64_t n, std::vector<float>& out) {
  out.resize(n);
  bool ok = true;
  for (int64_t i = 0; i < n; ++i) {
    out[i] = static_cast<float>(x[i]);
    ok &= static_cast<double>(out[i]) == x[i];
  }
  return ok;
}

// a * b rounded once to fp32 (nearest even) from the exact product hi + lo, as
// SiteRounder::round_exact rounds it: through round-to-odd at double precision, a non-finite hi
// as it is.
float mul_rounded(double a, double b) {
  const double hi = a * b;
  const double lo = std::fma(static_cast<double>(a), b, -hi);
  return static_cast<float>(lo == 0.0 || !std::isfinite(hi) ? hi : SiteRounder::to_odd(hi, lo));
}

// mul_rounded(x[i], b) into out[i] for i in [first, n).
void mul_rounded_from(const float* x, double b, float* out, int64_t first, int64_t n) {
  for (int64_t i = first; i < n; ++i) out[i] = mul_rounded(x[i], b);
}

// The same, 8 at a time in AVX-512 lanes, then the tail.
[[SIMPREC_TARGET_V4]] void mul_rounded_v4(const float* x, double b, float* out, int64_t n) {
  int64_t i = 0;
#if SIMPREC_AVX512_KERNELS
  const __m512d vb = _mm512_set1_pd(b);
  const __m512d zero = _mm512_setzero_pd();
  const __m512i one = _mm512_set1_epi64(1);
  for (; i + 8 <= n; i += 8) {
    const __m512d xd = _mm512_cvtps_pd(_mm256_loadu_ps(x + i));
    const __m512d hi = _mm512_mul_pd(xd, vb);
    const __m512d lo = _mm512_fmsub_pd(xd, vb, hi);
    // to_odd where lo != 0: one step toward zero when lo points inward, then the last bit set.
    // fpclass 0x99: NaN, +inf or -inf.
    const __mmask8 inexact =
        _mm512_cmp_pd_mask(lo, zero, _CMP_NEQ_UQ) & ~_mm512_fpclass_pd_mask(hi, 0x99);
    const __mmask8 inward = inexact & (_mm512_cmp_pd_mask(hi, zero, _CMP_GT_OQ) ^
                                       _mm512_cmp_pd_mask(lo, zero, _CMP_GT_OQ));
    __m512i bits = _mm512_castpd_si512(hi);
    bits = _mm512_mask_sub_epi64(bits, inward, bits, one);
    bits = _mm512_mask_or_epi64(bits, inexact, bits, one);
    _mm256_storeu_ps(out + i, _mm512_cvtpd_ps(_mm512_castsi512_pd(bits)));
  }
#endif
  mul_rounded_from(x, b, out, i, n);
}

// out[i] = mul_rounded(x[i], b) for i < n.
void mul_rounded(const float* x, double b, float* out, int64_t n) {
  if (cpu_level() == CpuLevel::kV4) {
    mul_rounded_v4(x, b, out, n);
  } else {
    mul_rounded_from(x, b, out, 0, n);
  }
}

// x[i] rounded to bf16 nearest-even, as a float, in place: adding 0x7fff plus the last kept bit
// to the bits carries into the kept half exactly when the dropped half is above the midpoint, or
// at it with the kept half odd; subnormals, infinities and overflow to inf come out right the
// same way. A NaN becomes bf16's quiet NaN 0x7fc0, as the site-by-site path rounds it: the carry
// would turn a NaN with a large payload (the tensor-core model's 0x7fffffff) into -0 or inf, and
// which NaN arrives here depends on the operand order the compiler picked for each CPU level.
void round_to_bf16(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t u = std::bit_cast<uint32_t>(x[i]);
    const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
    x[i] = std::bit_cast<float>((u & 0x7fffffffu) > 0x7f800000u ? 0x7fc00000u : rounded);
  }
}

// The configurations the path computes: the fp32 preset's, and the fa2 preset's at F = bf16 with
// its product sites accumulating one fmaf per term (`sequential`) or with its tensor-core model.
enum class Numerics : uint8_t { kFp32, kFa2Fmaf, kFa2TensorCore };

// fa2's tensor-core model at F = bf16.
constexpr std::string_view kFa2TensorCore = "tc:sm90-mma-bf16";

std::optional<Numerics> numerics_of(const AttentionConfig& config) {
  if (config.trace) return std::nullopt;
  // The configuration the fast path computes, with the given values of what it supports: equal
  // when their reports are. to_json records every option that changes results (reports must),
  // so an option added later keeps its configurations off this path until it learns them.
  const auto supported = [&config](Numerics numerics) {
    AttentionConfig c;
    c.preset = config.preset;
    c.low_precision = config.low_precision;
    c.exp_impl = find_strategy<ExpArg>(numerics == Numerics::kFp32 ? "natural" : "exp2-fma");
    for (SiteSpec& site : c.sites) site = SiteSpec{formats::fp32, Rounding{}, "sequential"};
    if (numerics != Numerics::kFp32) {
      for (Site s : {Site::kPCast, Site::kOOut, Site::kPCastBwd, Site::kDsCast, Site::kGradOut}) {
        c.site(s) = SiteSpec{formats::bf16, Rounding{}, "sequential"};
      }
    }
    if (numerics == Numerics::kFa2TensorCore) {
      for (Site s : {Site::kS, Site::kPvAcc, Site::kDp, Site::kDqAcc, Site::kDkAcc, Site::kDvAcc}) {
        c.site(s).accumulation = std::string(kFa2TensorCore);
      }
    }
    c.site(Site::kInput) = config.site(Site::kInput);
    c.block_rows = config.block_rows;
    c.block_cols = config.block_cols;
    c.causal = config.causal;
    c.scale = config.scale;
    c.seed = config.seed;
    c.mitigations = config.mitigations;
    c.overrides = config.overrides;
    // Supplied exp2 values apply where the exponent is in base 2: the natural exp ignores them.
    if (numerics == Numerics::kFp32) c.device_tables = config.device_tables;
    return to_json(c);
  };
  const auto json = to_json(config);
  for (const DeviceFn fn : kDeviceFns) {
    const bool ignored = fn == DeviceFn::kExp2 && config.exp_impl.is("natural");
    if (config.device_tables[static_cast<int>(fn)] && !ignored) return std::nullopt;
  }
  for (const Numerics n : {Numerics::kFp32, Numerics::kFa2Fmaf, Numerics::kFa2TensorCore}) {
    if (supported(n) == json) return n;
  }
  return std::nullopt;
}

// A problem's tensors as floats, with the transposed tiles the products read: the S^T tile of
// query tile [i0, i0 + br) is K_tile Q_tile^T, whose right operand is the d x br block of qt at
// qt + i0 * d (and likewise dO^T's blocks for dP^T = V_tile dO_tile^T).
struct Problem {
  int64_t nq, nk, d, dv, br_max, bc_max;
  double scale;
  bool causal;
  // fa2: P = exp2(fmaf(s, c, -round(m c))) with c = round(scale log2 e), P cast to bf16 before
  // P.V and dV, O and dS cast to bf16, dQ and dK rounded once to bf16 from acc * scale.
  bool fa2;
  float c;
  const TensorCoreModel* tensor_core;  // the products' model, or nullptr: one fmaf per term
  SiteRounder grad_out;
  std::vector<float> q, k, v, d_out, qt, d_out_t;
  // The tensor-core model's operands packed for the products that read them once only.
  mutable TensorCoreOperand scratch_left, scratch_right;

  Problem(const AttentionConfig& config, const AttentionShape& s, Numerics numerics)
      : nq(s.nq),
        nk(s.nk),
        d(s.d),
        dv(s.dv),
        br_max(config.block_rows),
        bc_max(config.block_cols),
        scale(softmax_scale(config, s)),
        causal(config.causal),
        fa2(numerics != Numerics::kFp32),
        c(static_cast<float>(scale * std::numbers::log2e)),
        tensor_core(numerics == Numerics::kFa2TensorCore ? &tensor_core_model(kFa2TensorCore)
                                                         : nullptr),
        grad_out(config.site(Site::kGradOut), config.seed, Site::kGradOut) {}

  // c (m x n, row stride ldc) += A B with a(i, kk) = a[i * a_row + kk * a_col] and B row-major
  // (k x n, ldb), at a product site: one fmaf per term in order of k, or the tensor-core model
  // (tensor_core_gemm_in_place; every operand here is a bf16 value: an input, P or dS cast, and
  // c an fp32 value), which computes element (i, j) from row i of A, column j of B
  // and c(i, j) alone, as the site-by-site path's gemm does from the same operands in whatever
  // layout it holds them. a_packed and b_packed, where given, are A and B packed for the model
  // (a tile that several products read, packed once).
  void product(int64_t m, int64_t n, int64_t k, const float* a, int64_t a_row, int64_t a_col,
               const float* b, int64_t ldb, float* c_out, int64_t ldc,
               const TensorCoreOperand* a_packed = nullptr,
               const TensorCoreOperand* b_packed = nullptr) const {
    if (!tensor_core) {
      float_sequential_strided(m, n, k, a, a_row, a_col, b, ldb, c_out, ldc);
      return;
    }
    if (!a_packed) {
      scratch_left.pack_left(*tensor_core, static_cast<int>(m), static_cast<int>(k), a, a_row,
                             a_col);
      a_packed = &scratch_left;
    }
    if (!b_packed) {
      scratch_right.pack_right(*tensor_core, static_cast<int>(k), static_cast<int>(n), b, ldb);
      b_packed = &scratch_right;
    }
    tensor_core_gemm_in_place(*a_packed, *b_packed, c_out, ldc);
  }

  // Rows [r0, r0 + rows) of x (row stride cols) as the left or right operand of the tensor-core
  // model (nothing without it).
  void pack_left(TensorCoreOperand& out, const std::vector<float>& x, int64_t r0, int64_t rows,
                 int64_t cols) const {
    if (tensor_core) {
      out.pack_left(*tensor_core, static_cast<int>(rows), static_cast<int>(cols),
                    x.data() + r0 * cols, cols, 1);
    }
  }
  void pack_right(TensorCoreOperand& out, const std::vector<float>& x, int64_t r0, int64_t rows,
                  int64_t cols) const {
    if (tensor_core) {
      out.pack_right(*tensor_core, static_cast<int>(rows), static_cast<int>(cols),
                     x.data() + r0 * cols, cols);
    }
  }
  // Query tile [i0, i0 + br) of a transposed copy (tile_transposed, `cols` columns) as the
  // right operand: its cols x br block.
  void pack_right_block(TensorCoreOperand& out, const std::vector<float>& xt, int64_t i0,
                        int64_t br, int64_t cols) const {
    if (tensor_core) {
      out.pack_right(*tensor_core, static_cast<int>(cols), static_cast<int>(br),
                     xt.data() + i0 * cols, br);
    }
  }
  // The packed operand, or nullptr without the tensor-core model.
  const TensorCoreOperand* packed(const TensorCoreOperand& x) const {
    return tensor_core ? &x : nullptr;
  }

  // The row shift of the exponent from the row max m (forward pass): round(m scale), or for fa2
  // round(m c).
  float shift_from_max(float m) const { return mul_rounded(m, fa2 ? c : scale); }
  // The same from the log-sum-exp (backward pass): round(lse), or for fa2 round(lse log2 e).
  float shift_from_lse(double lse) const {
    return fa2 ? mul_rounded(lse, std::numbers::log2e) : static_cast<float>(lse);
  }

  // Rows [i0, i0 + br) of x (rows x cols) as cols x br blocks, one after another.
  std::vector<float> tile_transposed(const std::vector<float>& x, int64_t cols) const {
    std::vector<float> t(x.size());
    for (int64_t i0 = 0; i0 < nq; i0 += br_max) {
      const int64_t br = std::min(nq, i0 + br_max) - i0;
      float* block = t.data() + i0 * cols;
      for (int64_t i = 0; i < br; ++i) {
        for (int64_t c = 0; c < cols; ++c) block[c * br + i] = x[(i0 + i) * cols + c];
      }
    }
    return t;
  }

  // S^T (bc x br) of query tile [i0, i0 + br) and key tile [j0, j0 + bc), masked keys -inf;
  // k_tile and qt_tile: the key tile and the query tile's block of qt, packed.
  void scores(int64_t i0, int64_t br, int64_t j0, int64_t bc, float* st,
              const TensorCoreOperand& k_tile, const TensorCoreOperand& qt_tile) const {
    std::fill(st, st + bc * br, 0.0f);
    product(bc, br, d, k.data() + j0 * d, d, 1, qt.data() + i0 * d, br, st, br, packed(k_tile),
            packed(qt_tile));
    if (!causal || j0 + bc - 1 <= i0) return;
    for (int64_t j = 0; j < bc; ++j) {
      for (int64_t i = 0; i < std::min(br, j0 + j - i0); ++i) st[j * br + i] = -kInf;
    }
  }

  // P^T from S^T: exp(round(s * scale) - shift[i]) at fp32, or for fa2 exp2(fmaf(s, c,
  // -shift[i])) (s c is exact in float's fma, then one rounding, as the site's fma), 0 for masked
  // keys; in place.
  void probabilities(float* st, int64_t bc, int64_t br, const float* shift,
                     std::vector<float>& arg) const {
    arg.resize(bc * br);
    if (fa2) {
      for (int64_t j = 0; j < bc; ++j) {
        const float* __restrict s = st + j * br;
        float* __restrict a = arg.data() + j * br;
        // A masked key's P is 0 whatever c is (-inf times a zero c would be NaN).
        for (int64_t i = 0; i < br; ++i)
          a[i] = s[i] == -kInf ? -kInf : std::fmaf(s[i], c, -shift[i]);
      }
      exp2_fp32(arg.data(), st, static_cast<size_t>(bc * br));
      return;
    }
    mul_rounded(st, scale, arg.data(), bc * br);
    for (int64_t j = 0; j < bc; ++j) {
      const float* __restrict s = st + j * br;
      float* __restrict a = arg.data() + j * br;
      for (int64_t i = 0; i < br; ++i) a[i] = s[i] == -kInf ? -kInf : a[i] - shift[i];
    }
    exp_fp32(arg.data(), st, static_cast<size_t>(bc * br));
  }

  // One key/value tile of query tile [i0, i0 + br)'s online softmax: m, l (its rows' running max
  // and sum) and acc (their O accumulator, row stride dv) rescaled where the max grows, then
  // l += rowsum(P) and acc += P V. st, shift and block_max hold a tile's rows, arg is scratch;
  // k_tile, qt_tile and v_tile are the operands packed for scores and for P V.
  void forward_tile(int64_t i0, int64_t br, int64_t j0, int64_t bc, float* acc, float* m, float* l,
                    float* st, float* shift, float* block_max, std::vector<float>& arg,
                    const TensorCoreOperand& k_tile, const TensorCoreOperand& qt_tile,
                    const TensorCoreOperand& v_tile) const {
    scores(i0, br, j0, bc, st, k_tile, qt_tile);
    std::fill(block_max, block_max + br, -kInf);
    for (int64_t j = 0; j < bc; ++j) {
      const float* __restrict s = st + j * br;
      float* __restrict mb = block_max;
      for (int64_t i = 0; i < br; ++i) mb[i] = mb[i] < s[i] ? s[i] : mb[i];  // std::max
    }
    for (int64_t i = 0; i < br; ++i) {
      const float m_new = m[i] < block_max[i] ? block_max[i] : m[i];
      if (m_new == -kInf) {  // no key of the row visible yet: every argument -inf, P = 0
        shift[i] = kInf;
        continue;
      }
      const float next_shift = shift_from_max(m_new);
      if (m[i] != -kInf && m_new != m[i]) {
        const double diff = static_cast<double>(m[i]) - static_cast<double>(m_new);
        // Correctly rounded, as the site-by-site path rounds it (exp_rounded).
        RoundingContext fp32_nearest(formats::fp32);
        const float alpha =
            std::bit_cast<float>(static_cast<uint32_t>(exp_of(fp32_nearest, scale * diff)));
        l[i] *= alpha;
        float* __restrict orow = acc + i * dv;
        for (int64_t c = 0; c < dv; ++c) orow[c] *= alpha;
      }
      m[i] = m_new;
      shift[i] = next_shift;
    }
    probabilities(st, bc, br, shift, arg);  // st now holds P^T
    for (int64_t j = 0; j < bc; ++j) {
      const float* __restrict p = st + j * br;
      float* __restrict li = l;
      for (int64_t i = 0; i < br; ++i) li[i] += p[i];
    }
    if (fa2) round_to_bf16(st, bc * br);  // p_cast
    product(br, dv, bc, st, 1, br, v.data() + j0 * dv, dv, acc, dv, nullptr, packed(v_tile));
  }

  void forward(double* o_out, double* lse_out, double* row_sum_out, std::vector<float>& o) {
    o.assign(nq * dv, 0.0f);
    std::vector<float> st(bc_max * br_max), arg, acc(br_max * dv), m(br_max), l(br_max),
        shift(br_max), block_max(br_max);
    // Every query tile reads every key tile: K and V packed once, tile by tile.
    const int64_t key_tiles = (nk + bc_max - 1) / bc_max;
    std::vector<TensorCoreOperand> k_tiles(tensor_core ? key_tiles : 1),
        v_tiles(tensor_core ? key_tiles : 1);
    for (int64_t t = 0; tensor_core && t < key_tiles; ++t) {
      const int64_t j0 = t * bc_max, bc = std::min(nk, j0 + bc_max) - j0;
      pack_left(k_tiles[t], k, j0, bc, d);
      pack_right(v_tiles[t], v, j0, bc, dv);
    }
    TensorCoreOperand qt_tile;
    for (int64_t i0 = 0; i0 < nq; i0 += br_max) {
      const int64_t i1 = std::min(nq, i0 + br_max), br = i1 - i0;
      pack_right_block(qt_tile, qt, i0, br, d);
      std::fill(acc.begin(), acc.end(), 0.0f);
      std::fill(m.begin(), m.end(), -kInf);
      std::fill(l.begin(), l.end(), 0.0f);
      for (int64_t j0 = 0; j0 < nk; j0 += bc_max) {
        if (causal && j0 > i1 - 1) break;
        const int64_t t = tensor_core ? j0 / bc_max : 0;
        forward_tile(i0, br, j0, std::min(nk, j0 + bc_max) - j0, acc.data(), m.data(), l.data(),
                     st.data(), shift.data(), block_max.data(), arg, k_tiles[t], qt_tile,
                     v_tiles[t]);
      }
      for (int64_t i = 0; i < br; ++i) {
        const int64_t gi = i0 + i;
        const double li = l[i];
        if (row_sum_out) row_sum_out[gi] = li;
        const float inv = static_cast<float>(1.0 / li);
        float* __restrict orow = o.data() + gi * dv;
        for (int64_t x = 0; x < dv; ++x) orow[x] = acc[i * dv + x] * inv;
        if (fa2) round_to_bf16(orow, dv);  // o_out
        for (int64_t x = 0; x < dv; ++x) o_out[gi * dv + x] = orow[x];
        lse_out[gi] = static_cast<float>(static_cast<double>(m[i]) * scale + std::log(li));
      }
    }
  }

  // shift: the rows' exponent shifts from their log-sum-exp (shift_from_lse).
  void backward(const std::vector<float>& o, const std::vector<float>& shift, double* dq_out,
                double* dk_out, double* dv_out, double* delta_out) const {
    std::vector<float> delta(nq);
    for (int64_t i = 0; i < nq; ++i) {
      float sum = 0.0f;
      for (int64_t c = 0; c < dv; ++c) sum = std::fmaf(d_out[i * dv + c], o[i * dv + c], sum);
      delta[i] = sum;
      delta_out[i] = sum;
    }
    // Key tiles go in groups of kKeyGroup through each pass over the query tiles, so that a query
    // tile's operands are read from memory once per group rather than once per key tile. Every
    // accumulation keeps its order: dK and dV of a key tile take the query tiles in increasing
    // order, dQ of a query tile the key tiles.
    constexpr int64_t kKeyGroup = 4;
    std::vector<float> st(bc_max * br_max), pct, dpt(bc_max * br_max), arg, dq_acc(nq * d, 0.0f),
        dk_acc(kKeyGroup * bc_max * d), dv_acc(kKeyGroup * bc_max * dv);
    // The operands packed for the tensor-core model: a key tile's K (for S and for dQ) and V
    // once per group, every query tile's Q^T, dO, dO^T and Q once (each group reads them all).
    TensorCoreOperand k_left[kKeyGroup], k_right[kKeyGroup], v_left[kKeyGroup];
    const int64_t query_tiles = tensor_core ? (nq + br_max - 1) / br_max : 0;
    std::vector<TensorCoreOperand> qt_tiles(query_tiles), do_tiles(query_tiles),
        dot_tiles(query_tiles), q_tiles(query_tiles);
    for (int64_t t = 0; t < query_tiles; ++t) {
      const int64_t i0 = t * br_max, br = std::min(nq, i0 + br_max) - i0;
      pack_right_block(qt_tiles[t], qt, i0, br, d);
      pack_right(do_tiles[t], d_out, i0, br, dv);
      pack_right_block(dot_tiles[t], d_out_t, i0, br, dv);
      pack_right(q_tiles[t], q, i0, br, d);
    }
    const TensorCoreOperand none;
    const auto query_tile = [&](const std::vector<TensorCoreOperand>& tiles, int64_t i0) {
      return tensor_core ? &tiles[i0 / br_max] : &none;
    };
    for (int64_t g0 = 0; g0 < nk; g0 += kKeyGroup * bc_max) {
      const int64_t g1 = std::min(nk, g0 + kKeyGroup * bc_max);
      std::fill(dk_acc.begin(), dk_acc.end(), 0.0f);
      std::fill(dv_acc.begin(), dv_acc.end(), 0.0f);
      for (int64_t j0 = g0; j0 < g1; j0 += bc_max) {
        const int64_t t = (j0 - g0) / bc_max, bc = std::min(nk, j0 + bc_max) - j0;
        pack_left(k_left[t], k, j0, bc, d);
        pack_right(k_right[t], k, j0, bc, d);
        pack_left(v_left[t], v, j0, bc, dv);
      }
      for (int64_t i0 = 0; i0 < nq; i0 += br_max) {
        const int64_t i1 = std::min(nq, i0 + br_max), br = i1 - i0;
        const TensorCoreOperand &qt_tile = *query_tile(qt_tiles, i0),
                                &do_tile = *query_tile(do_tiles, i0),
                                &dot_tile = *query_tile(dot_tiles, i0),
                                &q_tile = *query_tile(q_tiles, i0);
        for (int64_t j0 = g0; j0 < g1; j0 += bc_max) {
          const int64_t t = (j0 - g0) / bc_max, bc = std::min(nk, j0 + bc_max) - j0;
          if (causal && j0 > i1 - 1) break;
          float* dk_tile = dk_acc.data() + (j0 - g0) * d;
          float* dv_tile = dv_acc.data() + (j0 - g0) * dv;
          scores(i0, br, j0, bc, st.data(), k_left[t], qt_tile);
          probabilities(st.data(), bc, br, shift.data() + i0, arg);  // st now holds P^T
          // dV += P^T dO (fa2: P cast at p_cast_bwd)
          const float* pc = st.data();
          if (fa2) {
            pct.assign(st.begin(), st.begin() + bc * br);
            round_to_bf16(pct.data(), bc * br);
            pc = pct.data();
          }
          product(bc, dv, br, pc, br, 1, d_out.data() + i0 * dv, dv, dv_tile, dv, nullptr,
                  packed(do_tile));
          // dP^T = V dO^T
          std::fill(dpt.begin(), dpt.begin() + bc * br, 0.0f);
          product(bc, br, dv, v.data() + j0 * dv, dv, 1, d_out_t.data() + i0 * dv, br, dpt.data(),
                  br, packed(v_left[t]), packed(dot_tile));
          // dS^T = P o (dP - D), into dpt
          for (int64_t j = 0; j < bc; ++j) {
            const float* __restrict p = st.data() + j * br;
            float* __restrict ds = dpt.data() + j * br;
            const float* __restrict di = delta.data() + i0;
            for (int64_t i = 0; i < br; ++i) ds[i] = p[i] == 0.0f ? 0.0f : p[i] * (ds[i] - di[i]);
          }
          if (fa2) round_to_bf16(dpt.data(), bc * br);  // ds_cast
          // dQ += dS K (dS read through its transpose); dK += dS^T Q
          product(br, d, bc, dpt.data(), 1, br, k.data() + j0 * d, d, dq_acc.data() + i0 * d, d,
                  nullptr, packed(k_right[t]));
          product(bc, d, br, dpt.data(), br, 1, q.data() + i0 * d, d, dk_tile, d, nullptr,
                  packed(q_tile));
        }
      }
      const int64_t keys = g1 - g0;
      scaled_grad(dk_acc.data(), keys * d, dk_out + g0 * d);
      for (int64_t x = 0; x < keys * dv; ++x) {
        dv_out[g0 * dv + x] = fa2 ? grad_out(dv_acc[x]) : dv_acc[x];
      }
    }
    scaled_grad(dq_acc.data(), nq * d, dq_out);
  }

  // out[x] = acc[x] * scale rounded once at grad_out (fp32, or bf16 for fa2) from the exact
  // product; acc is overwritten.
  void scaled_grad(float* acc, int64_t n, double* out) const {
    if (fa2) {
      for (int64_t x = 0; x < n; ++x) {
        const double hi = acc[x] * scale;
        out[x] = grad_out.round_exact(hi, std::fma(static_cast<double>(acc[x]), scale, -hi));
      }
      return;
    }
    mul_rounded(acc, scale, acc, n);
    for (int64_t x = 0; x < n; ++x) out[x] = acc[x];
  }
};

}  // namespace

bool float_flash_applies(const AttentionConfig& config) {
  return !config.masking.active() && numerics_of(config).has_value();
}

namespace {

bool run_float_flash_portable(const AttentionConfig& config, const AttentionInputs& inputs,
                              AttentionOutputs& out, int64_t p) {
  const AttentionShape& s = inputs.shape;
  Problem pr(config, s, *numerics_of(config));
  const int64_t nq = s.nq, nk = s.nk, d = s.d, dv = s.dv;
  const bool forward = !inputs.has_forward();
  std::vector<float> o, shift(nq);
  bool floats = to_floats(inputs.q.data() + p * nq * d, nq * d, pr.q) &&
                to_floats(inputs.k.data() + p * nk * d, nk * d, pr.k) &&
                to_floats(inputs.v.data() + p * nk * dv, nk * dv, pr.v);
  if (inputs.has_grad()) {
    floats = floats && to_floats(inputs.d_out.data() + p * nq * dv, nq * dv, pr.d_out);
    if (!forward) {
      floats = floats && to_floats(inputs.o.data() + p * nq * dv, nq * dv, o);
    }
  }
  if (!floats) return false;
  pr.qt = pr.tile_transposed(pr.q, d);
  if (forward)
    pr.forward(out.o.data() + p * nq * dv, out.lse.data() + p * nq,
               out.row_sum.empty() ? nullptr : out.row_sum.data() + p * nq, o);
  if (inputs.has_grad()) {
    // The LSE as the backward pass reads it: the forward pass's, or the given one.
    const double* lse = forward ? out.lse.data() + p * nq : inputs.lse.data() + p * nq;
    for (int64_t i = 0; i < nq; ++i) shift[i] = pr.shift_from_lse(lse[i]);
    pr.d_out_t = pr.tile_transposed(pr.d_out, dv);
    pr.backward(o, shift, out.dq.data() + p * nq * d, out.dk.data() + p * nk * d,
                out.dv.data() + p * nk * dv, out.delta.data() + p * nq);
  }
  return true;
}

// The whole problem compiled for each x86-64 level (cpu_level.hpp): its loops of fmaf, float
// exp2 and conversions vectorise only where the level has the instructions.
[[SIMPREC_TARGET_V3]] bool run_float_flash_v3(const AttentionConfig& config,
                                              const AttentionInputs& inputs, AttentionOutputs& out,
                                              int64_t p) {
  return run_float_flash_portable(config, inputs, out, p);
}
[[SIMPREC_TARGET_V4]] bool run_float_flash_v4(const AttentionConfig& config,
                                              const AttentionInputs& inputs, AttentionOutputs& out,
                                              int64_t p) {
  return run_float_flash_portable(config, inputs, out, p);
}

}  // namespace

bool run_float_flash(const AttentionConfig& config, const AttentionInputs& inputs,
                     AttentionOutputs& out, int64_t p) {
  return for_this_cpu(run_float_flash_portable, run_float_flash_v3, run_float_flash_v4)(
      config, inputs, out, p);
}

}  // namespace simprec::attention
