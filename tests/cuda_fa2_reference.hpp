// An independent scalar implementation of the cuda-fa2 numerics (docs/attention.md, "cuda-fa2"),
// written plainly from the kernel's description one query row at a time, for one problem
// (batch x head): what the tests compare lib/attention's emulation with, and what the fake
// flash plugin of the validate tests runs as its kernel. It uses the emulation core (rounding,
// exact products, tensor_core_dot) and nothing of lib/attention.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

#include "emulation/arithmetic.hpp"
#include "emulation/elementary.hpp"
#include "emulation/format.hpp"
#include "emulation/round.hpp"
#include "emulation/tensor_core.hpp"
#include "emulation/tiled_random.hpp"

namespace simprec::testing {

struct FlashSpec {
  Format f = formats::bf16;    // Q, K, V, dO, P and dS
  Format out = formats::bf16;  // O, dQ, dK, dV
  int block_rows = 64, block_cols = 64;
  bool causal = false;
  double scale = 0.125;
  bool beta_rowmax = false;
  double beta = 2.0, eps = 1e-3;
  int sr_bits = 0;  // stochastic rounding of P with tiled_random bits; 0: nearest
  uint64_t seed = 0;
  std::function<float(float)> exp2;  // the device's exp2
};

// The correctly rounded fp32 exp2.
inline float correctly_rounded_exp2(float x) {
  RoundingContext ctx(formats::fp32);
  return static_cast<float>(decode(formats::fp32, simprec::exp2_of(ctx, x)));
}

namespace cuda_fa2_detail {

inline double to_format(const Format& f, double x, Rounding r = {}, uint32_t random = 0) {
  return decode(f, round_to_format(f, unrounded_from_double(x), r, random));
}
// round(a*b) into f from the exact product.
inline double exact_product(const Format& f, double a, double b) {
  return decode(f, round_to_format(f, exact_mul(unrounded_from_double(a), unrounded_from_double(b)),
                                   Rounding{}));
}
inline std::string mma_model(const Format& f) {
  if (f == formats::bf16) return "tc:sm90-mma-bf16";
  if (f == formats::fp16) return "tc:sm90-mma-fp16";
  return "tc:sm90-mma-e4m3";
}
// c + sum a[i*sa] b[i*sb] through the mma.sync model (a and b values of f, c an fp32 value).
inline float mma_dot(const Format& f, const double* a, int64_t sa, const double* b, int64_t sb,
                     int64_t n, float c) {
  const TensorCoreModel& model = tensor_core_model(mma_model(f));
  std::vector<uint16_t> ab(n), bb(n);
  for (int64_t x = 0; x < n; ++x) {
    ab[x] = static_cast<uint16_t>(round_to_format(f, unrounded_from_double(a[x * sa]), {}));
    bb[x] = static_cast<uint16_t>(round_to_format(f, unrounded_from_double(b[x * sb]), {}));
  }
  const uint32_t d = tensor_core_dot(model, ab.data(), 1, bb.data(), 1, static_cast<int>(n),
                                     std::bit_cast<uint32_t>(c));
  return std::bit_cast<float>(d);
}
inline float scale_log2(double scale) {
  return static_cast<float>(scale * std::numbers::log2e);
}
// The score of query row i against key j (masked: -inf).
inline float score(const FlashSpec& spec, int64_t d, const double* q, const double* k, int64_t i,
                   int64_t j) {
  if (spec.causal && j > i) return -std::numeric_limits<float>::infinity();
  return mma_dot(spec.f, q + i * d, 1, k + j * d, 1, d, 0.0f);
}

}  // namespace cuda_fa2_detail

// O (nq x d, values of spec.out) and LSE (nq) of one problem; q, k, v row-major values of
// spec.f (nq x d, nk x d, nk x d). `problem` is b*H + h, for the random bits of P.
inline void flash_forward(const FlashSpec& spec, uint32_t problem, int64_t nq, int64_t nk,
                          int64_t d, const double* q, const double* k, const double* v, double* o,
                          float* lse) {
  using namespace cuda_fa2_detail;
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const float c = scale_log2(spec.scale);
  std::vector<double> s(spec.block_cols), p_cast(spec.block_cols);
  for (int64_t i = 0; i < nq; ++i) {
    // The last row of i's query block: key blocks starting after it are skipped.
    const int64_t row_block_end = std::min(nq, (i / spec.block_rows + 1) * spec.block_rows) - 1;
    double m = -kInf;
    float shift = 0;
    float partial[4] = {0, 0, 0, 0};
    std::vector<float> acc(d, 0.0f);
    for (int64_t j0 = 0; j0 < nk; j0 += spec.block_cols) {
      if (spec.causal && j0 > row_block_end) break;
      const int64_t bc = std::min<int64_t>(spec.block_cols, nk - j0);
      double block_max = -kInf;
      for (int64_t j = 0; j < bc; ++j) {
        s[j] = score(spec, d, q, k, i, j0 + j);
        block_max = std::max(block_max, s[j]);
      }
      if (spec.beta_rowmax && block_max != -kInf) {
        // In fp32, as the kernels compute it: one float subtraction for the threshold, one
        // float product (beta taken to fp32) for the shifted max.
        const auto m1 = static_cast<float>(block_max);  // a score: fp32
        const float threshold = m1 - static_cast<float>(spec.eps / spec.scale);
        int repeats = 0;
        for (int64_t j = 0; j < bc; ++j) repeats += s[j] >= threshold;
        if (repeats > 1) block_max = m1 > 0 ? static_cast<float>(spec.beta) * m1 : 0.0f;
      }
      const double m_new = std::max(m, block_max);
      if (m_new == -kInf) continue;  // unreachable with top-left causal masks
      const auto new_shift = static_cast<float>(exact_product(formats::fp32, m_new, c));
      if (m != -kInf && m_new != m) {
        const float alpha = spec.exp2(shift - new_shift);
        for (float& l : partial) l *= alpha;
        for (float& x : acc) x *= alpha;
      }
      m = m_new;
      shift = new_shift;
      for (int64_t j = 0; j < bc; ++j) {
        const float p =
            s[j] == -kInf ? 0.0f : spec.exp2(std::fma(static_cast<float>(s[j]), c, -shift));
        partial[(j % 8) / 2] += p;
        Rounding r{};
        uint32_t random = 0;
        if (spec.sr_bits > 0) {
          r = Rounding{RoundingMode::kStochastic, spec.sr_bits};
          random = tiled_random::p_draw(spec.seed, problem, static_cast<uint32_t>(i),
                                        static_cast<uint32_t>(j0 + j), spec.sr_bits);
        }
        p_cast[j] = to_format(spec.f, p, r, random);
      }
      for (int64_t x = 0; x < d; ++x)
        acc[x] = mma_dot(spec.f, p_cast.data(), 1, v + j0 * d + x, d, bc, acc[x]);
    }
    const float l = (partial[0] + partial[2]) + (partial[1] + partial[3]);
    const float inv = 1.0f / l;
    for (int64_t x = 0; x < d; ++x) o[i * d + x] = to_format(spec.out, acc[x] * inv);
    lse[i] = static_cast<float>(m * spec.scale + std::log(static_cast<double>(l)));
  }
}

// dQ, dK, dV (values of spec.out) of one problem from Q, K, V, O, dO (values) and the LSE:
// the FA2 backward with key blocks outside and query blocks inside, every accumulation
// deterministic.
inline void flash_backward(const FlashSpec& spec, int64_t nq, int64_t nk, int64_t d,
                           const double* q, const double* k, const double* v, const double* o,
                           const double* d_out, const float* lse, double* dq, double* dk,
                           double* dv) {
  using namespace cuda_fa2_detail;
  const float c = scale_log2(spec.scale);
  std::vector<float> delta(nq), shift(nq);
  for (int64_t i = 0; i < nq; ++i) {
    float sum = 0;
    for (int64_t x = 0; x < d; ++x)
      sum = std::fma(static_cast<float>(d_out[i * d + x]), static_cast<float>(o[i * d + x]), sum);
    delta[i] = sum;
    shift[i] = static_cast<float>(exact_product(formats::fp32, lse[i], std::numbers::log2e));
  }
  std::vector<float> dq_acc(nq * d, 0.0f);
  const int64_t br_max = spec.block_rows, bc_max = spec.block_cols;
  for (int64_t j0 = 0; j0 < nk; j0 += bc_max) {
    const int64_t bc = std::min(bc_max, nk - j0);
    std::vector<float> dk_acc(bc * d, 0.0f), dv_acc(bc * d, 0.0f);
    for (int64_t i0 = 0; i0 < nq; i0 += br_max) {
      const int64_t br = std::min(br_max, nq - i0);
      if (spec.causal && j0 > i0 + br - 1) continue;
      // P, its cast and dS of the tile, stored key-major (column j of the tile is contiguous).
      std::vector<double> p_t(bc * br), ds(br * bc), ds_t(bc * br);
      for (int64_t i = 0; i < br; ++i) {
        for (int64_t j = 0; j < bc; ++j) {
          const float s = score(spec, d, q, k, i0 + i, j0 + j);
          const float p = std::isinf(s) ? 0.0f : spec.exp2(std::fma(s, c, -shift[i0 + i]));
          p_t[j * br + i] = to_format(spec.f, p);
          const float dp = mma_dot(spec.f, d_out + (i0 + i) * d, 1, v + (j0 + j) * d, 1, d, 0.0f);
          const double x = p == 0 ? 0.0 : to_format(spec.f, p * (dp - delta[i0 + i]));
          ds[i * bc + j] = x;
          ds_t[j * br + i] = x;
        }
      }
      for (int64_t j = 0; j < bc; ++j) {
        for (int64_t x = 0; x < d; ++x) {
          dv_acc[j * d + x] =
              mma_dot(spec.f, p_t.data() + j * br, 1, d_out + i0 * d + x, d, br, dv_acc[j * d + x]);
        }
      }
      for (int64_t i = 0; i < br; ++i) {
        for (int64_t x = 0; x < d; ++x) {
          float& a = dq_acc[(i0 + i) * d + x];
          a = mma_dot(spec.f, ds.data() + i * bc, 1, k + j0 * d + x, d, bc, a);
        }
      }
      for (int64_t j = 0; j < bc; ++j) {
        for (int64_t x = 0; x < d; ++x) {
          dk_acc[j * d + x] =
              mma_dot(spec.f, ds_t.data() + j * br, 1, q + i0 * d + x, d, br, dk_acc[j * d + x]);
        }
      }
    }
    for (int64_t x = 0; x < bc * d; ++x) {
      dk[j0 * d + x] = exact_product(spec.out, dk_acc[x], spec.scale);
      dv[j0 * d + x] = to_format(spec.out, dv_acc[x]);
    }
  }
  for (int64_t x = 0; x < nq * d; ++x) dq[x] = exact_product(spec.out, dq_acc[x], spec.scale);
}

}  // namespace simprec::testing
