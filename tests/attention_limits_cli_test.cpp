// `simprec attention` refuses what it cannot compute honestly (issue 18): shapes whose sizes
// overflow (item 1), file shapes that disagree with the data (item 3), work beyond the memory
// bound and tiles out of range (item 5), non-finite --scale, with NaN outputs counted and never
// shown as zero error (item 6), and seeds, generator parameters, mitigations and input formats
// out of their domains (item 11). Each case reproduces the scenario.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli_support.hpp"
#include "tests/npy_file_support.hpp"

namespace {

namespace fs = std::filesystem;
using simprec::testing::contains;
using simprec::testing::fresh_dir;
using simprec::testing::run_simprec;
using simprec::testing::write_file;
using simprec::testing::write_raw_npy;

const std::string kGenerate = "attention --generate normal --seed 1 ";

TEST(AttentionLimits, ShapeWhoseSizeOverflowsIsRefused) {
  const auto dir = fresh_dir("attention_limits_overflow");
  // Item 1: B*H*N*d wrapped and the arrays were written past their end. 2^32 is above the
  // per-dimension limit; 2^31 x 2^31 x 4 x 1 is within it and overflows in the product.
  for (const std::string shape : {"4294967296,4294967296,1,1", "2147483648,2147483648,4,1"}) {
    const auto r = run_simprec(kGenerate + "--shape " + shape + " --out " + (dir / "x").string());
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_TRUE(contains(r.output, "simprec: error:")) << r.output;
    EXPECT_FALSE(fs::exists(dir / "x" / "o.npy"));
  }
  const auto r =
      run_simprec(kGenerate + "--shape 2147483648,2147483648,4,1 --out " + (dir / "x").string());
  EXPECT_TRUE(contains(r.output, "2147483648 x 2147483648 x 4 x 1 x 8 does not fit")) << r.output;
}

TEST(AttentionLimits, FileShapesMustAgreeWithTheirData) {
  const auto dir = fresh_dir("attention_limits_file_shape");
  // Item 3: a header claiming (3, 6148914691236517206, 3, 1) over 6 floats: 3 x 6148914691236517206
  // x 3 x 1 x 4 bytes overflows (it wrapped to 24 bytes = 6 floats before).
  const std::string data = simprec::testing::float32_data(0.5f, 6);
  for (const char* name : {"q.npy", "k.npy", "v.npy"})
    write_raw_npy(dir / name, "<f4", "(3, 6148914691236517206, 3, 1)", data);
  const auto r =
      run_simprec("attention --q " + (dir / "q.npy").string() + " --k " + (dir / "k.npy").string() +
                  " --v " + (dir / "v.npy").string() + " --out " + (dir / "x").string());
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "q.npy: not a usable .npy file")) << r.output;
  EXPECT_FALSE(fs::exists(dir / "x" / "o.npy"));
}

TEST(AttentionLimits, WorkBeyondTheMemoryBoundIsRefusedWithTheEstimate) {
  const auto dir = fresh_dir("attention_limits_memory");
  // Item 5: N = 10^6 allocated until the machine ran out. The standard-attention reference
  // alone needs N^2 doubles = 8e12 bytes, more than any machine this runs on.
  auto r = run_simprec(kGenerate + "--shape 1,1,1000000,64 --out " + (dir / "x").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "needs an estimated")) << r.output;
  EXPECT_TRUE(contains(r.output, "TiB of memory, more than")) << r.output;
  // --max-memory lowers the bound; the same small run passes with room to spare.
  r = run_simprec(kGenerate + "--shape 2,1,64,16 --max-memory 16M --out " + (dir / "x").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "(--max-memory 16M)")) << r.output;
  r = run_simprec(kGenerate + "--shape 2,1,64,16 --max-memory 1G --out " + (dir / "x").string());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  r = run_simprec(kGenerate + "--shape 2,1,64,16 --max-memory lots --out " + (dir / "x").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "'lots' is not a memory size")) << r.output;
}

TEST(AttentionLimits, TilesAreIntegersInRangeNeverWrapped) {
  const auto dir = fresh_dir("attention_limits_tile");
  // Item 5: 4294967297x1 ran as 1x1 (cast to int); 99999999999x1 allocated 4.75 GB.
  for (const char* tile : {"4294967297x1", "99999999999x1", "0x64", "64x", "64x64x64", "-1x64"}) {
    const auto r = run_simprec(kGenerate + "--shape 1,1,16,8 --tile " + tile + " --out " +
                               (dir / "x").string());
    EXPECT_EQ(r.exit_code, 2) << tile << ": " << r.output;
    EXPECT_TRUE(contains(r.output, "is not a tile size")) << r.output;
  }
  // A tile larger than N is kept (the same rule as experiment files): one tile covers it all.
  const auto r =
      run_simprec(kGenerate + "--shape 1,1,16,8 --tile 256x256 --out " + (dir / "x").string());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "tile 256x256")) << r.output;
}

