// Loading attention inputs from .npy files: values, bit patterns, and every way a file can be
// wrong; and the generators' contracts (independent draws, the repeated maximum).
#include <gtest/gtest.h>

#include <unistd.h>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <vector>

#include "emulation/round.hpp"
#include "lib/inputs/generators.hpp"
#include "lib/npy/npy.hpp"

namespace simprec::inputs {
namespace {

namespace fs = std::filesystem;

class NpyFiles : public ::testing::Test {
 protected:
  fs::path dir =
      fs::temp_directory_path() / ("simprec_attention_inputs_" + std::to_string(::getpid()));
  void SetUp() override { fs::create_directories(dir); }
  void TearDown() override { fs::remove_all(dir); }
  fs::path write(const std::string& name, std::vector<int64_t> shape, const std::vector<float>& v) {
    write_npy(dir / name, make_npy<float>(std::move(shape), v));
    return dir / name;
  }
};

TEST_F(NpyFiles, LoadsValuesAndShapes) {
  std::vector<float> q(2 * 3 * 5 * 4), v(2 * 3 * 5 * 6);
  for (size_t i = 0; i < q.size(); ++i) q[i] = 0.25f * static_cast<float>(i % 7) - 0.5f;
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  const auto in = load_inputs(write("q.npy", {2, 3, 5, 4}, q), write("k.npy", {2, 3, 5, 4}, q),
                              write("v.npy", {2, 3, 5, 6}, v), std::nullopt, std::nullopt);
  EXPECT_EQ(in.shape, (attention::AttentionShape{2, 3, 5, 5, 4, 6}));
  EXPECT_EQ(in.q[13], q[13]);
  EXPECT_EQ(in.v.back(), v.back());
  EXPECT_FALSE(in.has_grad());
}

TEST_F(NpyFiles, LoadsBitPatterns) {
  // bf16 0x3fc0 = 1.5, 0xc000 = -2
  const std::vector<uint16_t> bits{0x3fc0, 0xc000, 0x3fc0, 0xc000};
  write_npy(dir / "b.npy", make_npy<uint16_t>({1, 2, 2}, bits));
  const auto in =
      load_inputs(dir / "b.npy", dir / "b.npy", dir / "b.npy", dir / "b.npy", formats::bf16);
  EXPECT_EQ(in.q, (std::vector<double>{1.5, -2, 1.5, -2}));
  EXPECT_TRUE(in.has_grad());
  // Float files with --input-format, bit patterns without it, a width that does not match.
  const auto f = write("f.npy", {2, 2}, {1, 2, 3, 4});
  EXPECT_THROW(load_inputs(f, f, f, std::nullopt, formats::bf16), std::invalid_argument);
  EXPECT_THROW(load_inputs(dir / "b.npy", dir / "b.npy", dir / "b.npy", std::nullopt, std::nullopt),
               std::invalid_argument);
  EXPECT_THROW(
      load_inputs(dir / "b.npy", dir / "b.npy", dir / "b.npy", std::nullopt, formats::e4m3fn),
      std::invalid_argument);
}

TEST_F(NpyFiles, RejectsMismatchesAndBadFiles) {
  const auto q = write("q.npy", {1, 4, 3}, std::vector<float>(12, 1.0f));
  const auto k5 = write("k5.npy", {1, 4, 5}, std::vector<float>(20, 1.0f));
  const auto v = write("v.npy", {1, 4, 3}, std::vector<float>(12, 1.0f));
  const auto v2 = write("v2.npy", {2, 4, 3}, std::vector<float>(24, 1.0f));
  const auto v6 = write("v6.npy", {1, 6, 3}, std::vector<float>(18, 1.0f));
  const auto flat = write("flat.npy", {12}, std::vector<float>(12, 1.0f));
  std::vector<float> with_nan(12, 1.0f);
  with_nan[5] = std::nanf("");
  const auto nan = write("nan.npy", {1, 4, 3}, with_nan);
  EXPECT_THROW(load_inputs(q, k5, v, std::nullopt, std::nullopt),
               std::invalid_argument);  // head dim
  EXPECT_THROW(load_inputs(q, q, v2, std::nullopt, std::nullopt), std::invalid_argument);  // batch
  EXPECT_THROW(load_inputs(q, q, v6, std::nullopt, std::nullopt),
               std::invalid_argument);  // key count
  EXPECT_THROW(load_inputs(flat, q, v, std::nullopt, std::nullopt), std::invalid_argument);  // rank
  EXPECT_THROW(load_inputs(q, q, nan, std::nullopt, std::nullopt), std::invalid_argument);   // NaN
  EXPECT_THROW(load_inputs(q, q, v, v6, std::nullopt), std::invalid_argument);  // dO shape
  std::ofstream(dir / "junk.npy") << "this is not an npy file";
  EXPECT_ANY_THROW(load_inputs(dir / "junk.npy", q, v, std::nullopt, std::nullopt));
  EXPECT_ANY_THROW(load_inputs(dir / "missing.npy", q, v, std::nullopt, std::nullopt));
  write_npy(dir / "int.npy", make_npy<int32_t>({1, 4, 3}, std::vector<int32_t>(12, 1)));
  EXPECT_THROW(load_inputs(dir / "int.npy", q, v, std::nullopt, std::nullopt),
               std::invalid_argument);
}

TEST_F(NpyFiles, ArraysWithNanAndInfinityLoadOnlyWhenAllowed) {
  std::vector<float> values(12, 1.0f);
  values[5] = std::nanf("");
  values[7] = -INFINITY;
  const NpyArray a = make_npy<float>({1, 4, 3}, values);
  const LabelledArray q{&a, "q"};
  EXPECT_THROW(inputs_from_arrays(q, q, q, std::nullopt, std::nullopt), std::invalid_argument);
  const attention::AttentionInputs in =
      inputs_from_arrays(q, q, q, std::nullopt, std::nullopt, NonFiniteInputs::kAllow);
  EXPECT_TRUE(std::isnan(in.q[5]));
  EXPECT_EQ(in.v[7], -INFINITY);
}

TEST(Generators, DrawsAreIndependentAndReproducible) {
  const attention::AttentionShape s{3, 2, 16, 16, 8, 8};
  const auto a = generate("normal", s, 1, true), b = generate("normal", s, 1, true),
             c = generate("normal", s, 2, true);
  EXPECT_EQ(a.q, b.q);
  EXPECT_NE(a.q, c.q);
  // Draw 0 and draw 1 differ; the first draw does not depend on how many draws follow.
  const size_t per_draw = 2 * 16 * 8;
  EXPECT_NE(std::vector<double>(a.q.begin(), a.q.begin() + per_draw),
            std::vector<double>(a.q.begin() + per_draw, a.q.begin() + 2 * per_draw));
  const auto one = generate("normal", {1, 2, 16, 16, 8, 8}, 1, true);
  EXPECT_EQ(one.q, std::vector<double>(a.q.begin(), a.q.begin() + per_draw));
  // Standard normal: mean and variance of 3*2*16*8*4 = 3072 values within 5 standard errors.
  double sum = 0, sq = 0;
  size_t n = 0;
  for (const auto* t : {&a.q, &a.k, &a.v, &a.d_out}) {
    for (double x : *t) sum += x, sq += x * x, ++n;
  }
  EXPECT_NEAR(sum / n, 0.0, 5 / std::sqrt(double(n)));
  EXPECT_NEAR(sq / n, 1.0, 5 * std::sqrt(2.0 / n));
}

TEST(Generators, RepeatedMaxRowsHoldTheirMaxSeveralTimesAndValuesShareASign) {
  const auto in = generate("repeated-max", {2, 1, 128, 128, 32, 32}, 3, false);
  int rows_with_repeats = 0;
  for (int64_t p = 0; p < 2; ++p) {
    for (int64_t i = 0; i < 128; ++i) {
      std::vector<double> s(128);
      for (int64_t j = 0; j < 128; ++j) {
        double acc = 0;  // bf16-exact inputs are not needed: identical keys give identical sums
        for (int64_t c = 0; c < 32; ++c)
          acc += in.q[(p * 128 + i) * 32 + c] * in.k[(p * 128 + j) * 32 + c];
        s[j] = acc;
      }
      const double m = *std::max_element(s.begin(), s.end());
      rows_with_repeats += std::count(s.begin(), s.end(), m) >= 2;
    }
  }
  // 256 rows; with 32 prototypes a row's max prototype has one copy only with probability about
  // 5 e^-4 = 9% (Poisson, mean 4 copies), so about 233 rows repeat; 200 is 6 sd below.
  EXPECT_GE(rows_with_repeats, 200);
  int negative = 0;
  for (double x : in.v) negative += x < 0;
  EXPECT_GT(negative, static_cast<int>(in.v.size() * 0.99));
}

TEST(Generators, OutliersAreNormalInputsWithABiasedKAnOutlierHeadAndLargeValues) {
  // The same streams as normal: head 0 (normal) and head 1 (the outlier head) against them.
  const attention::AttentionShape s{1, 2, 128, 128, 16, 16};
  GeneratorParams prm;
  prm.peak = 8;
  const auto base = generate("normal", s, 5, false), out = generate("outliers", s, 5, false, prm);
  for (int64_t h = 0; h < 2; ++h) {
    const double head_factor = h == 1 ? 8.0 : 1.0;  // powers of two: exact
    for (int64_t x = 0; x < 128 * 16; ++x) {
      const int64_t at = h * 128 * 16 + x, j = x / 16;
      EXPECT_EQ(out.q[at], base.q[at] / head_factor);
      EXPECT_EQ(out.v[at], j >= 64 ? 8 * base.v[at] : base.v[at]) << "key " << j;
    }
    for (int64_t c = 0; c < 16; ++c) {
      // K = (normal K + a bias of its channel) times the head's factor.
      const double bias = out.k[(h * 128) * 16 + c] / head_factor - base.k[(h * 128) * 16 + c];
      EXPECT_GT(std::fabs(bias), 1e-3);
      for (int64_t j = 1; j < 128; ++j) {
        const int64_t at = (h * 128 + j) * 16 + c;
        EXPECT_NEAR(out.k[at] / head_factor - base.k[at], bias, 1e-12) << "key " << j;
      }
    }
  }
}

}  // namespace
}  // namespace simprec::inputs
