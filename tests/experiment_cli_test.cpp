// `simprec run` and `simprec report`: validation with positions, refusing unsafe output folders,
// resuming an interrupted run to the same results as an uninterrupted one, thread-count
// independence.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/cli_support.hpp"

namespace {

namespace fs = std::filesystem;
using simprec::testing::run_simprec;

// The process id keeps test runs side by side (two builds' suites, ctest -j) out of each other's
// folders.
fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) /
                       ("simprec_experiment_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

fs::path write(const fs::path& file, const std::string& text) {
  std::ofstream(file) << text;
  return file;
}

// A small but real experiment: 2 implementations x 2 seeds x 2 mitigation settings = 8 cases.
const char* kSmallExperiment = R"(name = "small"
[inputs.repeated]
generator = "repeated-max"
shape = [4, 1, 32, 16]
seed = 3
[implementations.baseline]
preset = "baseline-lp"
[implementations.flash]
preset = "paper-a"
tile = "16x16"
[sweep]
seed = [3, 4]
mitigations = [[], ["beta-rowmax"]]
[analysis]
baseline = "baseline"
)";

// Records by case id, without the fields that legitimately differ between runs (timing, and the
// line's checksum, which covers it).
std::map<std::string, nlohmann::json> results_by_case(const fs::path& dir) {
  std::map<std::string, nlohmann::json> out;
  std::ifstream in(dir / "results.jsonl");
  std::string line;
  while (std::getline(in, line)) {
    auto record = nlohmann::json::parse(line);
    record.erase("elapsed_s");
    record.erase("crc32");
    out[record["case_id"].get<std::string>()] = record;
  }
  return out;
}

TEST(ExperimentValidation, SyntaxErrorHasLineAndColumn) {
  const auto dir = fresh_dir("syntax");
  const auto file = write(dir / "bad.toml", "name = \"x\"\n[inputs.a]\ngenerator = normal\n");
  const auto r = run_simprec("run " + file.string() + " --check");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("bad.toml:3:"), std::string::npos) << r.output;
}

TEST(ExperimentValidation, UnknownKeySuggestsTheRightOne) {
  const auto dir = fresh_dir("unknown_key");
  const auto file =
      write(dir / "e.toml", std::string(kSmallExperiment) +
                                "[implementations.more]\npreset = \"fa2\"\ntiel = \"16x16\"\n");
  const auto r = run_simprec("run " + file.string() + " --check");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("e.toml:18:1"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("did you mean 'tile'"), std::string::npos) << r.output;
}

TEST(ExperimentValidation, WrongTypeAndBadValuesArePlaced) {
  const auto dir = fresh_dir("values");
  struct Case {
    std::string text, expected_position, expected_words;
  };
  const std::string inputs = "[inputs.a]\ngenerator = \"normal\"\nshape = [2, 1, 16, 8]\n";
  const Case cases[] = {
      {inputs + "[implementations.x]\npreset = \"fa3\"\n", "e.toml:5:10", "unknown preset"},
      {inputs + "[implementations.x]\npreset = \"fa2\"\nformat = \"bf17\"\n", "e.toml:6:10",
       "unknown format"},
      {inputs +
           "[implementations.x]\npreset = \"fa2\"\nset = [\"s=bf16:rne\", \"nosuch=fp32:rne\"]\n",
       "e.toml:6:22", "nosuch"},
      {inputs + "[implementations.x]\npreset = \"fa2\"\ncausal = \"yes\"\n", "e.toml:6:10",
       "true or false"},
      {"[inputs.a]\ngenerator = \"normal\"\nshape = [2, 1, 16]\n[implementations.x]\npreset = "
       "\"fa2\"\n",
       "e.toml:3:9", "shape"},
      {"[inputs.a]\ngenerator = \"gaussian\"\nshape = [2, 1, 16, 8]\n[implementations.x]\npreset = "
       "\"fa2\"\n",
       "e.toml:2:13", "unknown generator"},
      {"[inputs.a]\nq = \"q.npy\"\nk = \"k.npy\"\nv = \"v.npy\"\n[implementations.x]\npreset = "
       "\"fa2\"\n",
       "e.toml:2:5", "does not exist"},
      {inputs + "[implementations.x]\npreset = \"fa2\"\n[sweep]\nseq_len = [16, -4]\n",
       "e.toml:7:16", "out of range"},
      {inputs + "[implementations.x]\npreset = \"fa2\"\n[sweep]\nseqlen = [16]\n", "e.toml:7:1",
       "did you mean 'seq_len'"},
      {inputs + "[implementations.x]\npreset = \"fa2\"\n[sweep]\ntile = [\"16x16\", \"big\"]\n",
       "e.toml:7:8", "tile 'big' is not a tile size"},
      {inputs + "[implementations.x]\npreset = \"fa2\"\n[analysis]\nbaseline = \"y\"\n",
       "e.toml:7:12", "not an implementation"},
      {inputs + "[implementations.x]\npreset = \"fa2\"\n[studies.s]\ninputs = [\"b\"]\n",
       "e.toml:7:11", "no input named 'b'"},
      {inputs + "[implementations.x]\npreset = \"fa2\"\n[analysis]\noutputs = [\"o\", \"dx\"]\n",
       "e.toml:7:17", "did you mean 'dq'"},
      {inputs + "[implementations.x]\npreset = \"fa2\"\n[sweep]\nseed = [1]\n[studies.s]\n",
       "e.toml:6:1", "its own sweep"},
  };
  for (const auto& c : cases) {
    const auto file = write(dir / "e.toml", c.text);
    const auto r = run_simprec("run " + file.string() + " --check");
    EXPECT_NE(r.exit_code, 0) << c.text;
    EXPECT_NE(r.output.find(c.expected_position), std::string::npos)
        << c.text << "\n-> " << r.output;
    EXPECT_NE(r.output.find(c.expected_words), std::string::npos) << c.text << "\n-> " << r.output;
  }
}

