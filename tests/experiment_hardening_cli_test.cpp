// `simprec run` and `simprec report` under hostile input (issue 18): shapes whose sizes overflow
// pass no --check (item 1), sweeps too large to count are refused with their count (item 4), a
// corrupted line of results.jsonl loses no good record (item 8), a second run on the same folder
// is refused (item 9), the experiment's name cannot send the results elsewhere (item 10) and
// generator options must be finite (item 11).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli_support.hpp"
#include "tests/npy_file_support.hpp"

namespace {

namespace fs = std::filesystem;
using simprec::testing::contains;
using simprec::testing::fresh_dir;
using simprec::testing::run_simprec;
using simprec::testing::write_file;

std::vector<std::string> lines_of(const fs::path& file) {
  std::ifstream in(file);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// 3 seeds x 2 mitigation settings = 6 quick cases.
const char* kSixCases = R"([inputs.a]
generator = "repeated-max"
shape = [2, 1, 16, 8]
[implementations.flash]
preset = "paper-a"
tile = "8x8"
[sweep]
seed = [1, 2, 3]
mitigations = [[], ["beta-rowmax"]]
)";

TEST(ExperimentHardening, ShapeWhoseSizeOverflowsFailsTheCheck) {
  const auto dir = fresh_dir("experiment_hardening_shape");
  // Item 1: each dimension within its documented range, the product not: --check passed and
  // every resume crashed.
  const auto file =
      write_file(dir / "e.toml",
                 "[inputs.a]\ngenerator = \"normal\"\nshape = [1048576, 1048576, 1048576, "
                 "1048576]\n[implementations.x]\npreset = \"fa2\"\n");
  const auto r = run_simprec("run " + file.string() + " --check");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "e.toml:3:9")) << r.output;
  EXPECT_TRUE(contains(r.output, "does not fit in 64-bit integers")) << r.output;
  // Within 64 bits but far beyond memory: --check refuses it with the estimate.
  const auto big = write_file(dir / "big.toml",
                              "[inputs.a]\ngenerator = \"normal\"\nshape = [1, 1, 1000000, 64]\n"
                              "[implementations.x]\npreset = \"fa2\"\n");
  const auto m = run_simprec("run " + big.string() + " --check");
  EXPECT_EQ(m.exit_code, 2) << m.output;
  EXPECT_TRUE(contains(m.output, "needs an estimated")) << m.output;
  const auto low = run_simprec("run " + write_file(dir / "six.toml", kSixCases).string() +
                               " --check --max-memory 64K");
  EXPECT_EQ(low.exit_code, 2) << low.output;
  EXPECT_TRUE(contains(low.output, "(--max-memory 64K)")) << low.output;
}

// Sweep axis `key` with values first .. first + count - 1.
std::string axis(const std::string& key, int64_t first, int64_t count) {
  std::ostringstream text;
  text << key << " = [";
  for (int64_t i = 0; i < count; ++i) text << (i ? "," : "") << first + i;
  text << "]\n";
  return text.str();
}

TEST(ExperimentHardening, SweepsTooLargeToCountAreRefusedWithTheirCount) {
  const auto dir = fresh_dir("experiment_hardening_sweep");
  const std::string head =
      "[inputs.a]\ngenerator = \"normal\"\nshape = [1, 1, 16, 8]\n[implementations.x]\n"
      "preset = \"fa2\"\n[sweep]\n";
  // Item 4: 2^16 values on each of four axes is 2^64 cases, which wrapped to "valid, 0 cases";
  // 2^15 draws instead give 2^63, which was cast to a negative count and expanded until
  // bad_alloc.
  const std::string axes =
      axis("seq_len", 1, 65536) + axis("head_dim", 1, 65536) + axis("seed", 0, 65536);
  const auto full = write_file(dir / "full.toml", head + axes + axis("draws", 1, 65536));
  auto r = run_simprec("run " + full.string() + " --check");
  EXPECT_EQ(r.exit_code, 2) << r.output.substr(0, 2000);
  EXPECT_TRUE(contains(r.output,
                       "the sweep gives 2^64 or more (1 x 1 x 65536 x 65536 x 65536 x 65536 does "
                       "not fit in 64 bits) cases"))
      << r.output.substr(0, 2000);
  const auto half = write_file(dir / "half.toml", head + axes + axis("draws", 1, 32768));
  r = run_simprec("run " + half.string() + " --check");
  EXPECT_EQ(r.exit_code, 2) << r.output.substr(0, 2000);
  EXPECT_TRUE(contains(r.output, "the sweep gives 9223372036854775808 cases"))
      << r.output.substr(0, 2000);
  EXPECT_TRUE(contains(r.output, "more than max_cases = 10000")) << r.output.substr(0, 2000);
}

