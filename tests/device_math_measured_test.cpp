// The device_math strategies' functions against the functions they stand for, measured over
// every fp32 argument on an NVIDIA H200 (CUDA with and without --use_fast_math, Triton 3.6) and
// on its host CPU (numpy 2.5.2) as digests of 2^16 consecutive arguments
// (tests/data/device_math/h200_function_digests.txt, scripts/device_functions/). Here 16 of each
// function's chunks; build/bin/device_function_digests check compares every chunk.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "tests/device_function_digests.hpp"

namespace simprec::testing {
namespace {

const std::string kData =
    std::string(SIMPREC_SOURCE_DIR) + "/tests/data/device_math/h200_function_digests.txt";

TEST(DeviceMathMeasured, SampledChunksEqualTheDevice) {
  const std::vector<MeasuredFunction> functions = read_measured_functions(kData);
  std::set<std::string> strategies;
  for (const MeasuredFunction& f : functions) {
    SCOPED_TRACE(f.measured + ": " + f.strategy + " " + f.function);
    strategies.insert(f.strategy);
    const Model model = make_model(f.strategy, f.function);
    ASSERT_GE(f.samples.size(), 16u);
    const size_t step = f.samples.size() / 16;
    for (size_t i = 0; i < f.samples.size(); i += step) {
      const auto [chunk, measured] = f.samples[i];
      const std::optional<uint64_t> digest = chunk_digest(model, f.function == "div", chunk);
      ASSERT_TRUE(digest.has_value()) << "chunk " << chunk << " unmodelled";
      EXPECT_EQ(*digest, measured) << (f.function == "div" ? "pairs " : "arguments ") << std::hex
                                   << (chunk << 16) << " to " << ((chunk << 16) | 0xffff);
    }
  }
  // Every GPU strategy and numpy are measured.
  for (const char* s : {"sm90", "sm90-fast-math", "triton-sm90", "numpy"})
    EXPECT_TRUE(strategies.count(s)) << s;
}

// The digest tells a function from its neighbours: one result one ulp off changes it.
TEST(DeviceMathMeasured, TheDigestSeesOneUlp) {
  const MeasuredFunction f = read_measured_functions(kData).front();
  const Model exact = make_model(f.strategy, f.function);
  // Named copies, not a structured binding: clang 14 (the sanitizer build's) cannot capture one.
  const auto chunk = f.samples[1].first;
  const auto measured = f.samples[1].second;
  const Model off_by_one = [&](float x, float y) -> std::optional<float> {
    std::optional<float> v = exact(x, y);
    if (v && std::bit_cast<uint32_t>(x) == ((chunk << 16) | 12345))
      v = std::nextafter(*v, INFINITY);
    return v;
  };
  EXPECT_EQ(chunk_digest(exact, f.function == "div", chunk), measured);
  EXPECT_NE(chunk_digest(off_by_one, f.function == "div", chunk), measured);
}

// The division pairs are measure.py's (pair 0 as Python's integers compute it from the
// definition; pair 1 has its exponents in range).
TEST(DeviceMathMeasured, DivisionPairs) {
  EXPECT_EQ(std::bit_cast<uint32_t>(division_pair(0).first), 0xd820b7e9u);
  EXPECT_EQ(division_pair(0).second, 0x1.61f27ep-94f);
  const auto [x, y] = division_pair(1);
  EXPECT_GE(std::fabs(x), 0x1p-30f);
  EXPECT_LT(std::fabs(x), 0x1p34f);
  EXPECT_GE(std::fabs(y), 0x1p-30f);
  EXPECT_LT(std::fabs(y), 0x1p34f);
}

TEST(DeviceMathMeasured, BadDataIsRefusedNamingTheLine) {
  const std::string path = ::testing::TempDir() + "/bad_digests.txt";
  std::ofstream(path) << "# a comment\nfunction fm_exp sm90-fast-math exp 0-3 zz\n";
  try {
    read_measured_functions(path);
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("bad_digests.txt:2"), std::string::npos) << e.what();
  }
  EXPECT_THROW(make_model("no-such-strategy", "exp"), std::exception);
  EXPECT_THROW(make_model("numpy", "sqrt"), std::invalid_argument);
}

}  // namespace
}  // namespace simprec::testing