// An input's query_rows: the cases run on the sampled rows (Nq in the metrics' count), the
// key is refused with backward (its line and column), and a causal case fails with the reason.
TEST(ExperimentQueryRows, SampledRowsRunAndMisuseIsRefused) {
  const auto dir = fresh_dir("query_rows");
  const std::string input =
      "[inputs.a]\ngenerator = \"normal\"\nshape = [2, 1, 64, 8]\nbackward = false\n"
      "query_rows = 5\n";
  const auto ok = write(dir / "ok.toml", input +
                                             "[implementations.x]\nnumerics = "
                                             "\"fa3-fp8,pv_promote=1\"\nformat = \"e4m3fn\"\n");
  const auto r = run_simprec("run " + ok.string() + " --out " + (dir / "out").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto records = results_by_case(dir / "out");
  ASSERT_EQ(records.size(), 1u);
  const auto& o = records.begin()->second["results"]["outputs"]["o"];
  EXPECT_EQ(o["count"].get<int64_t>(), 2 * 5 * 8);  // 2 draws x 5 rows x dv 8

  const auto with_grad = write(dir / "grad.toml",
                               "[inputs.a]\ngenerator = \"normal\"\nshape = [2, 1, 64, 8]\n"
                               "query_rows = 5\n[implementations.x]\npreset = \"fa2\"\n");
  const auto g = run_simprec("run " + with_grad.string() + " --check");
  EXPECT_NE(g.exit_code, 0);
  EXPECT_NE(g.output.find("grad.toml:4:14"), std::string::npos) << g.output;
  EXPECT_NE(g.output.find("set backward = false"), std::string::npos) << g.output;

  const auto causal =
      write(dir / "causal.toml", input + "[implementations.x]\npreset = \"fa2\"\ncausal = true\n");
  const auto c = run_simprec("run " + causal.string() + " --out " + (dir / "causal").string());
  EXPECT_NE(c.exit_code, 0);
  EXPECT_NE(c.output.find("without a causal mask"), std::string::npos) << c.output;
}

TEST(ExperimentValidation, MitigationsAPluginKernelCannotTakeAreRefused) {
  const auto dir = fresh_dir("plugin_mitigations");
  const std::string plugin = std::string(SIMPREC_TEST_PLUGIN_DIR) + "/cpu_reference.so";
  const std::string head =
      "[inputs.a]\ngenerator = \"normal\"\nshape = [2, 1, 16, 8]\n"
      "[implementations.x]\nplugin = \"" +
      plugin + "\"\nkernel = \"attention_forward_f32\"\n";
  struct Case {
    std::string mitigation, expected;
  };
  const Case cases[] = {
      {"beta-rowmax:2", "has no parameter 'beta_rowmax' for mitigation 'beta-rowmax:2'"},
      {"sr-p:8", "has no parameter 'sr_p_bits'"},
      {"hp:s", "cannot be passed to a plugin kernel"},
      {"beta-rowmax:two", "beta-rowmax beta 'two': expected a finite number"},
  };
  for (const auto& c : cases) {
    const auto file = write(dir / "e.toml", head + "mitigations = [\"" + c.mitigation + "\"]\n");
    const auto r = run_simprec("run " + file.string() + " --check");
    EXPECT_NE(r.exit_code, 0) << c.mitigation;
    EXPECT_NE(r.output.find("e.toml:"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(c.expected), std::string::npos) << c.mitigation << "\n-> " << r.output;
  }
  // Without mitigations the same implementation is valid.
  const auto file = write(dir / "e.toml", head);
  EXPECT_EQ(run_simprec("run " + file.string() + " --check").exit_code, 0);
}

TEST(ExperimentValidation, MalformedNpyFilesAreRefusedBeforeRunning) {
  const auto dir = fresh_dir("npy");
  write(dir / "q.npy", "this is not a numpy file");
  write(dir / "k.npy", "nor this");
  write(dir / "v.npy", "nor this");
  const auto file = write(dir / "e.toml",
                          "[inputs.a]\nq = \"q.npy\"\nk = \"k.npy\"\nv = \"v.npy\"\n"
                          "[implementations.x]\npreset = \"fa2\"\n");
  const auto r = run_simprec("run " + file.string() + " --out " + (dir / "out").string());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("e.toml:2:5"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("bad magic"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir / "out" / "results.jsonl"));
}

TEST(ExperimentValidation, TooManyCasesIsRefusedBeforeRunning) {
  const auto dir = fresh_dir("too_many");
  const auto file = write(dir / "e.toml", std::string(kSmallExperiment) + "max_cases = 5\n");
  // max_cases must be at the top level; placed after [analysis] it is an unknown key there.
  auto r = run_simprec("run " + file.string() + " --check");
  EXPECT_NE(r.exit_code, 0);
  const auto file2 = write(dir / "e2.toml", "max_cases = 5\n" + std::string(kSmallExperiment));
  r = run_simprec("run " + file2.string() + " --out " + (dir / "out").string());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("8 cases, more than max_cases = 5"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir / "out" / "results.jsonl"));
  r = run_simprec("run " + write(dir / "e3.toml", kSmallExperiment).string() +
                  " --check --max-cases 7");
  EXPECT_NE(r.exit_code, 0);
}

TEST(ExperimentRun, RefusesAnotherExperimentsFolderAndUnwritableFolders) {
  const auto dir = fresh_dir("refuse");
  const auto file = write(dir / "e.toml", kSmallExperiment);
  const fs::path out = dir / "out";
  ASSERT_EQ(run_simprec("run " + file.string() + " --quiet --out " + out.string()).exit_code, 0);
  const auto changed =
      write(dir / "changed.toml", std::string(kSmallExperiment) + "backward = false\n");
  auto r = run_simprec("run " + changed.string() + " --quiet --out " + out.string());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("different experiment"), std::string::npos) << r.output;
  r = run_simprec("run " + changed.string() + " --quiet --force --out " + out.string());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(fs::exists(out / "results.jsonl.previous"));
  // A folder that holds something else.
  fs::create_directories(dir / "other");
  write(dir / "other" / "notes.txt", "mine");
  r = run_simprec("run " + file.string() + " --quiet --out " + (dir / "other").string());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("not a simprec results folder"), std::string::npos) << r.output;
  // A folder that cannot be created (its parent is a file; root ignores permission bits).
  r = run_simprec("run " + file.string() + " --quiet --out " +
                  (dir / "other" / "notes.txt" / "x").string());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("cannot create"), std::string::npos) << r.output;
}

