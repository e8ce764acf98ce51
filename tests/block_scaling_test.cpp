// Block scaling (emulation/mx_scaling.hpp, emulation/nvfp4_scaling.hpp) against a reference
// written here from the specifications' rules, sharing no code with the implementation:
// - MX (OCP MX v1.0 §6.3): X = the largest power of two <= amax (std::ilogb), divided by the
//   largest power of two of the element format (2^emax from the oracle's own reading of the
//   format); each element is V / X rounded by MPFR (the oracle) into the element format with
//   the spec's clamp (saturation).
// - NVFP4 (arXiv 2509.25149 Appendix B): the fp32 steps in the host's float arithmetic (round to
//   nearest even, checked), the e4m3 and e2m1 roundings by MPFR.
// Stochastic rounding is checked through its definition: up exactly when floor(f * 2^k) + the
// top k bits of value i's random word reach 2^k, f the dropped fraction between the oracle's
// neighbours. Edge cases: all-zero blocks, NaN and infinity in a block, amax at the format's
// maximum, subnormal elements, fp32-subnormal and float64-huge inputs, partial final blocks.
#include <gtest/gtest.h>

#include <bit>
#include <cfenv>
#include <cfloat>
#include <cmath>
#include <random>
#include <vector>

#include "emulation/mx_scaling.hpp"
#include "emulation/nvfp4_scaling.hpp"
#include "emulation/random.hpp"
#include "tests/mpfr_oracle.hpp"

