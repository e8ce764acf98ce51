// The `simprec quantize` command: the files it writes (names, dtypes, shapes, values worked out
// by hand from OCP MX v1.0 §6.3 and NVIDIA's NVFP4 recipe), its summary, reproducible stochastic
// rounding, and clear errors for bad input.
#include <gtest/gtest.h>

#include <filesystem>
#include <vector>

#include "lib/npy/npy.hpp"
#include "tests/cli_support.hpp"

namespace {

using namespace simprec;
using simprec::testing::run_simprec;

std::filesystem::path temp_dir(const std::string& name) {
  const auto dir = std::filesystem::path(::testing::TempDir()) /
                   ("simprec_quantize_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

TEST(CliQuantize, MxFp4FilesAndValues) {
  const auto dir = temp_dir("mxfp4");
  // Two rows of 40: blocks of 32 and 8 in each row.
  std::vector<float> x(80, 0.0f);
  x[0] = 3.0f;                                // amax 3: X = 2^(1 - 2) = 0.5, 3 / X = 6 exactly
  x[1] = -1.25f;                              // -2.5 -> -2 (tie to even), dequantized -1
  x[2] = 0.5f;                                // 1
  for (int i = 40; i < 80; ++i) x[i] = 1.0f;  // X = 2^(0 - 2)
  x[79] = 100.0f;                             // X = 2^(6 - 2); 100 / 16 = 6.25 -> 6
  write_npy(dir / "x.npy", make_npy<float>({2, 40}, x));
  const auto r = run_simprec("quantize --scheme mxfp4 --in " + (dir / "x.npy").string() +
                             " --out " + (dir / "q").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("mxfp4: 80 values, 4 blocks of 32 along the last axis (the last of each "
                          "row holds 8); elements fp4_e2m1, scales e8m0, rounding rne"),
            std::string::npos)
      << r.output;

  const NpyArray elements = read_npy(dir / "q" / "elements.npy");
  EXPECT_EQ(elements.type, NpyType::kUint8);
  EXPECT_EQ(elements.shape, (std::vector<int64_t>{2, 40}));
  EXPECT_EQ(elements.as<uint8_t>()[0], 0x7);
  EXPECT_EQ(elements.as<uint8_t>()[1], 0xc);
  EXPECT_EQ(elements.as<uint8_t>()[2], 0x2);
  EXPECT_EQ(elements.as<uint8_t>()[79], 0x7);

  const NpyArray scales = read_npy(dir / "q" / "scales.npy");
  EXPECT_EQ(scales.type, NpyType::kUint8);
  EXPECT_EQ(scales.shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(scales.as<uint8_t>()[0], 126);  // 2^-1
  EXPECT_EQ(scales.as<uint8_t>()[1], 0);    // all zeros: 2^-127
  EXPECT_EQ(scales.as<uint8_t>()[2], 125);  // 2^-2
  EXPECT_EQ(scales.as<uint8_t>()[3], 131);  // 2^4

  const NpyArray dq = read_npy(dir / "q" / "dequantized.npy");
  EXPECT_EQ(dq.type, NpyType::kFloat64);
  EXPECT_EQ(dq.shape, (std::vector<int64_t>{2, 40}));
  EXPECT_EQ(dq.as<double>()[0], 3.0);
  EXPECT_EQ(dq.as<double>()[1], -1.0);
  EXPECT_EQ(dq.as<double>()[79], 96.0);
  EXPECT_FALSE(std::filesystem::exists(dir / "q" / "tensor_scale.npy"));
}

TEST(CliQuantize, Nvfp4WritesTheTensorScale) {
  const auto dir = temp_dir("nvfp4");
  std::vector<float> x(32, 0.0f);
  x[0] = 6.0f;      // block 0: amax 6 -> scale 1 (e4m3 0x38)
  x[16] = 2688.0f;  // tensor amax 448 * 6: s_enc = 1; block 1: scale 448 (0x7e)
  write_npy(dir / "x.npy", make_npy<float>({32}, x));
  const auto r = run_simprec("quantize --scheme nvfp4 --in " + (dir / "x.npy").string() +
                             " --out " + (dir / "q").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("tensor scale (fp32 decode scale) 1\n"), std::string::npos) << r.output;
  const NpyArray scales = read_npy(dir / "q" / "scales.npy");
  EXPECT_EQ(scales.shape, (std::vector<int64_t>{2}));
  EXPECT_EQ(scales.as<uint8_t>()[0], 0x38);
  EXPECT_EQ(scales.as<uint8_t>()[1], 0x7e);
  const NpyArray t = read_npy(dir / "q" / "tensor_scale.npy");
  EXPECT_EQ(t.type, NpyType::kFloat32);
  EXPECT_EQ(t.shape, (std::vector<int64_t>{1}));
  EXPECT_EQ(t.as<float>()[0], 1.0f);
  EXPECT_EQ(read_npy(dir / "q" / "dequantized.npy").as<double>()[16], 2688.0);
}

TEST(CliQuantize, StochasticRoundingIsReproducibleForASeed) {
  const auto dir = temp_dir("sr");
  std::vector<double> x(256);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.1 * static_cast<double>(i) - 7.0;
  write_npy(dir / "x.npy", make_npy<double>({256}, x));
  const std::string base = "quantize --scheme mxfp6_e3m2 --rounding sr --sr-bits 8 --in " +
                           (dir / "x.npy").string() + " --out ";
  ASSERT_EQ(run_simprec(base + (dir / "a").string() + " --seed 4").exit_code, 0);
  ASSERT_EQ(run_simprec(base + (dir / "b").string() + " --seed 4").exit_code, 0);
  ASSERT_EQ(run_simprec(base + (dir / "c").string() + " --seed 5").exit_code, 0);
  const auto a = read_npy(dir / "a" / "elements.npy").data;
  EXPECT_EQ(a, read_npy(dir / "b" / "elements.npy").data);
  EXPECT_NE(a, read_npy(dir / "c" / "elements.npy").data);  // 256 values: chance 2^-200 or so
}

TEST(CliQuantize, BadInputIsRefusedClearly) {
  const auto dir = temp_dir("bad");
  const std::vector<double> d(4, 1.0);
  write_npy(dir / "d.npy", make_npy<double>({4}, d));
  const std::vector<uint8_t> u(4, 1);
  write_npy(dir / "u.npy", make_npy<uint8_t>({4}, u));
  const std::string out = " --out " + (dir / "q").string();

  auto r = run_simprec("quantize --scheme mxfp5 --in " + (dir / "d.npy").string() + out);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("--scheme 'mxfp5': expected one of mxfp8_e4m3 mxfp8_e5m2 mxfp6_e2m3 "
                          "mxfp6_e3m2 mxfp4 nvfp4"),
            std::string::npos)
      << r.output;

  r = run_simprec("quantize --scheme nvfp4 --in " + (dir / "d.npy").string() + out);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("dtype float64 is not accepted (expected float32"), std::string::npos)
      << r.output;

  r = run_simprec("quantize --scheme mxfp4 --in " + (dir / "u.npy").string() + out);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("dtype uint8 is not accepted (expected float32 or float64)"),
            std::string::npos)
      << r.output;

  r = run_simprec("quantize --scheme mxfp4 --rounding nearest --in " + (dir / "d.npy").string() +
                  out);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("nearest"), std::string::npos) << r.output;

  r = run_simprec("quantize --scheme mxfp4 --block-size -3 --in " + (dir / "d.npy").string() + out);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("--block-size -3: expected 1..2^30"), std::string::npos) << r.output;

  r = run_simprec("quantize --scheme mxfp4 --block-size 0 --in " + (dir / "d.npy").string() + out);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("--block-size 0: expected 1..2^30"), std::string::npos) << r.output;

  r = run_simprec("quantize --scheme mxfp4 --in " + (dir / "missing.npy").string() + out);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("missing.npy"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir / "q"));
}

}  // namespace
