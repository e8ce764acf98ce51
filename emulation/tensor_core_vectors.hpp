// Test vectors for tensor-core probes: a pure function of (probe, tile index), shared by the GPU
// probe driver (kernels/probe_main.cu, compiled by nvcc's host compiler) and the CPU tests, so
// that the ground truth stores only the hardware's outputs and the inputs are regenerated.
// Self-contained C++17 on purpose: nvcc compiles it too. Never change a generator without
// re-measuring the data in tests/data/tensor_core/.
#pragma once

#include <cstdint>
#include <cstring>

namespace simprec::tc_vectors {

// Bit layout of an element format (enough to build encodings; NaN/inf rules by flag).
struct ElementFormat {
  int exponent_bits;
  int mantissa_bits;
  int bias;
  bool finite_nan;  // OCP e4m3fn: no infinity, S.1111.111 is the only NaN
  int width() const { return 1 + exponent_bits + mantissa_bits; }
  int emin() const { return 1 - bias; }
  int emax() const {
    return finite_nan ? (1 << exponent_bits) - 1 - bias : (1 << exponent_bits) - 2 - bias;
  }
};

inline constexpr ElementFormat kBf16{8, 7, 127, false};
inline constexpr ElementFormat kFp16{5, 10, 15, false};
inline constexpr ElementFormat kE4m3{4, 3, 7, true};
inline constexpr ElementFormat kE5m2{5, 2, 15, false};
inline constexpr ElementFormat kFp32{8, 23, 127, false};

enum class Instruction : uint8_t { kMmaSync, kWgmma };
enum class InputType : uint8_t { kBf16, kFp16, kE4m3, kE5m2 };
enum class AccumulatorType : uint8_t { kFp32, kFp16 };

inline const ElementFormat& element_format(InputType t) {
  switch (t) {
    case InputType::kBf16:
      return kBf16;
    case InputType::kFp16:
      return kFp16;
    case InputType::kE4m3:
      return kE4m3;
    case InputType::kE5m2:
      return kE5m2;
  }
  return kBf16;
}

// One probe: an instruction on one tile shape, repeated over `tiles` independent tiles.
struct Probe {
  const char* name;
  Instruction instruction;
  InputType input;
  AccumulatorType accumulator;
  int m, n, k;
  int tiles;
  uint64_t seed;
  int outputs() const { return m * n * tiles; }
  int output_bytes() const { return accumulator == AccumulatorType::kFp32 ? 4 : 2; }
};

// mma.sync m16n8k16 / m16n8k32: 8192 tiles x 128 outputs = 1,048,576 outputs per probe;
// wgmma m64n8k16 / m64n8k32: 2048 tiles x 512 outputs, the same count. The _k256 probes chain
// instructions over K = 256 (131,072 outputs each).
inline constexpr Probe kProbes[] = {
    {"mma_bf16_f32", Instruction::kMmaSync, InputType::kBf16, AccumulatorType::kFp32, 16, 8, 16,
     8192, 101},
    {"mma_fp16_f32", Instruction::kMmaSync, InputType::kFp16, AccumulatorType::kFp32, 16, 8, 16,
     8192, 102},
    {"mma_fp16_f16", Instruction::kMmaSync, InputType::kFp16, AccumulatorType::kFp16, 16, 8, 16,
     8192, 103},
    {"mma_e4m3_f32", Instruction::kMmaSync, InputType::kE4m3, AccumulatorType::kFp32, 16, 8, 32,
     8192, 104},
    {"mma_e5m2_f32", Instruction::kMmaSync, InputType::kE5m2, AccumulatorType::kFp32, 16, 8, 32,
     8192, 105},
    {"mma_e4m3_f16", Instruction::kMmaSync, InputType::kE4m3, AccumulatorType::kFp16, 16, 8, 32,
     8192, 106},
    {"wgmma_bf16_f32", Instruction::kWgmma, InputType::kBf16, AccumulatorType::kFp32, 64, 8, 16,
     2048, 201},
    {"wgmma_fp16_f32", Instruction::kWgmma, InputType::kFp16, AccumulatorType::kFp32, 64, 8, 16,
     2048, 202},
    {"wgmma_fp16_f16", Instruction::kWgmma, InputType::kFp16, AccumulatorType::kFp16, 64, 8, 16,
     2048, 203},
    {"wgmma_e4m3_f32", Instruction::kWgmma, InputType::kE4m3, AccumulatorType::kFp32, 64, 8, 32,
     2048, 204},
    {"wgmma_e5m2_f32", Instruction::kWgmma, InputType::kE5m2, AccumulatorType::kFp32, 64, 8, 32,
     2048, 205},
    {"wgmma_e4m3_f16", Instruction::kWgmma, InputType::kE4m3, AccumulatorType::kFp16, 64, 8, 32,
     2048, 206},
    // Chains: K = 256 as 16 (8) instructions, D of one the C of the next.
    {"mma_bf16_f32_k256", Instruction::kMmaSync, InputType::kBf16, AccumulatorType::kFp32, 16, 8,
     256, 1024, 301},
    {"mma_e4m3_f32_k256", Instruction::kMmaSync, InputType::kE4m3, AccumulatorType::kFp32, 16, 8,
     256, 1024, 302},
    {"wgmma_bf16_f32_k256", Instruction::kWgmma, InputType::kBf16, AccumulatorType::kFp32, 64, 8,
     256, 256, 303},
    {"wgmma_e4m3_f32_k256", Instruction::kWgmma, InputType::kE4m3, AccumulatorType::kFp32, 64, 8,
     256, 256, 304},
};
inline constexpr int kProbeCount = sizeof(kProbes) / sizeof(kProbes[0]);

// The input classes, cycled over tile index (tile % kClassCount).
enum TileClass : int {
  kNormal = 0,  // exponents near 0, C of similar size
  kWide,        // exponents over the whole format range
  kCancel,      // pairs of products that (nearly) cancel
  kSubnormal,   // subnormal inputs, products and C near the fp32/fp16 subnormal range
  kCDominant,   // C 2^-40 .. 2^40 times the products
  kAlignment,   // one large term, small terms 8..30 binades below: extra alignment bits
  kSpecials,    // zeros of both signs, infinities, NaN, extremes
  kOverflow,    // sums near the accumulator's largest finite value
  kZeroSum,     // products that cancel exactly: the sign of zero
  kSparseTies,  // one to three terms: ties and sticky bits of the final rounding
  kClassCount
};
inline const char* tile_class_name(int c) {
  static const char* const names[] = {"normal",     "wide",       "cancel",   "subnormal",
                                      "c_dominant", "alignment",  "specials", "overflow",
                                      "zero_sum",   "sparse_ties"};
  return c >= 0 && c < kClassCount ? names[c] : "?";
}

// splitmix64: small, fast and the same on every compiler.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [lo, hi] (inclusive).
  int range(int lo, int hi) {
    return lo + static_cast<int>(next() % static_cast<uint64_t>(hi - lo + 1));
  }
  bool chance(int one_in) { return next() % static_cast<uint64_t>(one_in) == 0; }
  uint32_t bits(int n) { return n == 0 ? 0u : static_cast<uint32_t>(next() >> (64 - n)); }

