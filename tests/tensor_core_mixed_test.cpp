// Tensor-core models whose A and B are different FP8 formats (e5m2 x e4m3 and e4m3 x e5m2): each
// operand decoded in its own format, the arithmetic the single-format siblings' (checked on the
// H100), and every entry point checking A against A's format and B against B's.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <random>
#include <vector>

#include "emulation/accumulation.hpp"
#include "emulation/round.hpp"
#include "emulation/tensor_core.hpp"
#include "lib/npy/npy.hpp"
#include "tests/cli_support.hpp"

namespace simprec {
namespace {

constexpr const char* kMixed[] = {"tc:sm90-wgmma-e5m2-e4m3", "tc:sm90-wgmma-e4m3-e5m2",
                                  "tc:sm90-mma-e5m2-e4m3", "tc:sm90-mma-e4m3-e5m2"};

TEST(MixedFp8, PresetsNameTheirOperandFormats) {
  for (const char* name : kMixed) {
    const TensorCoreModel& m = tensor_core_model(name);
    const bool e5m2_first = std::string(name).find("e5m2-e4m3") != std::string::npos;
    EXPECT_EQ(m.input_a, e5m2_first ? formats::e5m2 : formats::e4m3fn) << name;
    EXPECT_EQ(m.input_b, e5m2_first ? formats::e4m3fn : formats::e5m2) << name;
    EXPECT_FALSE(m.same_inputs());
    EXPECT_EQ(m.input_name(), m.input_a.name() + "." + m.input_b.name());
    // The PTX type order is A's, then B's (PTX writes e4m3fn as e4m3).
    EXPECT_NE(m.instruction.find(e5m2_first ? ".e5m2.e4m3" : ".e4m3.e5m2"), std::string::npos)
        << m.instruction;
  }
}

// Every pair of encodings, one product from C = +0: the exact product of the two values, each
// decoded in its own operand's format (double multiplication is exact here: 3 x 4 significant
// bits). A decode in the other operand's format gives other values for most encodings.
TEST(MixedFp8, EveryPairOfEncodingsGivesTheExactProduct) {
  for (const char* name : kMixed) {
    const TensorCoreModel& m = tensor_core_model(name);
    int checked = 0;
    for (uint16_t a = 0; a < 256; ++a) {
      for (uint16_t b = 0; b < 256; ++b) {
        const double x = decode(m.input_a, a), y = decode(m.input_b, b);
        const double want = x * y;  // NaN for a NaN operand or infinity times zero
        const double got = decode(m.accumulator, tensor_core_dot(m, &a, 1, &b, 1, 1, 0u));
        if (std::isnan(want)) {
          ASSERT_TRUE(std::isnan(got)) << name << " a=" << a << " b=" << b;
        } else {
          ASSERT_EQ(got, want) << name << " a=" << a << " b=" << b;
        }
        ++checked;
      }
    }
    EXPECT_EQ(checked, 65536);
  }
}

// Long chains: the mixed model computes what its single-format sibling computes on operands
// whose values both formats hold (e4m3 and e5m2 share the values with 2 fraction bits and
// exponents in [-6, 8]).
TEST(MixedFp8, ChainsEqualTheSiblingOnValuesBothFormatsHold) {
  std::mt19937_64 rng(31);
  const auto draw = [&](const Format& f) {
    const uint64_t r = rng();
    const double v =
        std::ldexp(1.0 + static_cast<double>(r % 4) / 4.0, static_cast<int>((r >> 8) % 15) - 6) *
        ((r >> 16) & 1 ? -1.0 : 1.0);
    RoundingContext ctx(f);
    return static_cast<uint16_t>(ctx.round(v));
  };
  const std::pair<const char*, const char*> pairs[] = {
      {"tc:sm90-wgmma-e5m2-e4m3", "tc:sm90-wgmma-e4m3"},
      {"tc:sm90-wgmma-e4m3-e5m2", "tc:sm90-wgmma-e5m2"},
      {"tc:sm90-mma-e5m2-e4m3", "tc:sm90-mma-e4m3"},
      {"tc:sm90-mma-e4m3-e5m2", "tc:sm90-mma-e5m2"}};
  for (const auto& [mixed_name, sibling_name] : pairs) {
    const TensorCoreModel& mixed = tensor_core_model(mixed_name);
    const TensorCoreModel& sibling = tensor_core_model(sibling_name);
    const int m = 5, n = 6, k = 200;
    std::vector<uint16_t> a(m * k), b(k * n), a_sib(m * k), b_sib(k * n);
    for (int i = 0; i < m * k; ++i) {
      a[i] = draw(mixed.input_a);
      a_sib[i] = static_cast<uint16_t>(
          RoundingContext(sibling.input_a).round(decode(mixed.input_a, a[i])));
    }
    for (int i = 0; i < k * n; ++i) {
      b[i] = draw(mixed.input_b);
      b_sib[i] = static_cast<uint16_t>(
          RoundingContext(sibling.input_b).round(decode(mixed.input_b, b[i])));
    }
    const std::vector<uint32_t> c(m * n, 0u);
    EXPECT_EQ(tensor_core_gemm(mixed, a, b, c, m, n, k, 1),
              tensor_core_gemm(sibling, a_sib, b_sib, c, m, n, k, 1))
        << mixed_name;
  }
}

TEST(MixedFp8, AccumulationChecksEachOperandAgainstItsFormat) {
  auto acc = make_accumulation("tc:sm90-wgmma-e5m2-e4m3");
  RoundingContext ctx(formats::fp32);
  // 57344 is e5m2's largest value (A may hold it), 448 e4m3's (B may hold it).
  EXPECT_EQ(acc->dot(std::vector<double>{57344.0}, std::vector<double>{448.0}, 0.0, ctx),
            57344.0 * 448.0);
  try {
    (void)acc->dot(std::vector<double>{1.0}, std::vector<double>{57344.0}, 0.0, ctx);
    FAIL() << "B = 57344 is not an e4m3 value";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("B value 57344"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("e4m3fn"), std::string::npos) << e.what();
  }
  try {
    (void)acc->dot(std::vector<double>{1.125}, std::vector<double>{1.0}, 0.0, ctx);
    FAIL() << "A = 1.125 is not an e5m2 value";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("A value 1.125"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("e5m2"), std::string::npos) << e.what();
  }
}

TEST(MixedFp8, MmaCommandTakesEachOperandInItsFormat) {
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / "simprec_mixed_fp8_mma";
  std::filesystem::create_directories(dir);
  const auto path = [&](const char* name) { return (dir / name).string(); };
  // A: e5m2 values (1024 is not e4m3's), B: e4m3 values (1.125 is not e5m2's). 1025.125 has 14
  // significant bits, as many as the fp8 wgmma's block result keeps.
  write_npy(path("a.npy"), make_npy<float>({1, 2}, std::vector<float>{1024.0f, 1.0f}));
  write_npy(path("b.npy"), make_npy<float>({2, 1}, std::vector<float>{1.0f, 1.125f}));
  auto r = testing::run_simprec("mma --model tc:sm90-wgmma-e5m2-e4m3 --a " + path("a.npy") +
                                " --b " + path("b.npy") + " --out " + path("d.npy"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(read_npy(path("d.npy")).as<float>()[0], 1025.125f);
  // The other order of formats refuses both operands; A is read first.
  r = testing::run_simprec("mma --model tc:sm90-wgmma-e4m3-e5m2 --a " + path("a.npy") + " --b " +
                           path("b.npy") + " --out " + path("d.npy"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("A[0] = 1024 is not representable in e4m3fn"), std::string::npos)
      << r.output;
  r = testing::run_simprec("mma --list");
  EXPECT_NE(r.output.find("e5m2.e4m3fn"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace simprec