TEST(AttentionLimits, ScaleMustBeFiniteAndPositive) {
  const auto dir = fresh_dir("attention_limits_scale");
  for (const char* scale : {"nan", "inf", "-inf", "0", "-1", "1e999", "x"}) {
    const auto r = run_simprec(kGenerate + "--shape 1,1,16,8 --scale " + std::string(scale) +
                               " --out " + (dir / "x").string());
    EXPECT_EQ(r.exit_code, 2) << scale << ": " << r.output;
    EXPECT_TRUE(contains(r.output, "is not a softmax scale")) << r.output;
  }
}

TEST(AttentionLimits, AllNanOutputIsCountedAndNeverZeroError) {
  const auto dir = fresh_dir("attention_limits_nan");
  // Item 6: --scale 1e308 overflows every score, so O is NaN everywhere; it was reported as
  // max|err| 0 with an ulp histogram bin of -2147483648.
  const auto r =
      run_simprec(kGenerate + "--shape 2,1,16,8 --scale 1e308 --out " + (dir / "x").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "max|err| inf")) << r.output;
  EXPECT_TRUE(contains(r.output, "256 of 256 values NaN")) << r.output;
  EXPECT_FALSE(contains(r.output, "max|err| 0 ")) << r.output;
  std::ifstream in(dir / "x" / "stats.json");
  const auto stats = nlohmann::json::parse(in);
  const auto& o = stats["metrics"]["o"];
  EXPECT_EQ(o["nan_count"], 256);
  EXPECT_EQ(o["nonfinite_mismatch"], 256);
  EXPECT_TRUE(o["max_abs"].is_null());  // JSON has no infinity; never 0
  for (const auto& [bin, count] : o["ulp_histogram"].items()) {
    const std::string b = bin.rfind(">=", 0) == 0 || bin.rfind("<=", 0) == 0 ? bin.substr(2) : bin;
    EXPECT_LE(std::abs(std::stoi(b)), 16) << bin;
  }
}

TEST(AttentionLimits, InputsOutsideTheirDomainsAreRefused) {
  const auto dir = fresh_dir("attention_limits_domains");
  const std::string out = " --out " + (dir / "x").string();
  struct Case {
    std::string arguments, expected;
  };
  // Item 11, each as the issue gives it.
  const Case cases[] = {
      {"--shape 1,1,16,8 --seed 18446744073709551616", "is not a seed"},
      {"--shape 1,1,16,8 --seed 99999999999999999999999", "is not a seed"},
      {"--shape 1,1,16,8 --seed -1", "is not a seed"},
      {"--shape 1,1,16,8 --seed ''", "is not a seed"},
      {"--shape 1,1,16,8 --mitigation beta-rowmax:nan", "expected a finite number"},
      {"--shape 1,1,16,8 --mitigation beta-rowmax:2:inf", "expected a finite number"},
      {"--shape 1,1,16,8 --gen-param prototypes=1e12", "an integer in [1, 1048576]"},
      {"--shape 1,1,16,8 --gen-param prototypes=2.5", "an integer in [1, 1048576]"},
      {"--shape 1,1,16,8 --gen-param peak=nan", "with a finite number"},
      {"--shape 1,1,16,8 --gen-param concentration=-1", "finite positive number"},
      {"--shape 1,1,16,8 --gen-param nosuch=1", "unknown generator parameter"},
      {"--shape 1,1,16,8x", "is not an integer"},
      {"--shape 1,1,16,", "expected B,H,N,d"},
  };
  for (const auto& c : cases) {
    const auto r =
        run_simprec("attention --generate repeated-max " +
                    (c.arguments.find("--seed") == std::string::npos ? std::string("--seed 1 ")
                                                                     : std::string()) +
                    c.arguments + out);
    EXPECT_EQ(r.exit_code, 2) << c.arguments << ": " << r.output;
    EXPECT_TRUE(contains(r.output, c.expected)) << c.arguments << ": " << r.output;
  }
  // The largest seed is a seed.
  const auto r = run_simprec(kGenerate.substr(0, kGenerate.find("--seed")) +
                             "--seed 18446744073709551615 --shape 1,1,16,8" + out);
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST(AttentionLimits, InputFormatMustMatchTheFilesDtype) {
  const auto dir = fresh_dir("attention_limits_input_format");
  // Item 11: --input-format fp32 on uint16 files read 16-bit patterns as fp32 ones.
  std::string bits;
  for (int i = 0; i < 16 * 8; ++i) bits += std::string("\x80\x3f", 2);  // bf16 1.0
  for (const char* name : {"q.npy", "k.npy", "v.npy"})
    write_raw_npy(dir / name, "<u2", "(16, 8)", bits);
  const std::string files = " --q " + (dir / "q.npy").string() + " --k " +
                            (dir / "k.npy").string() + " --v " + (dir / "v.npy").string() +
                            " --out " + (dir / "x").string();
  for (const char* format : {"fp32", "e4m3fn"}) {
    const auto r = run_simprec("attention --input-format " + std::string(format) + files);
    EXPECT_EQ(r.exit_code, 2) << format << ": " << r.output;
    EXPECT_TRUE(contains(r.output, "the file holds uint16")) << r.output;
  }
  const auto r = run_simprec("attention --input-format bf16" + files);
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

}  // namespace