 private:
  uint64_t state_;
};

// Encoding of (-1)^negative * 1.mantissa * 2^exponent, clamped into the format: exponents below
// emin give the subnormal that truncation of the significand leaves (maybe zero), exponents
// above emax give emax. e4m3fn's NaN slot is avoided.
inline uint32_t encode(const ElementFormat& f, bool negative, int exponent, uint32_t mantissa) {
  mantissa &= (1u << f.mantissa_bits) - 1;
  uint32_t magnitude;
  if (exponent < f.emin()) {
    const int shift = f.emin() - exponent;
    const uint32_t significand = (1u << f.mantissa_bits) | mantissa;
    magnitude = shift > f.mantissa_bits ? 0u : significand >> shift;
  } else {
    if (exponent > f.emax()) exponent = f.emax();
    magnitude = (static_cast<uint32_t>(exponent + f.bias) << f.mantissa_bits) | mantissa;
    if (f.finite_nan && magnitude == (1u << (f.width() - 1)) - 1) magnitude -= 1;
  }
  return (negative ? 1u << (f.width() - 1) : 0u) | magnitude;
}
// Values for encode() are drawn from the generator last argument first, each in a statement of
// its own: the recorded hardware data came from a GCC build, which evaluated the arguments of
// one call in that order, and C++ leaves the order open (clang goes first to last), so it is
// spelled out for every compiler to draw the same tiles.
inline uint32_t random_value(const ElementFormat& f, Rng& rng, int exp_lo, int exp_hi) {
  const uint32_t mantissa = rng.bits(f.mantissa_bits);
  const int exponent = rng.range(exp_lo, exp_hi);
  const bool negative = rng.chance(2);
  return encode(f, negative, exponent, mantissa);
}
inline uint32_t random_subnormal(const ElementFormat& f, Rng& rng) {
  uint32_t m = rng.bits(f.mantissa_bits);
  if (m == 0) m = 1;
  return (rng.chance(2) ? 1u << (f.width() - 1) : 0u) | m;
}
inline uint32_t special_value(const ElementFormat& f, Rng& rng) {
  const uint32_t sign = rng.chance(2) ? 1u << (f.width() - 1) : 0u;
  const uint32_t exp_all_ones = ((1u << f.exponent_bits) - 1) << f.mantissa_bits;
  const uint32_t mant_mask = (1u << f.mantissa_bits) - 1;
  switch (rng.range(0, 7)) {
    case 0:
      return sign;  // +-0
    case 1:
      return sign;  // zeros twice as often
    case 2:
      return f.finite_nan ? sign | exp_all_ones | mant_mask
                          : sign | exp_all_ones;  // inf (NaN in e4m3)
    case 3:
      return sign | exp_all_ones | mant_mask;  // NaN
    case 4:
      return encode(f, sign != 0, f.emax(), mant_mask);  // largest finite
    case 5:
      return sign | 1u;  // smallest subnormal
    case 6:
      return encode(f, sign != 0, f.emin(), 0);  // smallest normal
    default:
      return encode(f, sign != 0, 0, 0);  // +-1
  }
}

