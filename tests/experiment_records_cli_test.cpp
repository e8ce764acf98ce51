// Experiments that must never mix up or lose records (issue 32): inputs changed between a run
// and its resume, a numerics file named beside the experiment, a second --force, a bit flipped
// inside a record, and a record of the wrong type.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/cli_support.hpp"
#include "tests/npy_file_support.hpp"

namespace {

namespace fs = std::filesystem;
using simprec::testing::contains;
using simprec::testing::fresh_dir;
using simprec::testing::text_of;
using simprec::testing::write_file;

simprec::testing::CommandResult simprec_in(const fs::path& dir, const std::string& args) {
  return simprec::testing::run_simprec_in(dir, args);
}

std::vector<std::string> lines_of(const fs::path& file) {
  std::ifstream in(file);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

void write_lines(const fs::path& file, const std::vector<std::string>& lines) {
  std::ofstream out(file, std::ios::trunc);
  for (const auto& line : lines) out << line << "\n";
}

// Two quick cases (seeds 1 and 2).
const char* kTwoCases =
    "[inputs.g]\ngenerator = \"normal\"\nshape = [1, 1, 8, 8]\nbackward = false\n"
    "[implementations.x]\npreset = \"fa2\"\ntile = \"8x8\"\n[sweep]\nseed = [1, 2]\n";

TEST(ExperimentRecords, ChangedInputsAreRefusedNotMixedIn) {
  const auto dir = fresh_dir("experiment_records_inputs");
  fs::create_directories(dir / "in");
  for (const char* name : {"q", "k", "v"}) {
    simprec::testing::write_raw_npy(dir / "in" / (std::string(name) + ".npy"), "<f4",
                                    "(1, 1, 8, 8)", simprec::testing::float32_data(0.5f, 64));
  }
  write_file(
      dir / "e.toml",
      "[inputs.f]\nq = \"in/q.npy\"\nk = \"in/k.npy\"\nv = \"in/v.npy\"\n"
      "[implementations.x]\npreset = \"fa2\"\ntile = \"8x8\"\n[analysis]\nbackward = false\n");
  ASSERT_EQ(simprec_in(dir, "run e.toml --out out --quiet").exit_code, 0);
  const std::string first = lines_of(dir / "out" / "results.jsonl").at(0);
  // Before: the resume found the case done and kept the record of the old q.npy.
  simprec::testing::write_raw_npy(dir / "in" / "q.npy", "<f4", "(1, 1, 8, 8)",
                                  simprec::testing::float32_data(-2.0f, 64));
  auto r = simprec_in(dir, "run e.toml --out out --quiet");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "in/q.npy changed since they were computed (crc64:")) << r.output;
  EXPECT_EQ(lines_of(dir / "out" / "results.jsonl"), std::vector<std::string>{first});
  r = simprec_in(dir, "run e.toml --out out --quiet --force");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(lines_of(dir / "out" / "results.jsonl.previous"), std::vector<std::string>{first});
  EXPECT_NE(lines_of(dir / "out" / "results.jsonl").at(0), first);
}

TEST(ExperimentRecords, NumericsFilesAreReadBesideTheExperiment) {
  const auto dir = fresh_dir("experiment_records_numerics");
  fs::create_directories(dir / "sub");
  write_file(dir / "sub" / "n.toml", "preset = \"fa2\"\n");
  write_file(dir / "sub" / "m.toml", "preset = \"torch-math\"\n");
  write_file(dir / "sub" / "e.toml",
             "[inputs.g]\ngenerator = \"normal\"\nshape = [1, 1, 8, 8]\nbackward = false\n"
             "[implementations.x]\nnumerics = \"n.toml\"\ntile = \"8x8\"\n"
             "[sweep]\nnumerics = [\"n.toml\", \"m.toml\", \"fp64\"]\n");
  // Before: "n.toml: File could not be opened for reading" from any other folder.
  const auto r = simprec_in(dir, "run sub/e.toml --check");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "valid, 3 cases")) << r.output;
}

TEST(ExperimentRecords, NoForceLosesTheRecordsOfAnEarlierOne) {
  const auto dir = fresh_dir("experiment_records_force");
  write_file(dir / "a.toml", kTwoCases);
  write_file(dir / "b.toml",
             "[inputs.g]\ngenerator = \"normal\"\nshape = [1, 1, 8, 8]\nbackward = false\n"
             "[implementations.x]\npreset = \"fp64\"\ntile = \"8x8\"\n");
  ASSERT_EQ(simprec_in(dir, "run a.toml --out out --quiet").exit_code, 0);
  const auto a_lines = lines_of(dir / "out" / "results.jsonl");
  ASSERT_EQ(simprec_in(dir, "run b.toml --out out --quiet --force").exit_code, 0);
  const auto b_lines = lines_of(dir / "out" / "results.jsonl");
  // Before: the second --force moved b's results over results.jsonl.previous, losing a's.
  const auto r = simprec_in(dir, "run a.toml --out out --force");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "the earlier results are kept as")) << r.output;
  EXPECT_EQ(lines_of(dir / "out" / "results.jsonl.previous"), a_lines);
  EXPECT_EQ(lines_of(dir / "out" / "results.jsonl.previous.2"), b_lines);
  EXPECT_TRUE(contains(text_of(dir / "out" / "experiment.json.previous.2"), "b.toml"));
}