TEST(ExperimentValidation, StudiesChooseTheirInputsAndImplementations) {
  const auto dir = fresh_dir("studies");
  const auto file = write(dir / "e.toml", R"([inputs.a]
generator = "normal"
shape = [2, 1, 16, 8]
[inputs.b]
generator = "repeated-max"
shape = [2, 1, 16, 8]
[implementations.x]
preset = "fa2"
[implementations.y]
preset = "paper-a"
[studies.one]
inputs = ["a"]
[studies.one.sweep]
seq_len = [16, 32, 64]
[studies.two]
inputs = ["b"]
implementations = ["y"]
[studies.two.sweep]
mitigations = [[], ["beta-rowmax"]]
)");
  const auto r = run_simprec("run " + file.string() + " --check");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  // one: 1 input x 2 implementations x 3 lengths; two: 1 x 1 x 2.
  EXPECT_NE(r.output.find("valid, 8 cases"), std::string::npos) << r.output;
}

TEST(ExperimentRun, ResultsDoNotDependOnThreadCount) {
  const auto dir = fresh_dir("threads");
  const auto file = write(dir / "e.toml", kSmallExperiment);
  ASSERT_EQ(run_simprec("run " + file.string() + " --quiet -j 1 --out " + (dir / "one").string())
                .exit_code,
            0);
  for (const char* threads : {"2", "3", "7"}) {
    ASSERT_EQ(run_simprec("run " + file.string() + " --quiet -j " + threads + " --out " +
                          (dir / threads).string())
                  .exit_code,
              0);
  }
  const auto one = results_by_case(dir / "one");
  EXPECT_EQ(one.size(), 8u);
  for (const auto& [id, record] : one) {  // every output is measured unless the file narrows them
    for (const char* output : {"o", "delta", "dq", "dk", "dv"}) {
      EXPECT_TRUE(record["results"]["outputs"].contains(output)) << id << " lacks " << output;
    }
  }
  for (const char* threads : {"2", "3", "7"}) {
    EXPECT_EQ(one, results_by_case(dir / threads)) << "-j " << threads;
    // The report is rebuilt from results.jsonl alone, identically.
    std::stringstream a, b;
    a << std::ifstream(dir / "one" / "summary.csv").rdbuf();
    b << std::ifstream(dir / threads / "summary.csv").rdbuf();
    EXPECT_EQ(a.str(), b.str()) << "-j " << threads;
  }
  fs::remove(dir / "one" / "report.md");
  ASSERT_EQ(run_simprec("report " + (dir / "one").string()).exit_code, 0);
  EXPECT_TRUE(fs::exists(dir / "one" / "report.md"));
}

