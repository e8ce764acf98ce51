// simprec discover --gemm on GEMMs recorded on an H200 (tests/data/gemm_discover, written by its
// make_fixtures.py from tests/data/gemm): D is the GPU's output, and what the search must find is
// what the recording shows of the kernel (its launch grid's split-K pieces, the promotion of
// _scaled_mm without fast accumulation, the row-wise scales' order), never what the code under
// test computes.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "lib/npy/npy.hpp"
#include "tests/cli_support.hpp"

namespace {

using simprec::testing::fresh_dir;
using simprec::testing::run_simprec;

const std::string kData = SIMPREC_SOURCE_DIR "/tests/data/gemm_discover/";

// --a --b --d (and the scales where the fixture has them) of a fixture.
std::string arrays(const std::string& fixture, bool scales = false) {
  std::string s = " --a " + kData + fixture + ".a.npy --b " + kData + fixture + ".b.npy --d " +
                  kData + fixture + ".d.npy";
  if (scales) {
    s += " --scale-a " + kData + fixture + ".scale_a.npy --scale-b " + kData + fixture +
         ".scale_b.npy";
  }
  return s;
}

// A fixture's arrays with another D.
std::string with_d(const std::string& fixture, const std::string& d) {
  return " --a " + kData + fixture + ".a.npy --b " + kData + fixture + ".b.npy --d " + d +
         " --scale-a " + kData + fixture + ".scale_a.npy --scale-b " + kData + fixture +
         ".scale_b.npy";
}

// The text after the last "spec " line start.
std::string spec_of(const std::string& output) {
  const size_t at = output.rfind("\nspec ");
  if (at == std::string::npos) return "";
  const size_t end = output.find('\n', at + 1);
  return output.substr(at + 6, end == std::string::npos ? std::string::npos : end - at - 6);
}

// The line that starts with `start`, or empty.
std::string line_of(const std::string& output, const std::string& start) {
  const size_t at = output.find("\n" + start);
  if (at == std::string::npos) return "";
  const size_t end = output.find('\n', at + 1);
  return output.substr(at + 1, end == std::string::npos ? std::string::npos : end - at - 1);
}

// The specs of the "ties" line.
std::vector<std::string> ties_of(const std::string& output) {
  std::string line = line_of(output, "ties (as many outputs agree): ");
  std::vector<std::string> specs;
  if (line.empty()) return specs;
  line = line.substr(line.find(": ") + 2);
  for (size_t at = 0; at < line.size();) {
    const size_t next = line.find(", ", at);
    specs.push_back(line.substr(at, next == std::string::npos ? std::string::npos : next - at));
    if (next == std::string::npos) break;
    at = next + 2;
  }
  return specs;
}

// cuBLAS's split-K kernel on matmul.bf16.on.16x16x10000 launched a grid of 1 x 7 x 1 thread
// blocks over one 64x16 output tile: 7 pieces of K, 1472 elements each (23 K tiles of 64 bf16
// elements; tests/data/gemm_discover/cases.json).
TEST(DiscoverGemmCli, FindsTheLaunchedSplitKOfABf16Matmul) {
  const auto r = run_simprec("discover --gemm" + arrays("bf16_splitk"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("result bit-exact on all 256 outputs"), std::string::npos) << r.output;
  EXPECT_EQ(spec_of(r.output), "cublas-bf16,split_k=length:1472") << r.output;
  EXPECT_NE(line_of(r.output, "  1. ").find("(K in 7 pieces)"), std::string::npos) << r.output;
  // Other instruction models may agree as well, but only with the launched pieces.
  for (const std::string& tie : ties_of(r.output))
    EXPECT_NE(tie.find("split_k=length:1472"), std::string::npos) << tie;
}

// torch._scaled_mm e4m3 x e4m3 with use_fast_accum=False: promoted to fp32 every 128 elements of
// K (the scaled-mm-e4m3 preset, docs/gemm.md); bf16 out, tensor-wise scales.
TEST(DiscoverGemmCli, FindsThePromotionOfAnFp8ScaledMm) {
  const auto r = run_simprec("discover --gemm" + arrays("e4m3_promoted", true));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(spec_of(r.output), "scaled-mm-e4m3") << r.output;
  // No other promotion interval agrees: a tie promotes every 128 (or splits K in pieces of 128).
  for (const std::string& tie : ties_of(r.output)) {
    EXPECT_EQ(tie.find("promote="), std::string::npos) << tie;
    if (tie.find("-fast") != std::string::npos) {
      EXPECT_NE(tie.find("split_k=length:128"), std::string::npos) << tie;
    }
  }
}

// e5m2 x e4m3 with row-wise scales and an fp32 output: the scales applied scale_b first, then
// scale_a (the rowwise preset's b-then-a), promoted every 128.
TEST(DiscoverGemmCli, FindsTheScaleOrderOfARowWiseMixedFp8ScaledMm) {
  const auto r = run_simprec("discover --gemm --family scaled-mm-e5m2-e4m3" +
                             arrays("e5m2_e4m3_rowwise", true));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(spec_of(r.output), "scaled-mm-e5m2-e4m3-rowwise,out=fp32") << r.output;
  for (const std::string& tie : ties_of(r.output)) {
    EXPECT_EQ(tie.find("scale_order=alpha"), std::string::npos) << tie;
    EXPECT_EQ(tie.find("promote="), std::string::npos) << tie;
  }
}

// F.linear's forward in bf16 with a bias (tests/data/linear): cuBLAS's kernel adds the bias in
// its epilogue, in fp32 before the output's one rounding, and split nothing (its name has no
// splitK). Without the bias no spec comes near: the bias is what the epilogue added.
TEST(DiscoverGemmCli, FindsALinearLayersBiasEpilogue) {
  const std::string files = arrays("linear_bias");
  const auto r =
      run_simprec("discover --gemm" + files + " --bias " + kData + "linear_bias.bias.npy");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(spec_of(r.output), "cublas-bf16") << r.output;
  const auto without = run_simprec("discover --gemm --family cublas-bf16" + files);
  EXPECT_EQ(without.exit_code, 1) << without.output;
  EXPECT_EQ(without.output.find("result bit-exact"), std::string::npos) << without.output;
}

// One output of a recorded D changed: no spec is bit-exact, and the closest names that output.
std::string altered_d(const std::string& name, int64_t row, int64_t column, float& was,
                      float& now) {
  simprec::NpyArray d = simprec::read_npy(kData + "e5m2_e4m3_rowwise.d.npy");
  std::span<float> values = d.as<float>();
  float& x = values[static_cast<size_t>(row * d.shape[1] + column)];
  was = x;
  x = std::nextafter(x, INFINITY);
  now = x;
  const std::string path = (fresh_dir(name) / "d.npy").string();
  simprec::write_npy(path, d);
  return path;
}

std::string text(float x) {
  char s[64];
  std::snprintf(s, sizeof s, "%.9g", static_cast<double>(x));
  return s;
}

TEST(DiscoverGemmCli, NamesTheOutputOfAnAlteredRecording) {
  float was = 0, now = 0;
  const std::string d = altered_d("discover_gemm_altered", 5, 17, was, now);
  const std::string files = with_d("e5m2_e4m3_rowwise", d);
  const auto r = run_simprec("discover --gemm --family scaled-mm-e5m2-e4m3" + files);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("result 1 of 4096 outputs differ; the first at row 5, column 17: D " +
                          text(now) + ", spec " + text(was)),
            std::string::npos)
      << r.output;
  EXPECT_EQ(spec_of(r.output), "scaled-mm-e5m2-e4m3-rowwise,out=fp32") << r.output;
}

// With no spec bit-exact, a search past its time limit stops with the closest spec so far.
TEST(DiscoverGemmCli, TimeLimitStopsWithTheBestSpecSoFar) {
  float was = 0, now = 0;
  const std::string d = altered_d("discover_gemm_limit", 0, 0, was, now);
  const std::string files = with_d("e5m2_e4m3_rowwise", d);
  const auto began = std::chrono::steady_clock::now();
  const auto r = run_simprec("discover --gemm --time-limit 1" + files);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("result stopped at the time limit: "), std::string::npos) << r.output;
  EXPECT_FALSE(spec_of(r.output).empty()) << r.output;
  // Every run takes well under a second here; the whole search takes far longer.
  EXPECT_LT(seconds, 30) << r.output;
}

