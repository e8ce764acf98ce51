// The block-FMA model on hand-checked cases, the fast GEMM path against the integer reference,
// the accumulation-registry adapter and the `simprec mma` command.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>
#include <vector>

#include "emulation/accumulation.hpp"
#include "emulation/round.hpp"
#include "emulation/tensor_core.hpp"
#include "emulation/tensor_core_vectors.hpp"
#include "lib/npy/npy.hpp"
#include "tests/cli_support.hpp"

namespace simprec {
namespace {

uint16_t bits_of(const Format& f, double x) {
  RoundingContext ctx(f);
  const uint64_t b = ctx.round(x);
  EXPECT_EQ(decode(f, b), x) << x << " is not exact in " << f.name();
  return static_cast<uint16_t>(b);
}
uint32_t fp32_bits(float x) {
  uint32_t b;
  std::memcpy(&b, &x, 4);
  return b;
}
float fp32_value(uint32_t b) {
  float x;
  std::memcpy(&x, &b, 4);
  return x;
}

// c + sum a_i * b_i with b_i = 1 for the given model.
double dot_with_ones(const TensorCoreModel& m, const std::vector<double>& a, double c) {
  std::vector<uint16_t> ab, bb;
  for (double x : a) {
    ab.push_back(bits_of(m.input_a, x));
    bb.push_back(bits_of(m.input_b, 1.0));
  }
  const uint32_t cb =
      m.accumulator == formats::fp32 ? fp32_bits(static_cast<float>(c)) : bits_of(m.accumulator, c);
  return decode(m.accumulator,
                tensor_core_dot(m, ab.data(), 1, bb.data(), 1, static_cast<int>(ab.size()), cb));
}

TEST(TensorCoreModel, TruncatesTheBlockSumTowardZero) {
  const TensorCoreModel& h100 = tensor_core_model("tc:sm90-mma-bf16");
  // 1 + 3*2^-25: round to nearest would give 1 + 2^-23.
  EXPECT_EQ(dot_with_ones(h100, {0x1p-24, 0x1p-25}, 1.0), 1.0);
  EXPECT_EQ(dot_with_ones(h100, {-0x1p-24, -0x1p-25}, -1.0), -1.0);
}

TEST(TensorCoreModel, ExtraAlignmentBitsKeepTermsBelowTheLastBitOfC) {
  // Four terms of 2^-25 add to 2^-23, one ulp of 1: two extra bits keep them (H100), one
  // extra bit (A100) drops each of them during alignment.
  const std::vector<double> terms = {0x1p-25, 0x1p-25, 0x1p-25, 0x1p-25};
  EXPECT_EQ(dot_with_ones(tensor_core_model("tc:sm90-mma-bf16"), terms, 1.0), 1.0 + 0x1p-23);
  EXPECT_EQ(dot_with_ones(tensor_core_model("tc:sm80-mma-bf16"), terms, 1.0), 1.0);
}

TEST(TensorCoreModel, AlignsToTheSumOfOperandExponents) {
  // 1.5 * 1.5 = 2.25 has exponent 1 but brings e(a) + e(b) = 0 to the alignment, so terms of
  // 2^-25 stay inside the window: eight of them add one ulp of 2.25. Aligned to the exact
  // product exponent (window ending at 2^-24) they would all be dropped.
  TensorCoreModel m = tensor_core_model("tc:sm90-mma-bf16");
  std::vector<uint16_t> a = {bits_of(formats::bf16, 1.5)}, b = {bits_of(formats::bf16, 1.5)};
  for (int i = 0; i < 8; ++i) {
    a.push_back(bits_of(formats::bf16, 0x1p-25));
    b.push_back(bits_of(formats::bf16, 1.0));
  }
  EXPECT_EQ(fp32_value(tensor_core_dot(m, a.data(), 1, b.data(), 1, 9, 0)), 2.25f + 0x1p-22f);
  m.alignment = AlignmentExponent::kProduct;
  EXPECT_EQ(fp32_value(tensor_core_dot(m, a.data(), 1, b.data(), 1, 9, 0)), 2.25f);
}

TEST(TensorCoreModel, OverflowGivesInfinityDespiteTruncation) {
  const TensorCoreModel& m = tensor_core_model("tc:sm90-mma-bf16");
  const double big = 0x1.fep127;  // largest bf16
  EXPECT_TRUE(std::isinf(dot_with_ones(m, {big, big}, 0.0)));
  // Below 2^128 the sum stays finite.
  EXPECT_EQ(dot_with_ones(m, {0x1p127, 0x1.fcp126}, 0.0), 0x1.fep127);
}

TEST(TensorCoreModel, SpecialValues) {
  const TensorCoreModel& m = tensor_core_model("tc:sm90-mma-bf16");
  const double inf = INFINITY;
  EXPECT_TRUE(std::isnan(dot_with_ones(m, {inf, -inf}, 0.0)));
  EXPECT_EQ(dot_with_ones(m, {inf, 1.0}, 0.0), inf);
  const uint16_t a[2] = {bits_of(formats::bf16, 0.0), 0};
  const uint16_t b[2] = {0x7f80, 0};  // 0 * inf
  EXPECT_EQ(tensor_core_dot(m, a, 1, b, 1, 2, 0), 0x7fffffffu);
  // Exact cancellation gives +0; so does a whole instruction of -0 terms with C = -0 on the
  // H100's mma.sync (measured, below), where IEEE 754 would give -0. A model without that
  // measurement keeps IEEE's rule.
  EXPECT_EQ(fp32_bits(static_cast<float>(dot_with_ones(m, {1.0, -1.0}, 0.0))), 0u);
  EXPECT_EQ(fp32_bits(static_cast<float>(dot_with_ones(m, std::vector<double>(16, -0.0), -0.0))),
            0u);
  const TensorCoreModel& wgmma = tensor_core_model("tc:sm90-wgmma-bf16");
  EXPECT_EQ(
      fp32_bits(static_cast<float>(dot_with_ones(wgmma, std::vector<double>(16, -0.0), -0.0))),
      0x80000000u);
}

// Recorded on an H100 (tests/data/tensor_core/signed_zeros/README.md): every combination of
// +-0 products and a +-0 C gives +0 through mma.sync with fp32 accumulators.
TEST(TensorCoreModel, SignedZerosAsTheH100GivesThem) {
  const std::filesystem::path dir =
      std::filesystem::path(SIMPREC_SOURCE_DIR) / "tests" / "data" / "tensor_core" / "signed_zeros";
  const NpyArray a = read_npy(dir / "A.npy"), b = read_npy(dir / "B.npy"),
                 c = read_npy(dir / "C.npy"), d = read_npy(dir / "D_h100.npy");
  const auto c_bits = c.as<uint32_t>();
  const auto d_bits = d.as<uint32_t>();
  ASSERT_EQ(d_bits.size(), 128u);
  int negative_c = 0;
  for (uint32_t x : c_bits) negative_c += x == 0x80000000u;
  EXPECT_EQ(negative_c, 64);  // the case IEEE's rule would turn into -0 is there
  for (const char* name : {"tc:sm90-mma-bf16", "tc:sm90-mma-fp16"}) {
    const auto out = tensor_core_gemm(tensor_core_model(name), a.as<uint16_t>(), b.as<uint16_t>(),
                                      c_bits, 16, 8, 16);
    for (size_t i = 0; i < out.size(); ++i) EXPECT_EQ(out[i], d_bits[i]) << name << " " << i;
  }
}

TEST(TensorCoreModel, Fp8MmaSyncAddsCLastWithRoundToNearest) {
  // Through two fp16 HMMAs from +0, then C by a rounded addition: 2^24 + 1 + 1.5 rounds to
  // nearest (2^24 + 2) rather than truncating (2^24), as wgmma's block would.
  const TensorCoreModel& mma = tensor_core_model("tc:sm90-mma-e4m3");
  EXPECT_EQ(dot_with_ones(mma, {1.5}, 0x1p24 + 2.0), 0x1p24 + 4.0);
  // wgmma aligns C with the products and keeps 13 bits below 2^24: 1.5 and C's last 2 vanish.
  EXPECT_EQ(dot_with_ones(tensor_core_model("tc:sm90-wgmma-e4m3"), {1.5}, 0x1p24 + 2.0), 0x1p24);
}

TEST(TensorCoreModel, WgmmaFp8KeepsFourteenBits) {
  // 1 + 2^-14 is lost to the 13 kept fraction bits; 1 + 2^-13 survives.
  const TensorCoreModel& m = tensor_core_model("tc:sm90-wgmma-e4m3");
  EXPECT_EQ(dot_with_ones(m, {0x1p-9}, 1.0 - 0x1p-9 + 0x1p-14),
            1.0);  // C's own low bits truncated too
  EXPECT_EQ(dot_with_ones(m, {1.0, 0x1p-9}, 0.0), 1.0 + 0x1p-9);
}

TEST(TensorCoreModel, PresetsAreConsistent) {
  int verified = 0;
  for (const TensorCoreModel& m : tensor_core_models()) {
    EXPECT_EQ(m.name.rfind("tc:", 0), 0u) << m.name;
    EXPECT_EQ(m.k % m.block_size, 0) << m.name;
    EXPECT_LE(m.block_result_precision, m.accumulator.precision()) << m.name;
    EXPECT_FALSE(m.evidence.empty()) << m.name;
    verified += m.verified;
  }
  EXPECT_GE(verified, 12);
  EXPECT_THROW(tensor_core_model("tc:sm90-nonsense"), std::invalid_argument);
}

// Random operands, specials included, over lengths that are not whole instructions: the
// vectorised GEMM must give the integer reference's bits.
TEST(TensorCoreGemm, FastPathEqualsReference) {
  std::mt19937_64 rng(42);
  for (const char* name : {"tc:sm90-mma-bf16", "tc:sm90-wgmma-fp16", "tc:sm80-mma-bf16",
                           "tc:sm90-mma-e4m3", "tc:sm90-wgmma-fp16acc"}) {
    const TensorCoreModel& model = tensor_core_model(name);
    const bool fp8 = model.input_a.width() == 8;
    for (const int k : {1, 16, 37, 64}) {
      const int m = 7, n = 70;
      std::vector<uint16_t> a(m * k), b(k * n);
      std::vector<uint32_t> c(m * n);
      auto draw = [&](int spread) -> uint16_t {
        const uint64_t r = rng();
        if (r % 97 == 0)
          return fp8 ? 0x7f : (model.input_a == formats::bf16 ? 0x7f80 : 0x7c00);  // NaN/inf
        if (r % 13 == 0) return 0;
        if (fp8) return static_cast<uint16_t>(r >> 8 & 0x7e);
        const int e = static_cast<int>((r >> 20) % (2 * spread + 1)) - spread;
        return bits_of(model.input_a,
                       std::ldexp(1.0 + static_cast<double>((r >> 32) & 0x7f) / 128.0, e)) ^
               static_cast<uint16_t>((r & 1) << 15);
      };
      const int spread = model.input_a == formats::bf16 ? 60 : 12;
      for (auto& x : a) x = draw(spread);
      for (auto& x : b) x = draw(spread);
      for (auto& x : c) {
        const uint64_t r = rng();
        x = model.accumulator == formats::fp32
                ? static_cast<uint32_t>(r >> 33) ^ static_cast<uint32_t>((r & 1) << 31)
                : static_cast<uint32_t>(r >> 49) & 0x7bff;
      }
      for (const unsigned threads : {1u, 3u}) {
        const std::vector<uint32_t> d = tensor_core_gemm(model, a, b, c, m, n, k, threads);
        for (int i = 0; i < m; ++i)
          for (int j = 0; j < n; ++j)
            ASSERT_EQ(d[i * n + j], tensor_core_dot(model, &a[i * k], 1, &b[j], n, k, c[i * n + j]))
                << name << " k=" << k << " i=" << i << " j=" << j;
      }
    }
  }
}

// Every preset the vectorised kernels take (the fp8 wgmma ones among them: blocks of 32, a 13-bit
// window, block sums truncated to 14 bits), on operands of every encoding (fp8: uniform bytes,
// NaN, zeros and subnormals included; 16-bit formats: exponents over a wide spread), C zero,
// small, spread or large, and lengths around the block size: each output equals the integer
// reference's.
TEST(TensorCoreGemm, FastPathEqualsReferenceOnEveryPresetItTakes) {
  std::mt19937_64 rng(2026);
  int taken = 0;
  bool fp8_wgmma_taken = false;
  for (const TensorCoreModel& model : tensor_core_models()) {
    if (!tensor_core_gemm_fast_path(model)) continue;
    ++taken;
    fp8_wgmma_taken |= model.name == "tc:sm90-wgmma-e4m3" || model.name == "tc:sm90-wgmma-e5m2";
    const auto draw = [&](const Format& f) -> uint16_t {
      const uint64_t r = rng();
      if (f.width() == 8) return static_cast<uint16_t>(r & 0xff);
      if (r % 29 == 0) return r & 2 ? 0 : 0x8000;
      const int spread = f == formats::fp16 ? 12 : 20;
      const int e = static_cast<int>((r >> 20) % (2 * spread + 1)) - spread;
      return bits_of(f, std::ldexp(1.0 + static_cast<double>((r >> 32) & 0x3f) / 64.0, e)) ^
             static_cast<uint16_t>((r & 1) << 15);
    };
    for (const int k : {1, 31, 32, 33, 100, 256}) {
      for (const int c_kind : {0, 1, 2, 3}) {  // zero, small, spread, large
        const int m = 9, n = 41;
        std::vector<uint16_t> a(m * k), b(k * n);
        std::vector<uint32_t> c(m * n);
        for (auto& x : a) x = draw(model.input_a);
        for (auto& x : b) x = draw(model.input_b);
        for (auto& x : c) {
          const uint64_t r = rng();
          const int e = c_kind == 1 ? -4 : c_kind == 2 ? static_cast<int>(r % 80) - 40 : 24;
          const float v = c_kind == 0 ? 0.0f
                                      : std::ldexp(1.0f + static_cast<float>(r >> 41) * 0x1p-23f,
                                                   e + static_cast<int>((r >> 8) % 4));
          x = fp32_bits((r & 1) ? -v : v);
        }
        const std::vector<uint32_t> d = tensor_core_gemm(model, a, b, c, m, n, k, c_kind % 2 + 1);
        for (int i = 0; i < m; ++i)
          for (int j = 0; j < n; ++j)
            ASSERT_EQ(d[i * n + j], tensor_core_dot(model, &a[i * k], 1, &b[j], n, k, c[i * n + j]))
                << model.name << " k=" << k << " C kind " << c_kind << " i=" << i << " j=" << j;
      }
    }
  }
  EXPECT_GE(taken, 10);
  EXPECT_TRUE(fp8_wgmma_taken);
}

// Values held as floats, A read row-wise or column-wise, shapes with partial tiles (rows not a
// multiple of 4, columns of 32, K of 16), alignment exponents across the kernels' range and
// specials in some trials: every output equals the integer reference's.
TEST(TensorCoreGemm, InPlaceOnFloatsEqualsReference) {
  std::mt19937_64 rng(7);
  const TensorCoreModel& model = tensor_core_model("tc:sm90-mma-bf16");
  const auto to_float = [](uint16_t bits) {
    const uint32_t u = static_cast<uint32_t>(bits) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  };
  const auto float_bits = [](float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
  };
  for (int trial = 0; trial < 12; ++trial) {
    const int m = 1 + static_cast<int>(rng() % 70), n = 1 + static_cast<int>(rng() % 70);
    const int k = 1 + static_cast<int>(rng() % 90);
    const bool specials = trial % 3 == 2;
    const bool columns = trial % 2 == 1;  // A read through its transpose (a_row = 1)
    // Exponents spread over [-spread, spread]: 100 reaches beyond the kernels' range.
    const int spread = trial < 6 ? 8 : 100;
    auto draw = [&]() -> uint16_t {
      const uint64_t r = rng();
      if (specials && r % 101 == 0) return r & 2 ? 0x7f80 : 0xffc0;  // infinity, NaN
      if (r % 11 == 0) return (r & 4) ? 0x8000 : 0;
      const int e = static_cast<int>((r >> 20) % (2 * spread + 1)) - spread;
      return static_cast<uint16_t>(((e + 127) << 7) | ((r >> 32) & 0x7f) | ((r & 1) << 15));
    };
    std::vector<uint16_t> a(m * k), b(k * n);
    std::vector<uint32_t> c(m * n);
    for (auto& x : a) x = draw();
    for (auto& x : b) x = draw();
    for (auto& x : c) x = static_cast<uint32_t>(draw()) << 16 | static_cast<uint32_t>(rng() >> 48);
    // A stored row-major (a_row = k) or column-major (a_row = 1); B and C with padded rows.
    const int ldb = n + 3, ldc = n + 5;
    std::vector<float> af(m * k), bf(k * ldb, 0.0f), cf(m * ldc, 0.0f);
    for (int i = 0; i < m; ++i)
      for (int kk = 0; kk < k; ++kk)
        af[columns ? kk * m + i : i * k + kk] = to_float(a[i * k + kk]);
    for (int kk = 0; kk < k; ++kk)
      for (int j = 0; j < n; ++j) bf[kk * ldb + j] = to_float(b[kk * n + j]);
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) std::memcpy(&cf[i * ldc + j], &c[i * n + j], 4);
    tensor_core_gemm_in_place(model, m, n, k, af.data(), columns ? 1 : k, columns ? m : 1,
                              bf.data(), ldb, cf.data(), ldc);
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j)
        ASSERT_EQ(float_bits(cf[i * ldc + j]),
                  tensor_core_dot(model, &a[i * k], 1, &b[j], n, k, c[i * n + j]))
            << "trial " << trial << " m=" << m << " n=" << n << " k=" << k << " i=" << i
            << " j=" << j;
  }
}