TEST(ExperimentRun, KilledRunResumesToTheSameResults) {
  const auto dir = fresh_dir("resume");
  // 32 cases, so that there is time to kill the run half way even on a slow machine.
  std::string experiment = kSmallExperiment;
  experiment.replace(experiment.find("seed = [3, 4]"), 13, "seed = [1, 2, 3, 4, 5, 6, 7, 8]");
  const auto file = write(dir / "e.toml", experiment);
  ASSERT_EQ(run_simprec("run " + file.string() + " --quiet -j 1 --out " + (dir / "whole").string())
                .exit_code,
            0);
  // Start a run, kill -9 it once some records are on disk, then tear its last line as a power
  // loss mid-write would.
  const fs::path part = dir / "part";
  const std::string script = std::string("bash -c '") + SIMPREC_CLI + " run " + file.string() +
                             " --quiet -j 1 --out " + part.string() +
                             " & pid=$!; for i in $(seq 1 600); do n=$(cat " +
                             (part / "results.jsonl").string() +
                             " 2>/dev/null | wc -l); [ \"$n\" -ge 3 ] && break; sleep 0.05; done; "
                             "{ kill -9 $pid; wait $pid; } 2>/dev/null'";
  std::system(script.c_str());
  const auto partial = results_by_case(part);
  EXPECT_GE(partial.size(), 3u);
  EXPECT_LT(partial.size(), 32u)
      << "the run finished before it could be killed; the test proves nothing";
  std::ofstream(part / "results.jsonl", std::ios::app) << "{\"case_id\": \"torn";
  const auto r = run_simprec("run " + file.string() + " -j 2 --out " + part.string());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("already done"), std::string::npos) << r.output;
  EXPECT_EQ(results_by_case(part), results_by_case(dir / "whole"));
}

}  // namespace