TEST(ExperimentHardening, CorruptedMiddleLineLosesNoGoodRecord) {
  const auto dir = fresh_dir("experiment_hardening_corrupt");
  const auto file = write_file(dir / "e.toml", kSixCases);
  const fs::path out = dir / "out";
  ASSERT_EQ(run_simprec("run " + file.string() + " --quiet -j 1 --out " + out.string()).exit_code,
            0);
  auto lines = lines_of(out / "results.jsonl");
  ASSERT_EQ(lines.size(), 6u);
  // Item 8: a corrupted middle line made `run` truncate the file there, discarding the good
  // records after it, and `report` count only the records before it.
  const std::string lost_id = nlohmann::json::parse(lines[2])["case_id"];
  std::vector<std::string> good = lines;
  good.erase(good.begin() + 2);
  {
    std::ofstream f(out / "results.jsonl", std::ios::trunc);
    for (size_t i = 0; i < lines.size(); ++i)
      f << (i == 2 ? std::string("{\"case_id\": \"x\", garbage") : lines[i]) << "\n";
  }
  auto r = run_simprec("report " + out.string());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "skipped 1 line of")) << r.output;
  EXPECT_TRUE(contains(r.output, "line 3 (not JSON)")) << r.output;
  std::stringstream report;
  report << std::ifstream(out / "report.md").rdbuf();
  EXPECT_TRUE(contains(report.str(), "5 cases, 0 failed")) << report.str();
  EXPECT_TRUE(contains(report.str(), "line 3 (not JSON)")) << report.str();

  r = run_simprec("run " + file.string() + " -j 1 --out " + out.string());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "line 3 (not JSON)")) << r.output;
  EXPECT_TRUE(contains(r.output, "6 cases (5 already done, 1 run, 0 failed)")) << r.output;
  // Every good record is still there, byte for byte, the lost case ran again once, and the bad
  // line was moved aside for inspection (issue 32: reported once, not on every later run).
  const auto after = lines_of(out / "results.jsonl");
  ASSERT_EQ(after.size(), 6u);
  for (const auto& line : good)
    EXPECT_NE(std::find(after.begin(), after.end(), line), after.end()) << line;
  EXPECT_EQ(nlohmann::json::parse(after.back())["case_id"], lost_id);
  EXPECT_EQ(lines_of(out / "results.jsonl.damaged"),
            std::vector<std::string>{"{\"case_id\": \"x\", garbage"});
}

TEST(ExperimentHardening, LinesThatAreNotRecordsAreSkippedByReport) {
  const auto dir = fresh_dir("experiment_hardening_not_records");
  const auto file = write_file(dir / "e.toml", kSixCases);
  const fs::path out = dir / "out";
  ASSERT_EQ(run_simprec("run " + file.string() + " --quiet -j 1 --out " + out.string()).exit_code,
            0);
  // JSON of the wrong layout raised a raw [json.exception.type_error.306] before.
  std::ofstream(out / "results.jsonl", std::ios::app) << "[1, 2]\n42\n{\"case_id\": 7}\n";
  const auto r = run_simprec("report " + out.string());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "skipped 3 lines")) << r.output;
  EXPECT_TRUE(contains(r.output,
                       "line 7 (not a JSON object), line 8 (not a JSON object), line 9 "
                       "(case_id is a number, expected a string)"))
      << r.output;
  EXPECT_FALSE(contains(r.output, "json.exception")) << r.output;
}

