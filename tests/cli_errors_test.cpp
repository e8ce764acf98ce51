// What the command line does with bad input (issue 18): .npy headers that lie about their size
// are refused before anything is allocated (items 2 and 5), shapes with negative or junk entries
// are refused (item 11), FIFOs and directories are "not a regular file" (item 12), parse errors
// exit 2, no raw library message reaches the user, `mma --out DIR` leaves nothing behind and
// `round` quotes a bad line in part (item 12).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstring>
#include <filesystem>
#include <fstream>
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

// Messages of the C++ library and of nlohmann::json that must never reach the user.
void expect_no_raw_library_message(const std::string& output) {
  for (const char* raw : {"stoll", "stoi", "stod", "_M_default_append", "json.exception",
                          "basic_string", "bad_alloc", "vector::"}) {
    EXPECT_FALSE(contains(output, raw)) << raw << " in: " << output;
  }
}

std::string bf16_ones(size_t count) {
  std::string data;
  for (size_t i = 0; i < count; ++i) data += std::string("\x80\x3f", 2);
  return data;
}

TEST(CliErrors, MmaRefusesAHeaderWhoseSizeWraps) {
  const auto dir = fresh_dir("cli_errors_mma_wrap");
  // Item 2: a 640-byte file whose header says (2^62+1, 16, 16): the element count wrapped to 256,
  // exactly what the 512 data bytes hold, and the heap was corrupted.
  write_raw_npy(dir / "a.npy", "<u2", "(4611686018427387905, 16, 16)", bf16_ones(256));
  ASSERT_EQ(fs::file_size(dir / "a.npy"), 640u);
  write_raw_npy(dir / "b.npy", "<u2", "(16, 16)", bf16_ones(256));
  const auto r =
      run_simprec("mma --model tc:sm90-mma-bf16 --a " + (dir / "a.npy").string() + " --b " +
                  (dir / "b.npy").string() + " --out " + (dir / "d.npy").string());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "a.npy: not a usable .npy file")) << r.output;
  EXPECT_TRUE(contains(r.output, "4611686018427387905 x 16 x 16 x 2 does not fit")) << r.output;
  EXPECT_FALSE(fs::exists(dir / "d.npy"));
}

TEST(CliErrors, NpyDataSizeIsCheckedAgainstTheFileBeforeAllocating) {
  const auto dir = fresh_dir("cli_errors_npy_short");
  // Item 5: a 192-byte file claiming 2 GB made the reader allocate and zero 2.1 GB first. The
  // message comes from comparing the claimed size with the file's, which happens before any
  // allocation (lib/npy/npy.cpp).
  write_raw_npy(dir / "q.npy", "<f4", "(536870912,)", std::string(64, '\0'));
  ASSERT_EQ(fs::file_size(dir / "q.npy"), 192u);
  const auto r =
      run_simprec("attention --q " + (dir / "q.npy").string() + " --k " + (dir / "q.npy").string() +
                  " --v " + (dir / "q.npy").string() + " --out " + (dir / "x").string());
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "needs 2147483648 bytes of data, the file holds 64")) << r.output;
}

TEST(CliErrors, NpyShapesWithNegativeOrJunkEntriesAreRefused) {
  const auto dir = fresh_dir("cli_errors_npy_shape");
  // Item 11: "-8" was read as 8 and junk after a number was ignored.
  const std::string data = simprec::testing::float32_data(1.0f, 64);
  for (const std::string shape :
       {"(-8, 8)", "(8x, 8)", "(8, 8.0)", "(8,, 8)", "(99999999999999999999, 8)", "(8 8)"}) {
    write_raw_npy(dir / "q.npy", "<f4", shape, data);
    const auto r = run_simprec("attention --q " + (dir / "q.npy").string() + " --k " +
                               (dir / "q.npy").string() + " --v " + (dir / "q.npy").string() +
                               " --out " + (dir / "x").string());
    EXPECT_NE(r.exit_code, 0) << shape << ": " << r.output;
    EXPECT_TRUE(contains(r.output, "q.npy: not a usable .npy file")) << shape << ": " << r.output;
    expect_no_raw_library_message(r.output);
  }
  // The same data with an honest shape is read.
  write_raw_npy(dir / "q.npy", "<f4", "(1, 8, 8,)", data);
  const auto r =
      run_simprec("attention --q " + (dir / "q.npy").string() + " --k " + (dir / "q.npy").string() +
                  " --v " + (dir / "q.npy").string() + " --out " + (dir / "x").string());
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST(CliErrors, FifoAndDirectoryInputsAreNotRegularFiles) {
  const auto dir = fresh_dir("cli_errors_fifo");
  // Item 12: a FIFO hung (the open waits for a writer); a directory said "bad magic". `timeout`
  // turns a hang into exit 124 instead of a stuck test.
  const fs::path fifo = dir / "q.npy";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto r = simprec::testing::run_command(
      "timeout 20 " + std::string(SIMPREC_CLI) + " attention --q " + fifo.string() + " --k " +
      fifo.string() + " --v " + fifo.string() + " --out " + (dir / "x").string() + " 2>&1");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "q.npy: not a regular file (a FIFO)")) << r.output;
  r = run_simprec("attention --q " + dir.string() + " --k " + dir.string() + " --v " +
                  dir.string() + " --out " + (dir / "x").string());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "not a regular file (a directory)")) << r.output;
  r = simprec::testing::run_command("timeout 20 " + std::string(SIMPREC_CLI) +
                                    " mma --model tc:sm90-mma-bf16 --a " + fifo.string() + " --b " +
                                    fifo.string() + " --out " + (dir / "d.npy").string() + " 2>&1");
  EXPECT_TRUE(contains(r.output, "not a regular file (a FIFO)")) << r.output;
  // The experiment file itself.
  r = simprec::testing::run_command("timeout 20 " + std::string(SIMPREC_CLI) + " run " +
                                    fifo.string() + " --check 2>&1");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "not a regular file (a FIFO)")) << r.output;
  r = run_simprec("run " + dir.string() + " --check");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "not a regular file (a directory)")) << r.output;
}