// Operands packed once and multiplied several times (as attention reuses its tiles), among them
// a B holding infinities and NaNs, whose outputs the reference computes from encodings taken
// from the packed layout once and kept.
TEST(TensorCoreGemm, PackedOperandsReusedEqualReference) {
  std::mt19937_64 rng(11);
  const TensorCoreModel& model = tensor_core_model("tc:sm90-mma-bf16");
  const auto value = [](uint16_t bits) { return std::bit_cast<float>(uint32_t{bits} << 16); };
  for (int trial = 0; trial < 6; ++trial) {
    const int m = 1 + static_cast<int>(rng() % 40), n = 1 + static_cast<int>(rng() % 70);
    const int k = 1 + static_cast<int>(rng() % 70);
    const bool specials = trial % 2 == 1;
    auto draw = [&]() -> uint16_t {
      const uint64_t r = rng();
      if (specials && r % 97 == 0) return r & 2 ? 0xff80 : 0x7fc0;  // -infinity, NaN
      if (r % 13 == 0) return 0;
      const int e = static_cast<int>((r >> 20) % 41) - 20;
      return static_cast<uint16_t>(((e + 127) << 7) | ((r >> 32) & 0x7f) | ((r & 1) << 15));
    };
    std::vector<uint16_t> b(k * n);
    for (auto& x : b) x = draw();
    std::vector<float> bf(k * n);
    for (int x = 0; x < k * n; ++x) bf[x] = value(b[x]);
    TensorCoreOperand right;
    right.pack_right(model, k, n, bf.data(), n);
    for (int use = 0; use < 3; ++use) {
      std::vector<uint16_t> a(m * k);
      for (auto& x : a) x = draw();
      std::vector<float> af(m * k), cf(m * n);
      for (int x = 0; x < m * k; ++x) af[x] = value(a[x]);
      std::vector<uint32_t> c(m * n);
      for (int x = 0; x < m * n; ++x) {
        c[x] = static_cast<uint32_t>(draw()) << 16 | static_cast<uint32_t>(rng() >> 48);
        cf[x] = std::bit_cast<float>(c[x]);
      }
      TensorCoreOperand left;
      left.pack_left(model, m, k, af.data(), k, 1);
      tensor_core_gemm_in_place(left, right, cf.data(), n);
      for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j)
          ASSERT_EQ(std::bit_cast<uint32_t>(cf[i * n + j]),
                    tensor_core_dot(model, &a[i * k], 1, &b[j], n, k, c[i * n + j]))
              << "trial " << trial << " use " << use << " i=" << i << " j=" << j;
    }
  }
  // Operands that do not fit together.
  std::vector<float> x(64, 1.0f), c(16, 0.0f);
  TensorCoreOperand a16, b32, left_as_b;
  a16.pack_left(model, 4, 16, x.data(), 16, 1);
  b32.pack_right(model, 32, 2, x.data(), 2);
  left_as_b.pack_left(model, 16, 4, x.data(), 4, 1);
  EXPECT_THROW(tensor_core_gemm_in_place(a16, b32, c.data(), 2), std::invalid_argument);
  EXPECT_THROW(tensor_core_gemm_in_place(a16, left_as_b, c.data(), 4), std::invalid_argument);
}

