// tensor_core_gemm: the block-FMA model over whole matrices.
//
// The fast path (16-bit inputs, fp32 accumulator, C in the first block, truncation toward zero:
// every sm_90 bf16/fp16 preset) computes each block in doubles where that is exact:
//   - a product of two 16-bit values has at most 22 significant bits: exact in a double;
//   - scaling by 2^(F - emax) is exact, and truncating the scaled term (std::trunc, one
//     vector instruction) drops exactly the bits below the window;
//   - each truncated term is an integer below 2^(F+2) = 2^27, so 17 of them add exactly;
//   - the sum times 2^(emax - F) is exact, and clearing its low 29 bits truncates it to fp32's
//     24-bit significand (toward zero) as long as it is a normal fp32 number.
// Outputs that leave that ground (NaN/infinity operands, a zero, subnormal or overflowing
// block result anywhere in the chain) are recomputed by tensor_core_dot, the integer reference.
// So both paths give identical bits; tests/tensor_core_test.cpp checks it.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "emulation/tensor_core.hpp"

namespace simprec {
namespace {

constexpr int kZeroExponent = -2000;  // operand exponent of a zero: below every real product

bool fast_path_applies(const TensorCoreModel& m) {
  return (m.input == formats::bf16 || m.input == formats::fp16) && m.accumulator == formats::fp32 &&
         m.c_entry == CEntry::kFirstBlock && m.grouping == KGrouping::kContiguous &&
         m.alignment == AlignmentExponent::kOperandSum && m.truncation == TermTruncation::kTowardZero &&
         m.block_rounding == RoundingMode::kTowardZero && m.block_result_precision == 24 &&
         !m.datapath_input && m.k % m.block_size == 0 && m.kept_fraction_bits <= 27;
}

// Exact value and operand exponent of a 16-bit encoding; finite = false for NaN/infinity.
struct Unpacked16 {
  double value;
  int exponent;
  bool finite;
};
Unpacked16 unpack16(const Format& f, uint16_t bits) {
  const uint64_t mag = bits & f.magnitude_mask();
  const int field = static_cast<int>(mag >> f.mantissa_bits);
  const double sign = (bits & f.sign_mask()) ? -1.0 : 1.0;
  if (field == static_cast<int>(f.exponent_field_max())) return {0.0, kZeroExponent, false};
  const double frac = static_cast<double>(mag & f.mantissa_mask());
  if (field == 0) {
    if (frac == 0) return {sign * 0.0, kZeroExponent, true};
    return {sign * std::ldexp(frac, f.emin() - f.mantissa_bits), f.emin(), true};
  }
  return {sign * std::ldexp(frac + std::ldexp(1.0, f.mantissa_bits), field - f.bias - f.mantissa_bits),
          field - f.bias, true};
}

inline double pow2(int e) {  // 2^e for -1022 <= e <= 1023, built from its bits
  const uint64_t bits = static_cast<uint64_t>(e + 1023) << 52;
  double d;
  std::memcpy(&d, &bits, 8);
  return d;
}

// Operand exponent of an fp32 value held in a double: emin for subnormals, very low for zero.
inline int fp32_operand_exponent(double x) {
  uint64_t bits;
  std::memcpy(&bits, &x, 8);
  const int e = static_cast<int>((bits >> 52) & 0x7ff) - 1023;
  if (x == 0) return kZeroExponent;
  return e < -126 ? -126 : e;
}

constexpr int kChunk = 64;  // columns processed together: the working set stays in L1

void fast_rows(const TensorCoreModel& model, int row_begin, int row_end, int n, int k,
               const std::vector<double>& av, const std::vector<int32_t>& ae,
               const std::vector<double>& bv, const std::vector<int32_t>& be,
               std::span<const uint32_t> c, std::vector<uint32_t>& d, std::vector<uint8_t>& redo) {
  const int bs = model.block_size;
  const int F = model.kept_fraction_bits;
  alignas(64) double acc[kChunk], sum[kChunk], scale[kChunk], unscale[kChunk];
  alignas(64) int32_t emax[kChunk];
  alignas(64) uint8_t bad[kChunk];
  for (int j0 = 0; j0 < n; j0 += kChunk) {
    const int w = std::min(kChunk, n - j0);
    for (int i = row_begin; i < row_end; ++i) {
      for (int j = 0; j < w; ++j) {
        float cf;
        std::memcpy(&cf, &c[static_cast<size_t>(i) * n + j0 + j], 4);
        acc[j] = cf;
        bad[j] = !std::isfinite(cf);
      }
      for (int kb = 0; kb < k; kb += bs) {
        for (int j = 0; j < w; ++j) emax[j] = fp32_operand_exponent(acc[j]);
        for (int kk = kb; kk < kb + bs; ++kk) {
          const int32_t ea = ae[static_cast<size_t>(i) * k + kk];
          const int32_t* eb = &be[static_cast<size_t>(kk) * n + j0];
#pragma GCC ivdep
          for (int j = 0; j < w; ++j) emax[j] = std::max(emax[j], ea + eb[j]);
        }
        for (int j = 0; j < w; ++j) {
          const int e = std::max(emax[j], -900);
          scale[j] = pow2(F - e);
          unscale[j] = pow2(e - F);
          sum[j] = std::trunc(acc[j] * scale[j]);
        }
        for (int kk = kb; kk < kb + bs; ++kk) {
          const double a = av[static_cast<size_t>(i) * k + kk];
          const double* b = &bv[static_cast<size_t>(kk) * n + j0];
#pragma GCC ivdep
          for (int j = 0; j < w; ++j) sum[j] += std::trunc(a * b[j] * scale[j]);
        }
        for (int j = 0; j < w; ++j) {
          const double r = sum[j] * unscale[j];  // exact: a power of two
          uint64_t bits;
          std::memcpy(&bits, &r, 8);
          bits &= ~((uint64_t{1} << 29) - 1);  // truncate to 24 significant bits
          double t;
          std::memcpy(&t, &bits, 8);
          const double mag = std::fabs(t);
          bad[j] |= !(mag >= 0x1p-126 && mag < 0x1p128);
          acc[j] = t;
        }
      }
      for (int j = 0; j < w; ++j) {
        const auto f = static_cast<float>(acc[j]);
        std::memcpy(&d[static_cast<size_t>(i) * n + j0 + j], &f, 4);
        redo[static_cast<size_t>(i) * n + j0 + j] = bad[j];
      }
    }
  }
}

template <class Fn>
void parallel_rows(int m, unsigned threads, Fn&& fn) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  threads = std::min<unsigned>(threads, static_cast<unsigned>(std::max(1, m)));
  if (threads <= 1) {
    fn(0, m);
    return;
  }
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    const int begin = static_cast<int>(static_cast<int64_t>(m) * t / threads);
    const int end = static_cast<int>(static_cast<int64_t>(m) * (t + 1) / threads);
    pool.emplace_back([&fn, begin, end] { fn(begin, end); });
  }
  for (auto& th : pool) th.join();
}

}  // namespace