TEST(CliErrors, ParseErrorsExitWith2) {
  // Item 12: CLI11's own codes (104, 106, 114, ...) leaked out as exit statuses.
  for (const char* arguments :
       {"", "nosuch", "attention --generate normal", "round --format bf16 --rounding",
        "round --format bf16 --rounding rne --nosuch", "attention --out x --threads many", "run"}) {
    const auto r = run_simprec(arguments);
    EXPECT_EQ(r.exit_code, 2) << arguments << ": " << r.output;
  }
  EXPECT_EQ(run_simprec("--help").exit_code, 0);
  EXPECT_EQ(run_simprec("--version").exit_code, 0);
}

TEST(CliErrors, MmaOutIntoADirectoryLeavesNothingBehind) {
  const auto dir = fresh_dir("cli_errors_mma_out");
  write_raw_npy(dir / "a.npy", "<u2", "(16, 16)", bf16_ones(256));
  fs::create_directories(dir / "d");
  // Item 12: the temporary DIR.tmp.PID stayed when the rename onto a directory failed.
  const auto r = run_simprec("mma --model tc:sm90-mma-bf16 --a " + (dir / "a.npy").string() +
                             " --b " + (dir / "a.npy").string() + " --out " + (dir / "d").string());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "it is a directory")) << r.output;
  for (const auto& entry : fs::directory_iterator(dir))
    EXPECT_EQ(entry.path().filename().string().find("d.tmp"), std::string::npos) << entry.path();
}

TEST(CliErrors, RoundQuotesABadLineInPart) {
  // Item 12: a 10 MB bad line was echoed whole, and binary bytes raw.
  const std::string huge(10'000'000, '9');
  auto r = run_simprec("round --format bf16 --rounding rne", "1\n" + huge + "x\n");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_LT(r.output.size(), 400u);
  EXPECT_TRUE(contains(
      r.output, "stdin line 2: '" + std::string(60, '9') + "... (10000001 bytes)' is not a number"))
      << r.output.substr(0, 400);
  r = run_simprec("round --format bf16 --rounding rne", std::string("\x01\xfe\x80z\n", 5));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.output, "'\\x01\\xfe\\x80z' is not a number")) << r.output;
}

TEST(CliErrors, RoundSeedsAreCheckedToo) {
  // Item 11 for `round`: the same seed rule as every other command.
  for (const char* seed : {"18446744073709551616", "''", "-1", "1.5"}) {
    const auto r =
        run_simprec("round --format bf16 --rounding sr --seed " + std::string(seed), "0.1\n");
    EXPECT_EQ(r.exit_code, 2) << seed << ": " << r.output;
    EXPECT_TRUE(contains(r.output, "is not a seed")) << r.output;
  }
}

}  // namespace

TEST(CliErrors, AnInputTheInputSiteOverflowsIsBlamedOnTheRounding) {
  // 1e5 is a finite float32 input; fp16's largest value is 65504. The fp64 reference refuses the
  // infinity, naming the input site's rounding that overflowed, not the input.
  const auto dir = fresh_dir("cli_errors_input_overflow");
  std::string data = simprec::testing::float32_data(1.0f, 16 * 16);
  const float big = 1e5f;
  std::memcpy(data.data() + 6 * sizeof big, &big, sizeof big);
  write_raw_npy(dir / "q.npy", "<f4", "(1, 1, 16, 16)", data);
  write_raw_npy(dir / "k.npy", "<f4", "(1, 1, 16, 16)",
                simprec::testing::float32_data(1.0f, 16 * 16));
  const auto r = run_simprec("attention --q " + (dir / "q.npy").string() + " --k " +
                             (dir / "k.npy").string() + " --v " + (dir / "k.npy").string() +
                             " --numerics fa2 --format fp16 --out " + (dir / "x").string());
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output,
                       "the input site rounds Q to fp16 (rne), whose largest finite "
                       "value is 65504: Q at flat index 6 is 1e+05, which overflows to inf"))
      << r.output;
}

TEST(CliErrors, EveryCommandQuotesAHugeArgumentInPart) {
  // Each of these echoed a 100 KB argument whole; a message quotes an excerpt, and whatever
  // quotes a text whole is cut by the last guard (bounded_message), so no error exceeds a few KB.
  const std::string huge(100000, 'x');
  const auto dir = fresh_dir("cli_errors_huge_argument");
  write_raw_npy(dir / "a.npy", "<f4", "(16, 16)", simprec::testing::float32_data(1.0f, 16 * 16));
  const std::string a = (dir / "a.npy").string();
  for (const std::string& args :
       {"attention --generate " + huge + " --shape 1,1,8,8 --out " + (dir / "o").string(),
        "attention --numerics fa2," + huge + " --generate normal --shape 1,1,8,8 --out " +
            (dir / "p").string(),
        "quantize --scheme " + huge + " --in " + a + " --out " + (dir / "q").string(),
        "mma --model " + huge + " --a " + a + " --b " + a + " --out " + (dir / "d.npy").string(),
        "numerics " + huge}) {
    const auto r = run_simprec(args);
    EXPECT_NE(r.exit_code, 0) << args.substr(0, 40);
    EXPECT_LT(r.output.size(), 5000u) << args.substr(0, 40) << ": " << r.output.substr(0, 300);
    EXPECT_TRUE(contains(r.output, "bytes"))
        << args.substr(0, 40) << ": " << r.output.substr(0, 300);
  }
}
