#include "lib/attention/float_flash.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>
#if defined(__AVX512F__) && defined(__AVX512DQ__)
#include <immintrin.h>
#define SIMPREC_FLOAT_FLASH_AVX512 1
#endif

#include "emulation/elementary.hpp"
#include "lib/attention/product.hpp"

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
// SiteRounder::round_exact rounds it: through round-to-odd at double precision.
float mul_rounded(float a, double b) {
  const double hi = a * b;
  const double lo = std::fma(static_cast<double>(a), b, -hi);
  return static_cast<float>(lo == 0.0 ? hi : SiteRounder::to_odd(hi, lo));
}

// out[i] = mul_rounded(x[i], b) for i < n.
void mul_rounded(const float* x, double b, float* out, int64_t n) {
  int64_t i = 0;
#if defined(SIMPREC_FLOAT_FLASH_AVX512)
  const __m512d vb = _mm512_set1_pd(b);
  const __m512d zero = _mm512_setzero_pd();
  const __m512i one = _mm512_set1_epi64(1);
  for (; i + 8 <= n; i += 8) {
    const __m512d xd = _mm512_cvtps_pd(_mm256_loadu_ps(x + i));
    const __m512d hi = _mm512_mul_pd(xd, vb);
    const __m512d lo = _mm512_fmsub_pd(xd, vb, hi);
    // to_odd where lo != 0: one step toward zero when lo points inward, then the last bit set.
    const __mmask8 inexact = _mm512_cmp_pd_mask(lo, zero, _CMP_NEQ_UQ);
    const __mmask8 inward = inexact & (_mm512_cmp_pd_mask(hi, zero, _CMP_GT_OQ) ^
                                       _mm512_cmp_pd_mask(lo, zero, _CMP_GT_OQ));
    __m512i bits = _mm512_castpd_si512(hi);
    bits = _mm512_mask_sub_epi64(bits, inward, bits, one);
    bits = _mm512_mask_or_epi64(bits, inexact, bits, one);
    _mm256_storeu_ps(out + i, _mm512_cvtpd_ps(_mm512_castsi512_pd(bits)));
  }
#endif
  for (; i < n; ++i) out[i] = mul_rounded(x[i], b);
}

// A problem's tensors as floats, with the transposed tiles the products read: the S^T tile of
// query tile [i0, i0 + br) is K_tile Q_tile^T, whose right operand is the d x br block of qt at
// qt + i0 * d (and likewise dO^T's blocks for dP^T = V_tile dO_tile^T).
struct Problem {
  int64_t nq, nk, d, dv, br_max, bc_max;
  double scale;
  bool causal;
  std::vector<float> q, k, v, d_out, qt, d_out_t;

  Problem(const AttentionConfig& c, const AttentionShape& s)
      : nq(s.nq),
        nk(s.nk),
        d(s.d),
        dv(s.dv),
        br_max(c.block_rows),
        bc_max(c.block_cols),
        scale(softmax_scale(c, s)),
        causal(c.causal) {}

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

  // S^T (bc x br) of query tile [i0, i0 + br) and key tile [j0, j0 + bc), masked keys -inf.
  void scores(int64_t i0, int64_t br, int64_t j0, int64_t bc, float* st) const {
    std::fill(st, st + bc * br, 0.0f);
    float_sequential_strided(bc, br, d, k.data() + j0 * d, d, 1, qt.data() + i0 * d, br, st, br);
    if (!causal || j0 + bc - 1 <= i0) return;
    for (int64_t j = 0; j < bc; ++j) {
      for (int64_t i = 0; i < std::min(br, j0 + j - i0); ++i) st[j * br + i] = -kInf;
    }
  }