TEST(ExperimentHardening, SecondRunOnTheSameFolderIsRefused) {
  const auto dir = fresh_dir("experiment_hardening_lock");
  const auto file = write_file(dir / "e.toml", kSixCases);
  const fs::path out = dir / "out";
  fs::create_directories(out);
  // Item 9: two runs on one folder both ran the same cases. Here this test holds the lock, as a
  // first run would, with what a run writes into the lock file.
  const int fd = ::open((out / "run.lock").c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
  const std::string holder = "pid " + std::to_string(::getpid()) + " on testhost, started now\n";
  ASSERT_EQ(::write(fd, holder.data(), holder.size()), static_cast<ssize_t>(holder.size()));
  auto r = run_simprec("run " + file.string() + " --quiet --out " + out.string());
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "is in use by another simprec run (pid " +
                                     std::to_string(::getpid()) + " on testhost"))
      << r.output;
  EXPECT_FALSE(fs::exists(out / "results.jsonl"));
  ::close(fd);  // the first run ends: the folder is free again
  r = run_simprec("run " + file.string() + " --quiet -j 1 --out " + out.string());
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST(ExperimentHardening, ConcurrentRunsNeverDuplicateCases) {
  const auto dir = fresh_dir("experiment_hardening_concurrent");
  const auto file = write_file(dir / "e.toml", kSixCases);
  const fs::path out = dir / "out";
  // Two runs started together: whichever comes second is refused while the first holds the
  // folder, or finds every case done. Either way each case has one record.
  const std::string run =
      std::string(SIMPREC_CLI) + " run " + file.string() + " --quiet -j 1 --out " + out.string();
  const std::string script = "bash -c '" + run + " & " + run + " & wait' >/dev/null 2>&1";
  std::system(script.c_str());
  const auto lines = lines_of(out / "results.jsonl");
  std::set<std::string> ids;
  for (const auto& line : lines) ids.insert(nlohmann::json::parse(line)["case_id"]);
  EXPECT_EQ(lines.size(), 6u);
  EXPECT_EQ(ids.size(), 6u);
}

TEST(ExperimentHardening, NameCannotLeaveTheWorkingDirectory) {
  const auto dir = fresh_dir("experiment_hardening_name");
  // Item 10: name = "../../etc/evil" became the output folder, outside the working directory.
  for (const std::string name :
       {"../../etc/evil", "a/b", "..", ".hidden", "-rf", "tab\there", ""}) {
    const auto file = write_file(dir / "e.toml", "name = \"" + name + "\"\n" + kSixCases);
    const auto r = run_simprec("run " + file.string() + " --check");
    EXPECT_EQ(r.exit_code, 2) << name << ": " << r.output;
    EXPECT_TRUE(contains(r.output, "e.toml:1:8")) << name << ": " << r.output;
  }
  const auto good =
      write_file(dir / "e.toml", "name = \"flash_bias-v2.1\"\n" + std::string(kSixCases));
  EXPECT_EQ(run_simprec("run " + good.string() + " --check").exit_code, 0);
  // A file stem that cannot be a folder name needs --out; nothing is created.
  const auto stem = write_file(dir / "my exp.toml", kSixCases);
  const auto r = run_simprec("run '" + stem.string() + "' --quiet");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "give --out DIR")) << r.output;
  EXPECT_FALSE(fs::exists("my exp"));
}