TEST(TensorCoreGemm, InPlaceRejectsValuesOfAnotherFormat) {
  const TensorCoreModel& model = tensor_core_model("tc:sm90-mma-bf16");
  std::vector<float> a(16, 1.0f), b(16, 1.0f), c(1, 0.0f);
  b[3] = 1.0f + 0x1p-10f;  // not a bf16 value
  try {
    tensor_core_gemm_in_place(model, 1, 1, 16, a.data(), 16, 1, b.data(), 1, c.data(), 1);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("B value 1.000977"), std::string::npos) << e.what();
  }
}

TEST(TensorCoreAccumulation, RegistryKnowsEveryPreset) {
  const std::vector<std::string> names = accumulation_names();
  for (const TensorCoreModel& m : tensor_core_models()) {
    EXPECT_NE(std::find(names.begin(), names.end(), m.name), names.end()) << m.name;
  }
  auto acc = make_accumulation("tc:sm90-mma-bf16");
  RoundingContext ctx(formats::fp32);
  EXPECT_EQ(
      acc->dot(std::vector<double>{0x1p-24, 0x1p-25}, std::vector<double>{1.0, 1.0}, 1.0, ctx),
      1.0);
  EXPECT_THROW(acc->dot(std::vector<double>{0.1}, std::vector<double>{1.0}, 0.0, ctx),
               std::invalid_argument);
  // A context in another format rounds the model's result once more.
  RoundingContext bf16_ctx(formats::bf16);
  EXPECT_EQ(acc->dot(std::vector<double>{1.0}, std::vector<double>{0x1p-9}, 1.0, bf16_ctx), 1.0);
}