  // P^T from S^T: exp(round(s * scale) - shift[i]) at fp32, 0 for masked keys; in place.
  void probabilities(float* st, int64_t bc, int64_t br, const float* shift,
                     std::vector<float>& arg) const {
    arg.resize(bc * br);
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
  // l += rowsum(P) and acc += P V. st, shift and block_max hold a tile's rows, arg is scratch.
  void forward_tile(int64_t i0, int64_t br, int64_t j0, int64_t bc, float* acc, float* m, float* l,
                    float* st, float* shift, float* block_max, std::vector<float>& arg) const {
    scores(i0, br, j0, bc, st);
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
      const float next_shift = mul_rounded(m_new, scale);
      if (m[i] != -kInf && m_new != m[i]) {
        const double diff = static_cast<double>(m[i]) - static_cast<double>(m_new);
        const float alpha = static_cast<float>(std::exp(scale * diff));
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
    float_sequential_strided(br, dv, bc, st, 1, br, v.data() + j0 * dv, dv, acc, dv);
  }

  void forward(double* o_out, double* lse_out, std::vector<float>& o, std::vector<float>& lse) {
    o.assign(nq * dv, 0.0f);
    lse.assign(nq, 0.0f);
    std::vector<float> st(bc_max * br_max), arg, acc(br_max * dv), m(br_max), l(br_max),
        shift(br_max), block_max(br_max);
    for (int64_t i0 = 0; i0 < nq; i0 += br_max) {
      const int64_t i1 = std::min(nq, i0 + br_max), br = i1 - i0;
      std::fill(acc.begin(), acc.end(), 0.0f);
      std::fill(m.begin(), m.end(), -kInf);
      std::fill(l.begin(), l.end(), 0.0f);
      for (int64_t j0 = 0; j0 < nk; j0 += bc_max) {
        if (causal && j0 > i1 - 1) break;
        forward_tile(i0, br, j0, std::min(nk, j0 + bc_max) - j0, acc.data(), m.data(), l.data(),
                     st.data(), shift.data(), block_max.data(), arg);
      }
      for (int64_t i = 0; i < br; ++i) {
        const int64_t gi = i0 + i;
        const double li = l[i];
        const float inv = static_cast<float>(1.0 / li);
        for (int64_t c = 0; c < dv; ++c) {
          o[gi * dv + c] = acc[i * dv + c] * inv;
          o_out[gi * dv + c] = o[gi * dv + c];
        }
        lse[gi] = static_cast<float>(static_cast<double>(m[i]) * scale + std::log(li));
        lse_out[gi] = lse[gi];
      }
    }
  }

  void backward(const std::vector<float>& o, const std::vector<float>& lse, double* dq_out,
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
    std::vector<float> st(bc_max * br_max), dpt(bc_max * br_max), arg, dq_acc(nq * d, 0.0f),
        dk_acc(kKeyGroup * bc_max * d), dv_acc(kKeyGroup * bc_max * dv);
    for (int64_t g0 = 0; g0 < nk; g0 += kKeyGroup * bc_max) {
      const int64_t g1 = std::min(nk, g0 + kKeyGroup * bc_max);
      std::fill(dk_acc.begin(), dk_acc.end(), 0.0f);
      std::fill(dv_acc.begin(), dv_acc.end(), 0.0f);
      for (int64_t i0 = 0; i0 < nq; i0 += br_max) {
        const int64_t i1 = std::min(nq, i0 + br_max), br = i1 - i0;
        for (int64_t j0 = g0; j0 < g1; j0 += bc_max) {
          const int64_t bc = std::min(nk, j0 + bc_max) - j0;
          if (causal && j0 > i1 - 1) break;
          float* dk_tile = dk_acc.data() + (j0 - g0) * d;
          float* dv_tile = dv_acc.data() + (j0 - g0) * dv;
          scores(i0, br, j0, bc, st.data());
          probabilities(st.data(), bc, br, lse.data() + i0, arg);  // st now holds P^T
          // dV += P^T dO
          float_sequential_strided(bc, dv, br, st.data(), br, 1, d_out.data() + i0 * dv, dv,
                                   dv_tile, dv);
          // dP^T = V dO^T
          std::fill(dpt.begin(), dpt.begin() + bc * br, 0.0f);
          float_sequential_strided(bc, br, dv, v.data() + j0 * dv, dv, 1, d_out_t.data() + i0 * dv,
                                   br, dpt.data(), br);
          // dS^T = P o (dP - D), into dpt
          for (int64_t j = 0; j < bc; ++j) {
            const float* __restrict p = st.data() + j * br;
            float* __restrict ds = dpt.data() + j * br;
            const float* __restrict di = delta.data() + i0;
            for (int64_t i = 0; i < br; ++i) ds[i] = p[i] == 0.0f ? 0.0f : p[i] * (ds[i] - di[i]);
          }
          // dQ += dS K (dS read through its transpose); dK += dS^T Q
          float_sequential_strided(br, d, bc, dpt.data(), 1, br, k.data() + j0 * d, d,
                                   dq_acc.data() + i0 * d, d);
          float_sequential_strided(bc, d, br, dpt.data(), br, 1, q.data() + i0 * d, d, dk_tile, d);
        }
      }
      const int64_t keys = g1 - g0;
      mul_rounded(dk_acc.data(), scale, dk_acc.data(), keys * d);
      for (int64_t x = 0; x < keys * d; ++x) dk_out[g0 * d + x] = dk_acc[x];
      for (int64_t x = 0; x < keys * dv; ++x) dv_out[g0 * dv + x] = dv_acc[x];
    }
    mul_rounded(dq_acc.data(), scale, dq_acc.data(), nq * d);
    for (int64_t x = 0; x < nq * d; ++x) dq_out[x] = dq_acc[x];
  }
};

}  // namespace

bool float_flash_applies(const AttentionConfig& config) {
  if (config.trace) return false;
  // The configuration the fast path computes, with the given values of what it supports: equal
  // when their reports are. to_json records every option that changes results (reports must),
  // so an option added later keeps its configurations off this path until it learns them.
  AttentionConfig supported;
  supported.preset = config.preset;
  supported.low_precision = config.low_precision;
  supported.algorithm = Algorithm::kFlash;
  supported.exp_impl = ExpImpl::kNatural;
  for (SiteSpec& site : supported.sites) site = SiteSpec{formats::fp32, Rounding{}, "sequential"};
  supported.site(Site::kInput) = config.site(Site::kInput);
  supported.block_rows = config.block_rows;
  supported.block_cols = config.block_cols;
  supported.causal = config.causal;
  supported.scale = config.scale;
  supported.seed = config.seed;
  supported.mitigations = config.mitigations;
  supported.overrides = config.overrides;
  supported.exp2_table = config.exp2_table;  // read by the exp2 implementations only
  return to_json(supported) == to_json(config);
}

bool run_float_flash(const AttentionConfig& config, const AttentionInputs& inputs,
                     AttentionOutputs& out, int64_t p) {
  const AttentionShape& s = inputs.shape;
  Problem pr(config, s);
  const int64_t nq = s.nq, nk = s.nk, d = s.d, dv = s.dv;
  const bool forward = !inputs.has_forward();
  std::vector<float> o, lse;
  bool floats = to_floats(inputs.q.data() + p * nq * d, nq * d, pr.q) &&
                to_floats(inputs.k.data() + p * nk * d, nk * d, pr.k) &&
                to_floats(inputs.v.data() + p * nk * dv, nk * dv, pr.v);
  if (inputs.has_grad()) {
    floats = floats && to_floats(inputs.d_out.data() + p * nq * dv, nq * dv, pr.d_out);
    if (!forward) {
      floats = floats && to_floats(inputs.o.data() + p * nq * dv, nq * dv, o);
      // The backward pass's shift is the LSE rounded at exp_arg.
      lse.resize(nq);
      for (int64_t i = 0; i < nq; ++i) lse[i] = static_cast<float>(inputs.lse[p * nq + i]);
    }
  }
  if (!floats) return false;
  pr.qt = pr.tile_transposed(pr.q, d);
  if (forward) pr.forward(out.o.data() + p * nq * dv, out.lse.data() + p * nq, o, lse);
  if (inputs.has_grad()) {
    pr.d_out_t = pr.tile_transposed(pr.d_out, dv);
    pr.backward(o, lse, out.dq.data() + p * nq * d, out.dk.data() + p * nk * d,
                out.dv.data() + p * nk * dv, out.delta.data() + p * nq);
  }
  return true;
}

}  // namespace simprec::attention