// Operands of one tile: a[i*k + kk] (M x K, row-major), b[kk*n + j] (K x N, row-major), c[i*n + j]
// (M x N); all encodings, c in the accumulator's format (fp16 in the low 16 bits).
inline void generate_tile(const Probe& p, int tile, uint16_t* a, uint16_t* b, uint32_t* c) {
  const ElementFormat& in = element_format(p.input);
  const ElementFormat& out = p.accumulator == AccumulatorType::kFp32 ? kFp32 : kFp16;
  Rng rng(p.seed * 0x100000001B3ull + static_cast<uint64_t>(tile) * 0x9E3779B97F4A7C15ull + 1);
  for (int warm = 0; warm < 4; ++warm) rng.next();
  const int cls = tile % kClassCount;
  const int variant = (tile / kClassCount) % 4;
  const int M = p.m, N = p.n, K = p.k;
  const int in_lo = in.emin(), in_hi = in.emax();
  const int out_lo = out.emin(), out_hi = out.emax();
  auto clampi = [](int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); };
  auto in_val = [&](int lo, int hi) {
    return random_value(in, rng, clampi(lo, in_lo, in_hi), clampi(hi, in_lo, in_hi));
  };
  auto out_val = [&](int lo, int hi) {
    return random_value(out, rng, clampi(lo, out_lo - out.mantissa_bits, out_hi),
                        clampi(hi, out_lo - out.mantissa_bits, out_hi));
  };
  const uint32_t in_sign = 1u << (in.width() - 1);
  const uint32_t out_sign = 1u << (out.width() - 1);

  switch (cls) {
    case kNormal:
      for (int i = 0; i < M * K; ++i) a[i] = rng.chance(32) ? 0 : in_val(-3, 3);
      for (int i = 0; i < K * N; ++i) b[i] = rng.chance(32) ? 0 : in_val(-3, 3);
      for (int i = 0; i < M * N; ++i) c[i] = rng.chance(8) ? 0 : out_val(-4, 6);
      break;
    case kWide: {
      // bf16 is kept to [-64, 63] so products mostly stay inside fp32's range.
      const int lo = p.input == InputType::kBf16 ? -64 : in_lo - in.mantissa_bits;
      const int hi = p.input == InputType::kBf16 ? 63 : in_hi;
      for (int i = 0; i < M * K; ++i) a[i] = in_val(lo, hi);
      for (int i = 0; i < K * N; ++i) b[i] = in_val(lo, hi);
      for (int i = 0; i < M * N; ++i) c[i] = rng.chance(8) ? 0 : out_val(2 * lo, 2 * hi);
      break;
    }
    case kCancel: {
      const int half = K / 2;
      for (int i = 0; i < M; ++i)
        for (int kk = 0; kk < half; ++kk) {
          const uint32_t x = in_val(-2, 2);
          a[i * K + kk] = x;
          uint32_t y = x ^ in_sign;
          if (rng.chance(2)) y ^= 1u << rng.range(0, in.mantissa_bits - 1);  // near, not exact
          a[i * K + kk + half] = y;
        }
      for (int kk = 0; kk < half; ++kk)
        for (int j = 0; j < N; ++j) {
          const uint32_t x = in_val(-2, 2);
          b[kk * N + j] = x;
          b[(kk + half) * N + j] = variant & 1 ? x : in_val(-2, 2) & ~in_sign;
        }
      for (int i = 0; i < M * N; ++i)
        c[i] = rng.chance(4) ? (rng.chance(2) ? out_sign : 0) : out_val(-30, 2);
      break;
    }
    case kSubnormal: {
      if (variant & 1) {
        for (int i = 0; i < M * K; ++i)
          a[i] = rng.chance(2) ? random_subnormal(in, rng) : in_val(in_lo, in_lo + 5);
        for (int i = 0; i < K * N; ++i)
          b[i] = rng.chance(2) ? in_val(-3, 3) : random_subnormal(in, rng);
      } else {
        // products near the accumulator's subnormal range (scaled to what the input reaches)
        const int target = p.accumulator == AccumulatorType::kFp32 ? -130 : -18;
        const int half_target = target / 2;
        for (int i = 0; i < M * K; ++i) a[i] = in_val(half_target - 6, half_target + 4);
        for (int i = 0; i < K * N; ++i) b[i] = in_val(half_target - 6, half_target + 4);
      }
      for (int i = 0; i < M * N; ++i) {
        switch (rng.range(0, 3)) {
          case 0:
            c[i] = random_subnormal(out, rng);
            break;
          case 1:
            c[i] = out_val(out_lo, out_lo + 10);
            break;
          case 2:
            c[i] = rng.chance(2) ? out_sign : 0;
            break;
          default:
            c[i] = random_subnormal(out, rng) & ~out_sign;
            break;
        }
      }
      break;
    }
    case kCDominant:
      for (int i = 0; i < M * K; ++i) a[i] = in_val(-2, 2);
      for (int i = 0; i < K * N; ++i) b[i] = in_val(-2, 2);
      for (int i = 0; i < M * N; ++i) c[i] = out_val(-40, 40);
      break;
    case kAlignment: {
      // One large product per row (at a random k), the rest 8..30 binades below it.
      const int span_hi = p.input == InputType::kE4m3 ? 10 : 30;
      for (int i = 0; i < M; ++i) {
        const int big = rng.range(0, K - 1);
        const int d = rng.range(4, span_hi / 2 + 1);
        for (int kk = 0; kk < K; ++kk) {
          if (kk == big) {
            a[i * K + kk] = variant & 1 ? encode(in, rng.chance(2), 0, 0) : in_val(0, 1);
          } else if (variant & 2) {
            const int exponent = -d - rng.range(0, 2);  // drawn first: see random_value()
            a[i * K + kk] = encode(in, rng.chance(2), exponent, 0);
          } else {
            a[i * K + kk] = in_val(-d - 3, -d);
          }
        }
      }
      for (int i = 0; i < K * N; ++i) {
        if (variant & 1) {
          const uint32_t mantissa = rng.bits(in.mantissa_bits);  // see random_value()
          const int exponent = rng.range(-span_hi / 2, 1);
          b[i] = encode(in, rng.chance(4), exponent, mantissa);
        } else {
          b[i] = in_val(-span_hi / 2, 1);
        }
      }
      for (int i = 0; i < M * N; ++i) {
        switch (rng.range(0, 3)) {
          case 0:
            c[i] = 0;
            break;
          case 1: {                                 // +-2^e
            const int exponent = rng.range(-2, 2);  // drawn first: see random_value()
            c[i] = encode(out, rng.chance(2), exponent, 0);
            break;
          }
          case 2:
            c[i] = out_val(-span_hi, 2);
            break;
          default:
            c[i] = out_val(0, 3);
            break;
        }
      }
      break;
    }
    case kSpecials:
      for (int i = 0; i < M * K; ++i) a[i] = rng.chance(6) ? special_value(in, rng) : in_val(-3, 3);
      for (int i = 0; i < K * N; ++i) b[i] = rng.chance(6) ? special_value(in, rng) : in_val(-3, 3);
      for (int i = 0; i < M * N; ++i)
        c[i] = rng.chance(3) ? special_value(out, rng) : out_val(-3, 5);
      break;
    case kOverflow: {
      // fp16 inputs cannot overflow an fp32 sum; they still probe large sums. fp16 output does.
      int e_hi = in_hi;
      if (p.accumulator == AccumulatorType::kFp16) e_hi = p.input == InputType::kFp16 ? 8 : in_hi;
      for (int i = 0; i < M * K; ++i)
        a[i] = rng.chance(4) ? in_val(e_hi - 8, e_hi) : in_val(e_hi - 3, e_hi);
      for (int i = 0; i < K * N; ++i) {
        const uint32_t value = in_val(e_hi - 3, e_hi);  // drawn first: see random_value()
        b[i] = value & (rng.chance(4) ? ~0u : ~in_sign);
      }
      for (int i = 0; i < M * N; ++i) c[i] = rng.chance(4) ? 0 : out_val(out_hi - 2, out_hi);
      break;
    }
    case kZeroSum: {
      const int half = K / 2;
      for (int i = 0; i < M; ++i)
        for (int kk = 0; kk < half; ++kk) {
          const uint32_t x = variant == 3 ? (rng.chance(2) ? in_sign : 0) : in_val(-4, 4);
          a[i * K + kk] = x;
          a[i * K + kk + half] = x ^ in_sign;
        }
      for (int kk = 0; kk < half; ++kk)
        for (int j = 0; j < N; ++j) {
          const uint32_t x = rng.chance(8) ? (rng.chance(2) ? in_sign : 0) : in_val(-4, 4);
          b[kk * N + j] = x;
          b[(kk + half) * N + j] = x;
        }
      for (int i = 0; i < M * N; ++i) {
        switch (rng.range(0, 3)) {
          case 0:
            c[i] = 0;
            break;
          case 1:
            c[i] = out_sign;
            break;
          case 2:
            c[i] = random_subnormal(out, rng);
            break;
          default:
            c[i] = out_val(-30, 0);
            break;
        }
      }
      break;
    }
    case kSparseTies: {
      // Mostly zeros; one to three terms of few significant bits that land on or near the
      // rounding boundaries of C.
      for (int i = 0; i < M * K; ++i) a[i] = 0;
      for (int i = 0; i < K * N; ++i) b[i] = 0;
      const int out_p = out.mantissa_bits + 1;
      for (int i = 0; i < M; ++i) {
        const int terms = rng.range(1, 3);
        for (int t = 0; t < terms; ++t) {
          const int kk = rng.range(0, K - 1);
          const uint32_t mantissa = rng.chance(2) ? 0 : rng.bits(in.mantissa_bits) & 3;
          const int exponent = rng.range(-(out_p + 3) / 2 - 1, 0);  // see random_value()
          a[i * K + kk] = encode(in, rng.chance(2), exponent, mantissa);
        }
      }
      for (int kk = 0; kk < K; ++kk)
        for (int j = 0; j < N; ++j) {
          const uint32_t mantissa = rng.chance(2) ? 0 : rng.bits(in.mantissa_bits) & 3;
          const int exponent = rng.range(-(out_p + 3) / 2 - 1, 0);  // see random_value()
          b[kk * N + j] = encode(in, rng.chance(4), exponent, mantissa);
        }
      for (int i = 0; i < M * N; ++i) {
        const uint32_t high = rng.bits(out.mantissa_bits);  // see random_value()
        const uint32_t mantissa = high | (rng.chance(2) ? 1u : 0u);
        const int exponent = rng.range(0, 2);
        c[i] = encode(out, rng.chance(2), exponent, mantissa);
      }
      break;
    }
    default:
      break;
  }
}