class MmaCommand : public ::testing::Test {
 protected:
  // One directory per test: ctest runs the tests of this fixture in parallel, and both write
  // a.npy and b.npy (a shared directory let one read the other's).
  std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) /
                              (std::string("simprec_mma_test_") +
                               ::testing::UnitTest::GetInstance()->current_test_info()->name());
  void SetUp() override { std::filesystem::create_directories(dir); }
  std::string path(const char* name) const { return (dir / name).string(); }
};

TEST_F(MmaCommand, ComputesWhatTheModelComputes) {
  const TensorCoreModel& model = tensor_core_model("tc:sm90-mma-bf16");
  const int m = 2, k = 20, n = 3;
  std::vector<uint16_t> a(2 * m * k), b(2 * k * n);
  std::vector<float> c(2 * m * n);
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = bits_of(formats::bf16, std::ldexp(1.0 + (i % 7) / 8.0, static_cast<int>(i % 11) - 5) *
                                      (i % 3 ? 1 : -1));
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = bits_of(formats::bf16, std::ldexp(1.0 + (i % 5) / 8.0, static_cast<int>(i % 9) - 4));
  for (size_t i = 0; i < c.size(); ++i) c[i] = 0.1f * static_cast<float>(i);
  write_npy(path("a.npy"), make_npy<uint16_t>({2, m, k}, a));
  write_npy(path("b.npy"), make_npy<uint16_t>({2, k, n}, b));
  write_npy(path("c.npy"), make_npy<float>({2, m, n}, c));
  const auto r =
      testing::run_simprec("mma --model tc:sm90-mma-bf16 --a " + path("a.npy") + " --b " +
                           path("b.npy") + " --c " + path("c.npy") + " --out " + path("d.npy"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const NpyArray d = read_npy(path("d.npy"));
  ASSERT_EQ(d.type, NpyType::kFloat32);
  ASSERT_EQ(d.shape, (std::vector<int64_t>{2, m, n}));
  for (int t = 0; t < 2; ++t)
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        const uint32_t want = tensor_core_dot(model, &a[(t * m + i) * k], 1, &b[t * k * n + j], n,
                                              k, fp32_bits(c[(t * m + i) * n + j]));
        EXPECT_EQ(fp32_bits(d.as<float>()[(t * m + i) * n + j]), want);
      }
}

TEST_F(MmaCommand, ListsModelsAndRejectsBadInput) {
  auto r = testing::run_simprec("mma --list");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.output.find("tc:sm90-wgmma-e4m3"), std::string::npos);
  EXPECT_NE(r.output.find("yes(H100)"), std::string::npos);

  write_npy(path("a.npy"), make_npy<float>({2, 3}, std::vector<float>{1, 2, 3, 4, 5, 0.1f}));
  write_npy(path("b.npy"), make_npy<float>({3, 1}, std::vector<float>{1, 2, 3}));
  write_npy(path("b4.npy"), make_npy<float>({4, 1}, std::vector<float>{1, 2, 3, 4}));
  r = testing::run_simprec("mma --model tc:sm90-mma-bf16 --a " + path("a.npy") + " --b " +
                           path("b.npy") + " --out " + path("d.npy"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("not representable in bf16"), std::string::npos) << r.output;
  r = testing::run_simprec("mma --model tc:sm90-mma-bf16 --a " + path("a.npy") + " --b " +
                           path("b4.npy") + " --out " + path("d.npy"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("K differs"), std::string::npos) << r.output;
  r = testing::run_simprec("mma --model tc:sm99-nothing --a " + path("a.npy") + " --b " +
                           path("b.npy") + " --out " + path("d.npy"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("unknown tensor-core model"), std::string::npos) << r.output;
  write_npy(path("a16.npy"), make_npy<uint16_t>({1, 3}, std::vector<uint16_t>{1, 2, 3}));
  r = testing::run_simprec("mma --model tc:sm90-mma-e4m3 --a " + path("a16.npy") + " --b " +
                           path("b.npy") + " --out " + path("d.npy"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("uint8"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace simprec