namespace {

using namespace simprec;

// The element rounding the reference expects for the exact value x * 2^shift, in `mode`.
uint64_t reference_round(const Format& f, double x, int shift, RoundingMode mode, uint32_t random,
                         int sr_bits) {
  oracle::Oracle o(f);
  mpfr_t v;
  mpfr_init2(v, 64);
  mpfr_set_d(v, x, MPFR_RNDN);
  mpfr_mul_2si(v, v, shift, MPFR_RNDN);  // exact
  uint64_t out[6];
  o.round_all([&](mpfr_ptr r, mpfr_rnd_t rnd) { return mpfr_set(r, v, rnd); }, out);
  const double scaled = mpfr_get_d(v, MPFR_RNDN);  // exact: 53 bits, in range in these tests
  mpfr_clear(v);
  const auto& s = o.spec();
  const uint64_t toward = out[2], away = std::signbit(scaled) ? out[4] : out[3];
  switch (mode) {
    case RoundingMode::kStochastic:
    case RoundingMode::kNearestRandomTies: {
      const double z = oracle::decode(s, toward), a = oracle::decode(s, away);
      const double q = std::fabs(a - z);
      if (q == 0 || std::isinf(a)) return mode == RoundingMode::kStochastic ? toward : out[0];
      const double frac = std::fabs(scaled - z) / q;  // exact: |scaled - z| < q, both dyadic
      if (mode == RoundingMode::kNearestRandomTies) {
        return frac == 0.5 ? ((random & 1) ? away : toward) : out[0];
      }
      const double t = std::floor(std::ldexp(frac, sr_bits));
      return t + static_cast<double>(random >> (32 - sr_bits)) >= std::ldexp(1.0, sr_bits) ? away
                                                                                           : toward;
    }
    default:
      for (int i = 0; i < 6; ++i) {
        if (oracle::kModes[i] == mode) return out[i];
      }
  }
  return ~uint64_t{0};
}

struct Reference {
  std::vector<uint64_t> scales, elements;
  double tensor_scale = 1;
};

Format clamping(Format f) {
  f.overflow = OverflowPolicy::kSaturate;
  return f;
}

// OCP MX v1.0 §6.3, block by block along rows of `row_length`.
Reference mx_reference(const std::vector<double>& x, size_t row_length, size_t block,
                       const Format& element, const Rounding& r, const RandomStream& stream) {
  const oracle::Spec es = oracle::spec_of(element);
  const Format elem = clamping(element);
  Reference ref;
  ref.elements.assign(x.size(), 0);
  for (size_t row = 0; row < x.size(); row += row_length) {
    for (size_t b = row; b < row + row_length; b += block) {
      const size_t end = std::min(b + block, row + row_length);
      bool special = false;
      double amax = 0;
      for (size_t i = b; i < end; ++i) {
        special = special || !std::isfinite(x[i]);
        amax = std::max(amax, std::fabs(x[i]));
      }
      int shared = -127;  // an all-zero block: the smallest scale
      if (amax > 0) shared = std::max(-127, std::ilogb(amax) - es.emax);
      if (special || shared > 127) {
        ref.scales.push_back(0xff);
        continue;
      }
      ref.scales.push_back(static_cast<uint64_t>(shared + 127));
      for (size_t i = b; i < end; ++i) {
        const uint32_t random = random_bits(stream, i);
        ref.elements[i] = reference_round(elem, x[i], -shared, r.mode, random, r.sr_bits);
      }
    }
  }
  return ref;
}

// NVFP4, Appendix B of arXiv 2509.25149, in the host's fp32 arithmetic.
Reference nvfp4_reference(const std::vector<float>& x, size_t row_length, size_t block,
                          const Rounding& r, const RandomStream& stream) {
  const Format e4m3 = clamping(formats::e4m3fn);
  const oracle::Spec e4m3_spec = oracle::spec_of(e4m3);
  float amax = 0;
  for (float v : x) {
    if (std::isfinite(v)) amax = std::max(amax, std::fabs(v));
  }
  volatile float product = 448.0f * 6.0f;  // volatile: each step is one fp32 operation
  float s_enc = amax == 0 ? 1.0f : std::fmin(product / amax, FLT_MAX);
  const float s_dec = 1.0f / s_enc;
  Reference ref;
  ref.tensor_scale = s_dec;
  ref.elements.assign(x.size(), 0);
  for (size_t row = 0; row < x.size(); row += row_length) {
    for (size_t b = row; b < row + row_length; b += block) {
      const size_t end = std::min(b + block, row + row_length);
      bool special = false;
      float block_amax = 0;
      for (size_t i = b; i < end; ++i) {
        special = special || !std::isfinite(x[i]);
        block_amax = std::max(block_amax, std::fabs(x[i]));
      }
      if (special) {
        ref.scales.push_back(0x7f);
        continue;
      }
      volatile float s_dec_b = block_amax / 6.0f;
      volatile float wanted = s_dec_b * s_enc;
      const uint64_t scale = reference_round(e4m3, wanted, 0, RoundingMode::kNearestEven, 0, 32);
      ref.scales.push_back(scale);
      const auto s_b = static_cast<float>(oracle::decode(e4m3_spec, scale));
      volatile float denominator = s_b * s_dec;
      const float s_enc_b = std::fmin(1.0f / denominator, FLT_MAX);
      for (size_t i = b; i < end; ++i) {
        volatile float scaled = x[i] * s_enc_b;
        const uint32_t random = random_bits(stream, i);
        ref.elements[i] = reference_round(formats::fp4_e2m1, scaled, 0, r.mode, random, r.sr_bits);
      }
    }
  }
  return ref;
}

void expect_same(const BlockScaled& q, const Reference& ref, const std::string& what) {
  ASSERT_EQ(q.scales.size(), ref.scales.size()) << what;
  ASSERT_EQ(q.elements.size(), ref.elements.size()) << what;
  oracle::Mismatches bad;
  for (size_t b = 0; b < ref.scales.size(); ++b) {
    if (q.scales[b] != ref.scales[b]) {
      bad.add(what + " scale " + std::to_string(b) + ": expected " + oracle::hex(ref.scales[b]) +
              " got " + oracle::hex(q.scales[b]));
    }
  }
  for (size_t i = 0; i < ref.elements.size(); ++i) {
    if (q.elements[i] != ref.elements[i]) {
      bad.add(what + " element " + std::to_string(i) + ": expected " +
              oracle::hex(ref.elements[i]) + " got " + oracle::hex(q.elements[i]));
    }
  }
  EXPECT_EQ(q.tensor_scale, ref.tensor_scale) << what;
  EXPECT_EQ(bad.count, 0u) << bad.report();
}

// Blocks of very different magnitudes (log-uniform per block), zeros, exact powers of two,
// and each block's largest magnitude now and then set exactly to a chosen value.
std::vector<double> random_tensor(std::mt19937_64& rng, size_t n, size_t block) {
  std::vector<double> x(n);
  double magnitude = 1;
  for (size_t i = 0; i < n; ++i) {
    if (i % block == 0) magnitude = std::ldexp(1.0, static_cast<int>(rng() % 60) - 30);
    const double u = static_cast<double>(rng() >> 11) * 0x1p-53;
    switch (rng() % 16) {
      case 0:
        x[i] = 0;
        break;
      case 1:
        x[i] = magnitude;
        break;
      default:
        x[i] = magnitude * (2 * u - 1) * std::ldexp(1.0, -static_cast<int>(rng() % 12));
    }
    // Keep the values float-representable so that the same tensor serves NVFP4.
    x[i] = static_cast<float>(x[i]);
  }
  return x;
}

TEST(MxScaling, RandomTensorsEverySchemeEveryMode) {
  std::mt19937_64 rng(20);
  for (const MxScheme& scheme : mx_schemes()) {
    for (RoundingMode mode : kAllRoundingModes) {
      const Rounding r{mode, 9};
      const RandomStream stream{17, 3};
      const size_t row_length = 32 * 3 + 11;  // a partial final block in every row
      const std::vector<double> x = random_tensor(rng, row_length * 5, 32);
      const BlockScaled q =
          mx_quantize(x, BlockLayout{row_length, 32}, scheme.element, ElementRounding{r, stream});
      expect_same(q, mx_reference(x, row_length, 32, scheme.element, r, stream),
                  std::string(scheme.name) + " " + std::string(short_name(mode)));
      EXPECT_EQ(q.scale, formats::e8m0);
      EXPECT_EQ(q.element.overflow, OverflowPolicy::kSaturate);
    }
  }
}

TEST(MxScaling, SchemesAreTheSpecsTableOne) {
  // OCP MX v1.0 Table 1: element formats and their emax (largest normal exponent).
  struct Row {
    const char* name;
    double max;
    int emax;
  } rows[] = {{"mxfp8_e4m3", 448, 8},
              {"mxfp8_e5m2", 57344, 15},
              {"mxfp6_e2m3", 7.5, 2},
              {"mxfp6_e3m2", 28, 4},
              {"mxfp4", 6, 2}};
  ASSERT_EQ(mx_schemes().size(), std::size(rows));
  for (size_t i = 0; i < std::size(rows); ++i) {
    EXPECT_EQ(mx_schemes()[i].name, rows[i].name);
    EXPECT_EQ(mx_schemes()[i].element.max_finite(), rows[i].max);
    EXPECT_EQ(mx_schemes()[i].element.emax(), rows[i].emax);
    EXPECT_EQ(oracle::spec_of(mx_schemes()[i].element).emax, rows[i].emax);
  }
}

TEST(MxScaling, EdgeCasesByHand) {
  const ElementRounding rne{};
  const Format fp4 = formats::fp4_e2m1;
  // amax 3 -> X = 2^(1 - 2) = 1/2 and 3 / X = 6, the format's maximum, exactly; amax 7 ->
  // X = 2^(2 - 2) = 1 and 7 clamps to 6 (the spec's clamp, not NaN or infinity).
  {
    const std::vector<double> x = {3.0, -1.25, 0.5, 0.0};
    const BlockScaled q = mx_quantize(x, BlockLayout{4, 32}, fp4, rne);
    EXPECT_EQ(q.scales[0], 126u);           // 2^-1
    EXPECT_EQ(q.elements[0], 0x7u);         // 6
    EXPECT_EQ(q.elements[1], 0x8u | 0x4u);  // -2.5 -> -2 (tie to even: 2 = 0x4)
    EXPECT_EQ(q.elements[2], 0x2u);         // 1
    EXPECT_EQ(q.dequantized(0), 3.0);
    EXPECT_EQ(q.dequantized(1), -1.0);
  }
  {
    const std::vector<double> x = {7.0, -7.0};
    const BlockScaled q = mx_quantize(x, BlockLayout{2, 32}, fp4, rne);
    EXPECT_EQ(q.scales[0], 127u);
    EXPECT_EQ(q.elements[0], 0x7u);
    EXPECT_EQ(q.elements[1], 0xfu);
    const BlockScaled up =
        mx_quantize(x, BlockLayout{2, 32}, fp4, ElementRounding{Rounding{RoundingMode::kUp}, {}});
    EXPECT_EQ(up.elements[0], 0x7u);  // clamped in every mode
  }
  // amax at the element format's maximum: MXFP8 e4m3 with 448 gives X = 1 and 448 exactly.
  {
    const std::vector<double> x = {448.0, 1.0};
    const BlockScaled q = mx_quantize(x, BlockLayout{2, 32}, formats::e4m3fn, rne);
    EXPECT_EQ(q.scales[0], 127u);
    EXPECT_EQ(q.elements[0], 0x7eu);
    EXPECT_EQ(q.dequantized(0), 448.0);
  }
  // All zeros (both signs): the smallest scale 2^-127 and signed zero elements.
  {
    const std::vector<double> x = {0.0, -0.0, 0.0};
    const BlockScaled q = mx_quantize(x, BlockLayout{3, 32}, fp4, rne);
    EXPECT_EQ(q.scales[0], 0u);
    EXPECT_EQ(q.elements[0], 0x0u);
    EXPECT_EQ(q.elements[1], 0x8u);
    EXPECT_EQ(q.dequantized(1), 0.0);
  }
  // NaN or infinity in a block: that block's scale is NaN, the other blocks are untouched.
  {
    std::vector<double> x(64, 1.0);
    x[5] = NAN;
    x[40] = -INFINITY;
    std::vector<double> y(64, 1.0);
    y[40] = INFINITY;
    for (const auto& v : {x, y}) {
      const BlockScaled q = mx_quantize(v, BlockLayout{32, 32}, fp4, rne);
      EXPECT_EQ(q.scales[1], 0xffu);
      EXPECT_TRUE(std::isnan(q.dequantized(33)));
    }
    const BlockScaled q = mx_quantize(x, BlockLayout{32, 32}, fp4, rne);
    EXPECT_EQ(q.scales[0], 0xffu);
    EXPECT_TRUE(std::isnan(q.dequantized(0)));
    const BlockScaled qy = mx_quantize(y, BlockLayout{32, 32}, fp4, rne);
    EXPECT_EQ(qy.scales[0], 127u - 2);
    EXPECT_EQ(qy.dequantized(0), 1.0);
  }
  // Subnormal elements: with amax 6 (X = 1) the value 0.25 is half of e2m1's subnormal 0.5.
  {
    const std::vector<double> x = {6.0, 0.25, 0.75, -0.3};
    const BlockScaled q = mx_quantize(x, BlockLayout{4, 32}, fp4, rne);
    EXPECT_EQ(q.elements[1], 0x0u);       // tie between 0 and 0.5: even (0)
    EXPECT_EQ(q.elements[2], 0x2u);       // tie between 0.5 and 1: even (1.0 = 0x2)
    EXPECT_EQ(q.elements[3], 0x8u | 1u);  // -0.5
  }
  // Tiny inputs: amax 2^-149 (fp32's smallest subnormal) would want X = 2^-151; the scale
  // stops at 2^-127 and the values underflow in the element format.
  {
    const std::vector<double> x = {0x1p-149, 0x1p-130};
    const BlockScaled q = mx_quantize(x, BlockLayout{2, 32}, formats::e4m3fn, rne);
    EXPECT_EQ(q.scales[0], 0u);
    EXPECT_EQ(q.elements[0], 0x00u);  // 2^-22 in e4m3: below half the smallest subnormal 2^-9
    EXPECT_EQ(q.elements[1], 0x20u);  // 2^-3 exactly: field -3 + 7
  }
  // float64 beyond fp32: a scale above 2^127 is NaN.
  {
    const std::vector<double> x = {0x1p200, 1.0};
    const BlockScaled q = mx_quantize(x, BlockLayout{2, 32}, fp4, rne);
    EXPECT_EQ(q.scales[0], 0xffu);
    const std::vector<double> y = {0x1p129, 1.0};  // 2^(129 - 2) = 2^127 still fits
    EXPECT_EQ(mx_quantize(y, BlockLayout{2, 32}, fp4, rne).scales[0], 254u);
  }
  // Partial final blocks: 40 values in a row give blocks of 32 and 8, with their own scales.
  {
    std::vector<double> x(80, 1.0);
    x[79] = 100.0;  // row 1, its second block
    const BlockScaled q = mx_quantize(x, BlockLayout{40, 32}, fp4, rne);
    ASSERT_EQ(q.scales.size(), 4u);
    EXPECT_EQ(q.scales[0], 125u);
    EXPECT_EQ(q.scales[1], 125u);
    EXPECT_EQ(q.scales[2], 125u);
    EXPECT_EQ(q.scales[3], 127u + 6 - 2);  // floor(log2 100) = 6
    EXPECT_EQ(q.layout.block_of(79), 3u);
    EXPECT_EQ(q.layout.block_of(40), 2u);
  }
}

TEST(MxScaling, BadLayoutsAndFormatsAreRefused) {
  const std::vector<double> x(10, 1.0);
  EXPECT_THROW(mx_quantize(x, BlockLayout{3, 32}, formats::fp4_e2m1, {}), std::invalid_argument);
  EXPECT_THROW(mx_quantize(x, BlockLayout{10, 0}, formats::fp4_e2m1, {}), std::invalid_argument);
  EXPECT_THROW(mx_quantize(x, BlockLayout{10, 32}, formats::bf16, {}), std::invalid_argument);
  EXPECT_THROW(mx_quantize(x, BlockLayout{10, 32}, formats::e8m0, {}), std::invalid_argument);
}

TEST(Nvfp4Scaling, RandomTensorsEveryMode) {
  ASSERT_EQ(std::fegetround(), FE_TONEAREST);
  std::mt19937_64 rng(21);
  for (RoundingMode mode : kAllRoundingModes) {
    const Rounding r{mode, 7};
    const RandomStream stream{8, 1};
    const size_t row_length = 16 * 4 + 5;
    const std::vector<double> d = random_tensor(rng, row_length * 6, 16);
    const std::vector<float> x(d.begin(), d.end());
    const BlockScaled q =
        nvfp4_quantize(x, BlockLayout{row_length, 16}, ElementRounding{r, stream});
    expect_same(q, nvfp4_reference(x, row_length, 16, r, stream),
                "nvfp4 " + std::string(short_name(mode)));
    EXPECT_EQ(q.element, formats::fp4_e2m1);
  }
}

TEST(Nvfp4Scaling, EdgeCasesByHand) {
  const ElementRounding rne{};
  // Tensor amax 2688 = 448 * 6: s_enc = 1, so a block with amax 6 has the scale 1 (0x38) and
  // its values stay as they are; a block with amax 2688 has the scale 448 (0x7e).
  {
    std::vector<float> x(32, 0.0f);
    x[0] = 6.0f;
    x[1] = -1.5f;
    x[2] = 2.5f;  // tie between 2 and 3: even (2)
    x[16] = 2688.0f;
    x[17] = 448.0f;
    const BlockScaled q = nvfp4_quantize(x, BlockLayout{32, 16}, rne);
    EXPECT_EQ(q.tensor_scale, 1.0);
    EXPECT_EQ(q.scales[0], 0x38u);
    EXPECT_EQ(q.elements[0], 0x7u);
    EXPECT_EQ(q.elements[1], 0xbu);
    EXPECT_EQ(q.elements[2], 0x4u);
    EXPECT_EQ(q.scales[1], 0x7eu);
    EXPECT_EQ(q.elements[16], 0x7u);
    EXPECT_EQ(q.elements[17], 0x2u);  // 448 / 448 = 1
    EXPECT_EQ(q.dequantized(16), 2688.0);
  }
  // Where the paper's order of fp32 operations and TransformerEngine's differ: here
  // fp32(fp32(amax_b / 6) * s_enc) = 0x1.5p+2 = 5.25 exactly, the e4m3 tie between 5 (0x4a) and
  // 5.5 (0x4b), which goes to even, while amax_b * fp32(s_enc * fp32(1/6)) = 0x1.500002p+2 would
  // round to 5.5. (Found by a search over random amax pairs.)
  {
    std::vector<float> x(32, 0.0f);
    x[0] = 0x1.8aa49ap+0f;  // the tensor's amax
    x[16] = 0x1.27fb74p-6f;
    const BlockScaled q = nvfp4_quantize(x, BlockLayout{32, 16}, rne);
    EXPECT_EQ(q.scales[1], 0x4au);
  }
  // An all-zero tensor: s_enc = 1, scale 0 and zero elements.
  {
    const std::vector<float> x(16, 0.0f);
    const BlockScaled q = nvfp4_quantize(x, BlockLayout{16, 16}, rne);
    EXPECT_EQ(q.tensor_scale, 1.0);
    EXPECT_EQ(q.scales[0], 0u);
    EXPECT_EQ(q.dequantized(3), 0.0);
  }
  // NaN in a block: its scale is e4m3's NaN; it does not enter the tensor amax.
  {
    std::vector<float> x(32, 1.0f);
    x[3] = NAN;
    x[20] = 6.0f;
    const BlockScaled q = nvfp4_quantize(x, BlockLayout{32, 16}, rne);
    EXPECT_EQ(q.scales[0], 0x7fu);
    EXPECT_TRUE(std::isnan(q.dequantized(0)));
    EXPECT_EQ(q.tensor_scale, 1.0f / (2688.0f / 6.0f));
  }
}

}  // namespace