TEST(ExperimentHardening, GeneratorOptionsMustBeFinite) {
  const auto dir = fresh_dir("experiment_hardening_options");
  // Item 11: TOML prototypes = nan was accepted (and cast to int: undefined behaviour).
  struct Case {
    std::string option, position, words;
  };
  const Case cases[] = {
      {"prototypes = nan", "e.toml:5:14", "must be a finite number"},
      {"peak = inf", "e.toml:5:8", "must be a finite number"},
      {"prototypes = 1e12", "e.toml:4:1", "an integer in [1, 1048576]"},
      {"prototypes = 0", "e.toml:4:1", "an integer in [1, 1048576]"},
  };
  for (const auto& c : cases) {
    const auto file = write_file(dir / "e.toml",
                                 "[inputs.a]\ngenerator = \"repeated-max\"\nshape = [2, 1, 16, 8]\n"
                                 "[inputs.a.options]\n" +
                                     c.option + "\n[implementations.x]\npreset = \"fa2\"\n");
    const auto r = run_simprec("run " + file.string() + " --check");
    EXPECT_EQ(r.exit_code, 2) << c.option << ": " << r.output;
    EXPECT_TRUE(contains(r.output, c.position)) << c.option << ": " << r.output;
    EXPECT_TRUE(contains(r.output, c.words)) << c.option << ": " << r.output;
  }
}

TEST(ExperimentHardening, NanOutputsAreShownInTheReportNeverAsZero) {
  const auto dir = fresh_dir("experiment_hardening_nan");
  // Item 6: float32 inputs near 3e38 overflow every score, so O is NaN; report.md showed
  // max|err| 0. The fp64 reference of the same inputs is finite.
  const std::string big = simprec::testing::float32_data(3e38f, 2 * 16 * 8);
  for (const char* name : {"q.npy", "k.npy", "v.npy"})
    simprec::testing::write_raw_npy(dir / name, "<f4", "(2, 16, 8)", big);
  const auto file = write_file(dir / "e.toml",
                               "[inputs.huge]\nq = \"q.npy\"\nk = \"k.npy\"\nv = \"v.npy\"\n"
                               "[implementations.flash]\npreset = \"fa2\"\n");
  const fs::path out = dir / "out";
  const auto r = run_simprec("run " + file.string() + " -j 1 --out " + out.string());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "NaN or infinite values where the reference is finite"))
      << r.output;
  std::stringstream report;
  report << std::ifstream(out / "report.md").rdbuf();
  EXPECT_TRUE(contains(report.str(), "| inf (256 NaN, 0 inf) |")) << report.str();
  const auto record = nlohmann::json::parse(lines_of(out / "results.jsonl").at(0));
  EXPECT_EQ(record["results"]["outputs"]["o"]["nonfinite_mismatch"], 256);
  EXPECT_TRUE(record["results"]["outputs"]["o"]["max_abs"].is_null());
  std::stringstream csv;
  csv << std::ifstream(out / "summary.csv").rdbuf();
  EXPECT_TRUE(contains(csv.str(), ",o_nan_count,o_inf_count,o_nonfinite_mismatch,")) << csv.str();
  EXPECT_TRUE(contains(csv.str(), ",256,0,256,")) << csv.str();
}

TEST(ExperimentHardening, TilesFollowTheCommandLinesRule) {
  const auto dir = fresh_dir("experiment_hardening_tile");
  // Item 5: the same tile text is refused, with the same words, by both.
  const auto file = write_file(dir / "e.toml",
                               "[inputs.a]\ngenerator = \"normal\"\nshape = [1, 1, 16, 8]\n"
                               "[implementations.x]\npreset = \"fa2\"\ntile = \"4294967297x1\"\n");
  const auto r = run_simprec("run " + file.string() + " --check");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "e.toml:6:8")) << r.output;
  EXPECT_TRUE(contains(r.output,
                       "tile '4294967297x1' is not a tile size (expected BRxBC with "
                       "integers in [1, 65536]"))
      << r.output;
}

}  // namespace
