// Files that the tool reads and writes, under hostile input (issue 32): .npy headers that
// overflowed the parser's stack, FIFOs that hung the reader, links in a results folder that
// writes followed, and an empty --out that wrote into the current folder. Every command that
// could hang runs under `timeout`, so that a regression fails instead of stalling the suite.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/cli_support.hpp"
#include "tests/npy_file_support.hpp"

namespace {

namespace fs = std::filesystem;
using simprec::testing::contains;
using simprec::testing::fresh_dir;
using simprec::testing::text_of;
using simprec::testing::write_file;

// A float32 .npy of shape (1, 1, 16, 8) whose header holds 40 KB of spaces (version 2.0).
void write_long_header_npy(const fs::path& file) {
  simprec::testing::write_npy_v2(file,
                                 "{'descr':" + std::string(40000, ' ') +
                                     "'<f4', 'fortran_order': False, 'shape': (1, 1, 16, 8), }",
                                 simprec::testing::float32_data(0.25f, 128));
}

// `simprec ARGS` in `dir`, killed after 20 s.
simprec::testing::CommandResult simprec_in(const fs::path& dir, const std::string& args) {
  return simprec::testing::run_simprec_in(dir, args, 20);
}

const char* kSmallExperiment =
    "[inputs.g]\ngenerator = \"normal\"\nshape = [1, 1, 8, 8]\nbackward = false\n"
    "[implementations.x]\npreset = \"fa2\"\ntile = \"8x8\"\n";

TEST(FileHardening, LongNpyHeadersCrashNoCommand) {
  const auto dir = fresh_dir("file_hardening_long_header");
  // Before: signal 11 in each of these (the header parser recursed once per character).
  write_long_header_npy(dir / "q.npy");
  write_long_header_npy(dir / "k.npy");
  write_long_header_npy(dir / "v.npy");
  auto r = simprec_in(dir, "attention --q q.npy --k k.npy --v v.npy --out o");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  r = simprec_in(dir, "quantize --scheme mxfp8_e4m3 --in q.npy --out qz");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  write_file(dir / "e.toml",
             "[inputs.f]\nq = \"q.npy\"\nk = \"k.npy\"\nv = \"v.npy\"\n"
             "[implementations.x]\npreset = \"fa2\"\n");
  r = simprec_in(dir, "run e.toml --check");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "valid, 1 cases")) << r.output;
  // A header nested 100000 deep is refused with a bounded quote, by mma as by the others.
  std::string deep = std::string(100000, '(') + "16, 16" + std::string(100000, ')');
  simprec::testing::write_raw_npy(dir / "a.npy", "<f4", deep, "");
  r = simprec_in(dir, "mma --model tc:sm90-mma-bf16 --a a.npy --b a.npy --out d.npy");
  EXPECT_EQ(r.exit_code, 1) << r.output.substr(0, 500);
  EXPECT_TRUE(contains(r.output, "a.npy: not a usable .npy file: header at byte")) << r.output;
  EXPECT_LT(r.output.size(), 400u) << r.output.substr(0, 500);
}

TEST(FileHardening, FifosAreRefusedNeverWaitedOn) {
  const auto dir = fresh_dir("file_hardening_fifo");
  ASSERT_EQ(::mkfifo((dir / "n.toml").c_str(), 0600), 0);
  // Before: each of these waited for a writer forever.
  auto r = simprec_in(dir, "attention --numerics n.toml --generate normal --shape 1,1,8,8 --out o");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "n.toml: not a regular file (a FIFO); expected a TOML file"))
      << r.output;
  r = simprec_in(dir, "numerics n.toml");
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "not a regular file (a FIFO)")) << r.output;
  write_file(dir / "e.toml",
             "[inputs.g]\ngenerator = \"normal\"\nshape = [1, 1, 8, 8]\n"
             "[implementations.x]\nnumerics = \"n.toml\"\n");
  r = simprec_in(dir, "run e.toml --check");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "not a regular file (a FIFO)")) << r.output;
  // A results folder whose experiment.json is a FIFO: report and run refuse it.
  write_file(dir / "small.toml", kSmallExperiment);
  ASSERT_EQ(simprec_in(dir, "run small.toml --out out --quiet").exit_code, 0);
  fs::remove(dir / "out" / "experiment.json");
  ASSERT_EQ(::mkfifo((dir / "out" / "experiment.json").c_str(), 0600), 0);
  for (const std::string& command : {"report out", "run small.toml --out out --quiet"}) {
    r = simprec_in(dir, command);
    EXPECT_EQ(r.exit_code, 1) << command << ": " << r.output;
    EXPECT_TRUE(contains(r.output, "experiment.json: not a regular file (a FIFO)"))
        << command << ": " << r.output;
  }
}