std::vector<uint32_t> tensor_core_gemm(const TensorCoreModel& model, std::span<const uint16_t> a,
                                       std::span<const uint16_t> b, std::span<const uint32_t> c,
                                       int m, int n, int k, unsigned threads) {
  if (m < 0 || n < 0 || k < 0 || a.size() != static_cast<size_t>(m) * k ||
      b.size() != static_cast<size_t>(k) * n || c.size() != static_cast<size_t>(m) * n) {
    throw std::invalid_argument("tensor_core_gemm: operand sizes do not match M=" + std::to_string(m) +
                                ", N=" + std::to_string(n) + ", K=" + std::to_string(k));
  }
  std::vector<uint32_t> d(static_cast<size_t>(m) * n);
  const auto reference = [&](int i, int j) {
    d[static_cast<size_t>(i) * n + j] =
        tensor_core_dot(model, a.data() + static_cast<size_t>(i) * k, 1, b.data() + j, n, k,
                        c[static_cast<size_t>(i) * n + j]);
  };
  if (!fast_path_applies(model) || k == 0) {
    parallel_rows(m, threads, [&](int begin, int end) {
      for (int i = begin; i < end; ++i)
        for (int j = 0; j < n; ++j) reference(i, j);
    });
    return d;
  }
  // K padded to whole instructions with zeros (what a kernel's zero-filled tile does).
  const int kp = (k + model.k - 1) / model.k * model.k;
  std::vector<double> av(static_cast<size_t>(m) * kp, 0.0), bv(static_cast<size_t>(kp) * n, 0.0);
  std::vector<int32_t> ae(static_cast<size_t>(m) * kp, kZeroExponent), be(static_cast<size_t>(kp) * n, kZeroExponent);
  std::vector<uint8_t> row_special(m, 0), col_special(n, 0);
  for (int i = 0; i < m; ++i)
    for (int kk = 0; kk < k; ++kk) {
      const Unpacked16 u = unpack16(model.input, a[static_cast<size_t>(i) * k + kk]);
      av[static_cast<size_t>(i) * kp + kk] = u.value;
      ae[static_cast<size_t>(i) * kp + kk] = u.exponent;
      row_special[i] |= !u.finite;
    }
  for (int kk = 0; kk < k; ++kk)
    for (int j = 0; j < n; ++j) {
      const Unpacked16 u = unpack16(model.input, b[static_cast<size_t>(kk) * n + j]);
      bv[static_cast<size_t>(kk) * n + j] = u.value;
      be[static_cast<size_t>(kk) * n + j] = u.exponent;
      col_special[j] |= !u.finite;
    }
  std::vector<uint8_t> redo(static_cast<size_t>(m) * n, 0);
  parallel_rows(m, threads, [&](int begin, int end) {
    fast_rows(model, begin, end, n, kp, av, ae, bv, be, c, d, redo);
    for (int i = begin; i < end; ++i)
      for (int j = 0; j < n; ++j)
        if (redo[static_cast<size_t>(i) * n + j] || row_special[i] || col_special[j]) reference(i, j);
  });
  return d;
}

}  // namespace simprec