TEST(DiscoverGemmCli, RefusesBadInputsWithTheReason) {
  const std::string a = kData + "bf16_splitk.a.npy", b = kData + "bf16_splitk.b.npy",
                    d = kData + "bf16_splitk.d.npy", fp8_a = kData + "e4m3_promoted.a.npy",
                    fp8_d = kData + "e4m3_promoted.d.npy";
  const auto expect_usage = [](const std::string& args, const std::string& reason) {
    const auto r = run_simprec("discover --gemm " + args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.output;
    EXPECT_NE(r.output.find(reason), std::string::npos) << args << "\n" << r.output;
  };
  expect_usage("--a " + fp8_a + " --b " + b + " --d " + d,
               "A (32, 1024) and B (10000, 16): expected M x K and K x N");
  expect_usage("--a " + a + " --b " + b + " --d " + fp8_d,
               "D (32, 128): expected (16, 16), M x N of A and B");
  expect_usage("--a " + a + " --b " + b + " --d " + a, "D (16, 10000): expected (16, 16)");
  expect_usage("--a " + a + " --b " + b, "--gemm needs --d");
  expect_usage("--a " + a + " --b " + b + " --d " + d + " --family cublas-bf61",
               "did you mean 'cublas-bf16'");
  expect_usage("--a " + a + " --b " + b + " --d " + d + " --family scaled-mm-e4m3",
               "--family scaled-mm-e4m3: instruction=tc:sm90-wgmma-e4m3 does not take these "
               "operands");
  expect_usage("--a " + a + " --b " + b + " --d " + d + " --scale-a " + kData +
                   "e5m2_e4m3_rowwise.scale_b.npy",
               "scale_a: 128 values; expected 1 (tensor-wise) or 16 (one per row)");
  expect_usage("--a " + a + " --b " + b + " --d " + d + " --q " + a,
               "not an attention kernel's options");
  // D as bf16 encodings rather than float32 values.
  const std::string encodings = (fresh_dir("discover_gemm_encodings") / "d.npy").string();
  const std::vector<uint16_t> bits(256, 0x3f80);
  simprec::write_npy(encodings, simprec::make_npy<uint16_t>({16, 16}, bits));
  expect_usage("--a " + a + " --b " + b + " --d " + encodings,
               "D: dtype uint16; expected float32 values");
  const auto r = run_simprec("discover --a " + a + " --b " + b + " --d " + d);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("describes a recorded GEMM: give --gemm"), std::string::npos) << r.output;
}

}  // namespace
