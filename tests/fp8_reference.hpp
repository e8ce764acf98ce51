// A scalar FP8 flash-attention forward pass written from docs/fp8_attention.md, one query row at
// a time, for the tests of the fa3-fp8 numerics and its scaled inputs: the wgmma fp8 chains
// (one level or two), lazy rescaling, P times p_scale cast to e4m3, the descale of the scores
// and of O. It uses the emulation core (rounding, exact products, correctly rounded exp,
// tensor_core_dot with the wgmma model) and MPFR for fp32 quotients and sums, nothing of
// lib/attention.
#pragma once

#include <mpfr.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <numbers>
#include <vector>

#include "emulation/elementary.hpp"
#include "emulation/round.hpp"
#include "emulation/tensor_core.hpp"

namespace fp8_reference {

using namespace simprec;

inline double to_format(const Format& f, double x) {
  return decode(f, round_to_format(f, unrounded_from_double(x), Rounding{}));
}
inline float fp32(double x) {
  return static_cast<float>(to_format(formats::fp32, x));
}
// op(a, b) correctly rounded to fp32 by MPFR at 24 bits (normal results): a / b and a + b.
inline float fp32_op(int (*op)(mpfr_ptr, mpfr_srcptr, mpfr_srcptr, mpfr_rnd_t), double a,
                     double b) {
  mpfr_t x, y, z;
  mpfr_inits2(53, x, y, static_cast<mpfr_ptr>(nullptr));
  mpfr_init2(z, 24);
  mpfr_set_d(x, a, MPFR_RNDN);
  mpfr_set_d(y, b, MPFR_RNDN);
  op(z, x, y, MPFR_RNDN);
  const double r = mpfr_get_d(z, MPFR_RNDN);
  mpfr_clears(x, y, z, static_cast<mpfr_ptr>(nullptr));
  return static_cast<float>(r);
}
inline float fp32_div(double a, double b) {
  return fp32_op(mpfr_div, a, b);
}
inline float fp32_add(double a, double b) {
  return fp32_op(mpfr_add, a, b);
}

// c + sum a[i] b[i * sb] by the H100 wgmma e4m3 model (a, b values of e4m3fn).
inline float wgmma_dot(const double* a, const double* b, int64_t sb, int64_t n, float c) {
  const TensorCoreModel& model = tensor_core_model("tc:sm90-wgmma-e4m3");
  std::vector<uint16_t> ab(n), bb(n);
  for (int64_t x = 0; x < n; ++x) {
    ab[x] =
        static_cast<uint16_t>(round_to_format(formats::e4m3fn, unrounded_from_double(a[x]), {}));
    bb[x] = static_cast<uint16_t>(
        round_to_format(formats::e4m3fn, unrounded_from_double(b[x * sb]), {}));
  }
  return std::bit_cast<float>(tensor_core_dot(model, ab.data(), 1, bb.data(), 1,
                                              static_cast<int>(n), std::bit_cast<uint32_t>(c)));
}

struct Fp8Spec {
  int block_cols = 128;
  double scale = 0;  // the softmax scale: alpha = exp(scale (m_old - m_new)), lazy's threshold
  int promote = 0;   // two-level: key blocks per chain; 0: one chain
  double lazy = 0;   // lazy rescaling threshold in log2 units; 0: none
  double p_scale = 256;
  double c = 0;  // the exponent constant; 0: fp32(scale log2 e)
  // Scaled inputs: the fp32 factor score (i, j) is multiplied by in fp32 (empty: none), and V's
  // scale per channel, O's normalisation times it in fp32 (empty: none).
  std::function<float(int64_t, int64_t)> score_descale;
  std::vector<double> v_scale;
  bool exact_scores = false;  // S = q.k exactly (integer inputs), not by the wgmma model
  bool alpha_exp2 = false;    // alpha = exp2(fp32(m_old - m_new)) (scores in log2 units)
  Format out = formats::bf16;
};

// O (values of spec.out) of one problem, q, k, v row-major e4m3 values (nq x d, nk x d, nk x d).
inline std::vector<double> fp8_forward(const Fp8Spec& spec, int64_t nq, int64_t nk, int64_t d,
                                       const double* q, const double* k, const double* v) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const float c = spec.c != 0 ? static_cast<float>(spec.c) : fp32(spec.scale * std::numbers::log2e);
  std::vector<double> o(nq * d), s(spec.block_cols), p_cast(spec.block_cols);
  for (int64_t i = 0; i < nq; ++i) {
    double m = -kInf;
    float shift = 0, l = 0;
    std::vector<float> acc(d, 0.0f), chain(d, 0.0f);
    bool open = false;
    int64_t tile = 0;
    for (int64_t j0 = 0; j0 < nk; j0 += spec.block_cols, ++tile) {
      const int64_t bc = std::min<int64_t>(spec.block_cols, nk - j0);
      double block_max = -kInf;
      for (int64_t j = 0; j < bc; ++j) {
        if (spec.exact_scores) {
          s[j] = 0;
          for (int64_t x = 0; x < d; ++x) s[j] += q[i * d + x] * k[(j0 + j) * d + x];
        } else {
          s[j] = wgmma_dot(q + i * d, k + (j0 + j) * d, 1, d, 0.0f);
        }
        if (spec.score_descale) s[j] = fp32(s[j] * spec.score_descale(i, j0 + j));
        block_max = std::max(block_max, s[j]);
      }
      double m_new = std::max(m, block_max);
      if (spec.lazy > 0 && m != -kInf &&
          (m_new - m) * spec.scale * std::numbers::log2e <= spec.lazy) {
        m_new = m;  // growth within the threshold: keep the max, P may exceed 1
      }
      const float new_shift = fp32(m_new * static_cast<double>(c));  // exact product, rounded
      if (m != -kInf && m_new != m) {
        RoundingContext ctx(formats::fp32);
        const float alpha = static_cast<float>(
            decode(formats::fp32, spec.alpha_exp2 ? exp2_of(ctx, fp32(m - m_new))
                                                  : exp_of(ctx, spec.scale * (m - m_new))));
        l *= alpha;
        for (float& x : acc) x *= alpha;
        for (float& x : chain) x *= alpha;
      }
      m = m_new;
      shift = new_shift;
      for (int64_t j = 0; j < bc; ++j) {
        const float arg = std::fma(static_cast<float>(s[j]), c, -shift);
        RoundingContext ctx(formats::fp32);
        const float p = static_cast<float>(decode(formats::fp32, exp2_of(ctx, arg)));
        l += p;
        p_cast[j] = to_format(formats::e4m3fn, p * spec.p_scale);
      }
      if (spec.promote == 0) {
        for (int64_t x = 0; x < d; ++x)
          acc[x] = wgmma_dot(p_cast.data(), v + j0 * d + x, d, bc, acc[x]);
        continue;
      }
      const bool first = tile % spec.promote == 0;
      for (int64_t x = 0; x < d; ++x)
        chain[x] = wgmma_dot(p_cast.data(), v + j0 * d + x, d, bc, first ? 0.0f : chain[x]);
      open = true;
      if ((tile + 1) % spec.promote == 0) {
        for (int64_t x = 0; x < d; ++x) acc[x] += chain[x];
        open = false;
      }
    }
    if (open) {
      for (int64_t x = 0; x < d; ++x) acc[x] += chain[x];
    }
    const float inv = 1.0f / l;
    for (int64_t x = 0; x < d; ++x) {
      const float unscaled = acc[x] * static_cast<float>(1.0 / spec.p_scale);
      const float norm = spec.v_scale.empty() ? inv : inv * static_cast<float>(spec.v_scale[x]);
      o[i * d + x] = to_format(spec.out, unscaled * norm);
    }
  }
  return o;
}

}  // namespace fp8_reference