TEST(FileHardening, OversizedTomlIsRefusedBeforeParsing) {
  const auto dir = fresh_dir("file_hardening_big_toml");
  std::ofstream(dir / "big.toml") << std::string((16u << 20) + 1, '#');
  const auto r = simprec_in(dir, "run big.toml --check");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output,
                       "big.toml: 16777217 bytes, more than this kind of file may hold "
                       "(16777216)"))
      << r.output;
}

TEST(FileHardening, WritesIntoAResultsFolderNeverFollowLinks) {
  const auto dir = fresh_dir("file_hardening_links");
  const fs::path target = dir / "target.txt";
  const auto reset_target = [&] { std::ofstream(target, std::ios::trunc) << "precious\n"; };
  // attention: stats.json and o.npy planted as links are replaced, the target untouched.
  fs::create_directories(dir / "att");
  fs::create_symlink(target, dir / "att" / "stats.json");
  fs::create_symlink(target, dir / "att" / "o.npy");
  reset_target();
  auto r = simprec_in(dir, "attention --generate normal --shape 1,1,8,8 --out att");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(text_of(target), "precious\n");
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(dir / "att" / "stats.json")));
  // run: a linked lock file or results file is refused, naming it.
  write_file(dir / "small.toml", kSmallExperiment);
  fs::create_directories(dir / "lock");
  fs::create_symlink(target, dir / "lock" / "run.lock");
  r = simprec_in(dir, "run small.toml --out lock --quiet --force");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "lock/run.lock: cannot open: it is a symbolic link")) << r.output;
  EXPECT_EQ(text_of(target), "precious\n");
  ASSERT_EQ(simprec_in(dir, "run small.toml --out res --quiet").exit_code, 0);
  fs::rename(dir / "res" / "results.jsonl", dir / "saved.jsonl");
  fs::create_symlink(target, dir / "res" / "results.jsonl");
  r = simprec_in(dir, "run small.toml --out res --quiet");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "res/results.jsonl: is a symbolic link")) << r.output;
  EXPECT_EQ(text_of(target), "precious\n");
  // report: report.md and summary.csv planted as links are replaced.
  fs::remove(dir / "res" / "results.jsonl");
  fs::rename(dir / "saved.jsonl", dir / "res" / "results.jsonl");
  for (const char* name : {"report.md", "summary.csv"}) {
    fs::remove(dir / "res" / name);
    fs::create_symlink(target, dir / "res" / name);
  }
  r = simprec_in(dir, "report res");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(text_of(target), "precious\n");
  EXPECT_TRUE(contains(text_of(dir / "res" / "report.md"), "1 cases, 0 failed"));
}

TEST(FileHardening, EmptyOutputNamesAreRefused) {
  const auto dir = fresh_dir("file_hardening_empty_out");
  simprec::testing::write_raw_npy(dir / "a.npy", "<f4", "(16, 16)",
                                  simprec::testing::float32_data(1.0f, 256));
  write_file(dir / "small.toml", kSmallExperiment);
  for (const std::string& command :
       {std::string("attention --generate normal --shape 1,1,8,8 --out ''"),
        std::string("quantize --scheme mxfp8_e4m3 --in a.npy --out ''"),
        std::string("mma --model tc:sm90-mma-bf16 --a a.npy --b a.npy --out ''"),
        std::string("run small.toml --out ''"), std::string("run small.toml --out ' '")}) {
    const auto r = simprec_in(dir, command);
    EXPECT_EQ(r.exit_code, 2) << command << ": " << r.output;
    EXPECT_TRUE(contains(r.output, "--out: '")) << command << ": " << r.output;
    EXPECT_TRUE(contains(r.output, "is empty (expected a file or folder name)"))
        << command << ": " << r.output;
  }
  // Nothing was written beside the inputs.
  size_t files = 0;
  for (const auto& entry : fs::directory_iterator(dir)) files += entry.exists();
  EXPECT_EQ(files, 2u);
}

}  // namespace