// Inputs of the element-wise probes (ex2.approx, cvt): count fp32 bit patterns, a mix of random
// bit patterns, values in the interesting range of each instruction and specials.
inline uint32_t elementwise_input(uint64_t seed, uint32_t index) {
  Rng rng(seed * 0x2545F4914F6CDD1Dull + index * 0x9E3779B97F4A7C15ull + 7);
  rng.next();
  const uint32_t r = static_cast<uint32_t>(rng.next());
  switch (index % 8) {
    case 0:
      return r;  // any bit pattern
    case 1: {    // |x| < 2^9, all exponents
      const int e = rng.range(-40, 8);
      return (rng.chance(2) ? 0x80000000u : 0u) | static_cast<uint32_t>(e + 127) << 23 |
             (r & 0x7fffff);
    }
    case 2: {  // [-130, 130]: ex2 range
      const float x = static_cast<float>(static_cast<double>(r) / 4294967296.0 * 260.0 - 130.0);
      uint32_t u;
      std::memcpy(&u, &x, 4);
      return u;
    }
    case 3: {  // subnormals
      return (rng.chance(2) ? 0x80000000u : 0u) | (r & 0x7fffff);
    }
    case 4: {  // near 8-bit ranges
      const int e = rng.range(-20, 17);
      return (rng.chance(2) ? 0x80000000u : 0u) | static_cast<uint32_t>(e + 127) << 23 |
             (r & 0x7fffff);
    }
    case 5: {  // exact ties of bf16/fp8
      const int e = rng.range(-30, 20);
      const int drop = rng.chance(2) ? 16 : (rng.chance(2) ? 20 : 21);
      const uint32_t keep = (r & 0x7fffff) >> drop << drop;
      return (rng.chance(2) ? 0x80000000u : 0u) | static_cast<uint32_t>(e + 127) << 23 | keep |
             (1u << (drop - 1));
    }
    case 6: {  // near the largest values
      const int e = rng.range(120, 127);
      return (rng.chance(2) ? 0x80000000u : 0u) | static_cast<uint32_t>(e + 127) << 23 |
             (r & 0x7fffff);
    }
    default: {  // specials
      static const uint32_t specials[] = {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u,
                                          0x7fc00000u, 0xffc00000u, 0x7f800001u, 0x3f800000u,
                                          0x43e00000u, 0x43e80000u, 0x47600000u, 0x47700000u,
                                          0x7f7fffffu, 0x00000001u, 0x43e7ffffu, 0x47efffffu};
      return specials[r % 16];
    }
  }
}

// ---- Ground-truth files (tests/data/tensor_core/) ----
// <probe>.hashes: one 64-bit FNV-1a hash (little endian) of the raw output bytes of every chunk
//   of kHashChunkOutputs consecutive outputs: the whole run, compared output by output's chunk.
// <probe>.subset: the raw outputs of every tile in the subset (tile_in_subset), in tile order:
//   every class, so a mismatching chunk can be diagnosed by its neighbours in the subset.
inline constexpr int kHashChunkOutputs = 256;
inline uint64_t fnv1a64(const uint8_t* bytes, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ bytes[i]) * 0x100000001b3ull;
  return h;
}
// Ten consecutive tiles (all classes) out of every 320.
inline bool tile_in_subset(int tile) {
  return (tile / kClassCount) % 32 == 0;
}
// Element-wise probes: the first kElementSubset outputs are stored.
inline constexpr uint64_t kElementSeed = 1;
inline constexpr uint32_t kElementCount = 1u << 20;
inline constexpr uint32_t kElementSubset = 1u << 16;

}  // namespace simprec::tc_vectors