TEST(ExperimentRecords, DamagedRecordsAreReportedSetAsideAndRunAgain) {
  const auto dir = fresh_dir("experiment_records_damaged");
  write_file(dir / "e.toml", kTwoCases);
  ASSERT_EQ(simprec_in(dir, "run e.toml --out out --quiet -j 1").exit_code, 0);
  auto lines = lines_of(dir / "out" / "results.jsonl");
  ASSERT_EQ(lines.size(), 2u);
  const std::string good = lines[0];
  // One bit of one digit of a metric: still JSON, still the layout, a different number.
  const size_t value = lines[1].find("\"rms\":");
  ASSERT_NE(value, std::string::npos) << lines[1];
  const size_t at = lines[1].find_first_of(",}", value) - 1;  // the number's last digit
  ASSERT_TRUE(std::isdigit(static_cast<unsigned char>(lines[1][at]))) << lines[1].substr(at, 20);
  const std::string flipped =
      lines[1].substr(0, at) + static_cast<char>(lines[1][at] ^ 1) + lines[1].substr(at + 1);
  ASSERT_FALSE(nlohmann::json::parse(flipped).is_discarded());
  write_lines(dir / "out" / "results.jsonl", {good, flipped});
  // Before: report and run used the flipped number without a word.
  auto r = simprec_in(dir, "report out");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "line 2 (damaged: its checksum")) << r.output;
  EXPECT_TRUE(contains(text_of(dir / "out" / "report.md"), "1 cases, 0 failed"));
  r = simprec_in(dir, "run e.toml --out out -j 1");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "line 2 (damaged: its checksum")) << r.output;
  EXPECT_TRUE(contains(r.output, "2 cases (1 already done, 1 run, 0 failed)")) << r.output;
  EXPECT_EQ(lines_of(dir / "out" / "results.jsonl.damaged"), std::vector<std::string>{flipped});
  lines = lines_of(dir / "out" / "results.jsonl");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], good);
  // Reported once: the next report finds nothing to skip.
  r = simprec_in(dir, "report out");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(contains(r.output, "skipped")) << r.output;
}

TEST(ExperimentRecords, IllTypedRecordsAreSetAsideLikeDamagedOnes) {
  const auto dir = fresh_dir("experiment_records_types");
  write_file(dir / "e.toml", kTwoCases);
  ASSERT_EQ(simprec_in(dir, "run e.toml --out out --quiet -j 1").exit_code, 0);
  auto lines = lines_of(dir / "out" / "results.jsonl");
  // A record that a hand or another tool rewrote without a checksum, with a wrong type.
  auto record = nlohmann::json::parse(lines[1]);
  record.erase("crc32");
  record["params"]["implementation"]["causal"] = "yes";
  lines[1] = record.dump();
  write_lines(dir / "out" / "results.jsonl", lines);
  // Before: "[json.exception.type_error.302] type must be boolean" from report and every run.
  auto r = simprec_in(dir, "report out");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output,
                       "line 2 (params.implementation.causal is a string, expected true or false)"))
      << r.output;
  EXPECT_FALSE(contains(r.output, "json.exception")) << r.output;
  r = simprec_in(dir, "run e.toml --out out -j 1");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "2 cases (1 already done, 1 run, 0 failed)")) << r.output;
}

TEST(ExperimentRecords, RecordsWithoutChecksumsAreStillRead) {
  const auto dir = fresh_dir("experiment_records_old_format");
  write_file(dir / "e.toml", kTwoCases);
  ASSERT_EQ(simprec_in(dir, "run e.toml --out out --quiet -j 1").exit_code, 0);
  // Every line as an earlier simprec wrote it: the record alone.
  auto lines = lines_of(dir / "out" / "results.jsonl");
  for (auto& line : lines) {
    const std::string suffix_start = ",\"crc32\":\"";
    const size_t at = line.rfind(suffix_start);
    ASSERT_NE(at, std::string::npos) << line;
    line = line.substr(0, at) + "}";
  }
  write_lines(dir / "out" / "results.jsonl", lines);
  const auto r = simprec_in(dir, "run e.toml --out out -j 1");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "2 cases (2 already done, 0 run, 0 failed)")) << r.output;
  EXPECT_FALSE(contains(r.output, "skipped")) << r.output;
}

}  // namespace
