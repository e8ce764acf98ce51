// beta-rowmax's failures: the safe range of beta (docs/attention.md, "beta-rowmax: the safe
// range") checked on both sides of its bound in three formats of P, the cause the reports give
// for the NaN it produces, and the verdict that says on which inputs a mitigation holds.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "lib/attention/attention.hpp"
#include "lib/attention/numerics_spec.hpp"
#include "lib/attention/preset.hpp"
#include "lib/attention/row_sum_diagnosis.hpp"
#include "lib/reports/report.hpp"
#include "tests/cli_support.hpp"

namespace simprec::attention {
namespace {

// One query against two keys of equal score 1 (scale 1): the row max repeats, beta-rowmax
// subtracts beta, and the largest P is exp(-(beta - 1)).
AttentionOutputs repeated_max_row(const std::string& numerics, double beta) {
  AttentionInputs in;
  in.shape = {1, 1, 1, 2, 1, 1};
  in.q = {1.0};
  in.k = {1.0, 1.0};
  in.v = {1.0, 2.0};
  AttentionConfig c =
      parse_numerics(numerics + ",beta-rowmax:" + std::to_string(beta), formats::fp32);
  c.scale = 1.0;
  return run_attention(in, c);
}

// The bound: P's largest value exp(-(beta - 1) x) (x the scaled max, here 1) rounds to 0 once
// (beta - 1) x > (p - emin) ln 2 (below half the smallest subnormal), or -emin ln 2 when the
// format flushes subnormals; then l = 0 and O = 0/0. With norm=reciprocal, 1/l overflows
// before that, once l < 2^-(emax + 1): (beta - 1) x > (emax + 1) ln 2 + ln k for k equal maxima
// (here 2). Each case sits just inside and just outside its bound, every intermediate exact in
// its site's format.
struct Bound {
  const char* numerics;
  double bound;
  double inside, out;  // beta - 1 on either side
  bool zero_sum;       // outside: l = 0 and O NaN (else l > 0, 1/l and O infinite)
};

class SafeRange : public ::testing::TestWithParam<Bound> {};

TEST_P(SafeRange, OutputStopsBeingFiniteExactlyBeyondTheBound) {
  const Bound& b = GetParam();
  ASSERT_LT(b.inside, b.bound);
  ASSERT_GT(b.out, b.bound);
  const AttentionOutputs ok = repeated_max_row(b.numerics, 1 + b.inside);
  ASSERT_EQ(ok.row_sum.size(), 1u);
  EXPECT_GT(ok.row_sum[0], 0.0);
  EXPECT_TRUE(std::isfinite(ok.o[0])) << ok.o[0];
  AttentionConfig config = parse_numerics(b.numerics, formats::fp32);
  EXPECT_EQ(diagnose_row_sums(ok, config).cause, "");
  const AttentionOutputs bad = repeated_max_row(b.numerics, 1 + b.out);
  apply_mitigation(config, "beta-rowmax:" + std::to_string(1 + b.out));
  const RowSumDiagnosis d = diagnose_row_sums(bad, config);
  if (b.zero_sum) {
    EXPECT_EQ(bad.row_sum[0], 0.0);
    EXPECT_TRUE(std::isnan(bad.o[0])) << bad.o[0];
    EXPECT_EQ(d.zero, 1);
  } else {
    EXPECT_GT(bad.row_sum[0], 0.0);
    EXPECT_TRUE(std::isinf(bad.o[0])) << bad.o[0];
    EXPECT_EQ(d.reciprocal_overflow, 1);
  }
  EXPECT_NE(d.cause.find("beta-rowmax's shift"), std::string::npos) << d.cause;
}

INSTANTIATE_TEST_SUITE_P(
    Formats, SafeRange,
    ::testing::Values(
        // fp32 P, O/l: (24 + 126) ln 2 = 103.97; exp(-103.9375) = 2^-149.95, exp(-104.0625) =
        // 2^-150.13
        Bound{"fp32,norm=divide", 150 * std::log(2.0), 103.9375, 104.0625, true},
        // fp32 P without subnormals (the GPU's ex2.approx.ftz): 126 ln 2 = 87.34
        Bound{"fp32,norm=divide,exp=fp32:ftz:rne", 126 * std::log(2.0), 87.0, 88.5, true},
        // fp32 with O (1/l) (fa2's epilogue): 128 ln 2 + ln 2 = 89.42; l = 2^-127.7, 2^-128.1
        Bound{"fp32", 129 * std::log(2.0), 89.0, 89.5, false},
        // fp16 P (paper-a at fp16, O/l): (11 + 14) ln 2 = 17.33
        Bound{"paper-a,format=fp16", 25 * std::log(2.0), 17.25, 17.5, true}),
    [](const auto& info) { return std::to_string(info.index); });

TEST(SafeRange, FlushingFormatReadsBackFromItsName) {
  const Format f = parse_format("fp32:ftz");
  EXPECT_FALSE(f.keeps_subnormals());
  EXPECT_EQ(f.name(), "fp32:ftz");
  const SiteSpec s = parse_site_spec("bf16:ftz:rtz");
  EXPECT_EQ(s.format.name(), "bf16:ftz");
  EXPECT_EQ(s.rounding.mode, RoundingMode::kTowardZero);
  EXPECT_THROW(parse_format("fp32:ftzz"), std::invalid_argument);
}

TEST(RowSumDiagnosis, NamesBetaRowmaxAsTheCause) {
  AttentionConfig c = parse_numerics("fp32,beta-rowmax:106", formats::fp32);
  AttentionOutputs out;
  out.row_sum = {0.0, 1.5, 0.0, 2.0};
  const RowSumDiagnosis d = diagnose_row_sums(out, c);
  EXPECT_EQ(d.rows, 4);
  EXPECT_EQ(d.zero, 2);
  EXPECT_EQ(d.cause,
            "beta-rowmax's shift (beta = 106) underflowed the row sum to 0 in 2 of 4 rows, whose "
            "O is 0/0 = NaN");
  out.row_sum = {1.0, HUGE_VAL};
  EXPECT_EQ(diagnose_row_sums(out, make_preset("fa2")).cause,
            "the row sum overflowed to infinity in 1 of 2 rows");
  out.row_sum = {1.0, 2.0};
  EXPECT_EQ(diagnose_row_sums(out, c).cause, "");
}

TEST(RowSumDiagnosis, RunRecordsTheRowSumsOfEveryAlgorithm) {
  AttentionInputs in;
  in.shape = {1, 1, 2, 3, 1, 1};
  in.q = {1.0, -1.0};
  in.k = {1.0, 0.5, 0.0};
  in.v = {1.0, 2.0, 3.0};
  for (const char* spec : {"fp64", "fp64,algorithm=standard", "paper-b,tile=1x2"}) {
    AttentionConfig c = parse_numerics(spec, formats::fp64);
    c.scale = 1.0;
    const AttentionOutputs out = run_attention(in, c);
    ASSERT_EQ(out.row_sum.size(), 2u) << spec;
    // Row 0: exp(s - 1) over s = 1, 0.5, 0; row 1: exp(s - 0) over s = -1, -0.5, 0.
    EXPECT_NEAR(out.row_sum[0], 1 + std::exp(-0.5) + std::exp(-1.0), 1e-15) << spec;
    EXPECT_NEAR(out.row_sum[1], 1 + std::exp(-0.5) + std::exp(-1.0), 1e-15) << spec;
  }
}

TEST(RowSumDiagnosis, AttentionCommandPrintsAndStoresTheCause) {
  // One prototype: every key the same, so every row's max repeats; d = 128: scaled row maxima 17
  // to 51; beta = 20 underflows every row's P in fp32 without subnormals (19 * 17 > 87.3).
  const auto dir = simprec::testing::fresh_dir("beta_rowmax_cause");
  const auto r = simprec::testing::run_simprec(
      "attention --generate repeated-max --gen-param prototypes=1 --shape 1,1,64,128 --numerics "
      "fa2,exp=fp32:ftz:rne "
      "--mitigation beta-rowmax:20 --no-baseline --out " +
      dir.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(simprec::testing::contains(
      r.output,
      "non-finite O: beta-rowmax's shift (beta = 20) underflowed the row sum to 0 in 64 of 64 "
      "rows, whose O is 0/0 = NaN"))
      << r.output;
  std::ifstream in(dir / "stats.json");
  const auto stats = nlohmann::json::parse(in);
  EXPECT_EQ(stats["row_sums"]["zero"], 64);
  EXPECT_EQ(stats["row_sums"]["rows"], 64);
}

// A record of the layout docs/experiments.md describes, with what the verdict reads.
nlohmann::json record(int index, const std::string& input, const std::string& mitigation, double z,
                      int64_t nan = 0, const std::string& cause = "") {
  nlohmann::json mitigations = nlohmann::json::array();
  if (!mitigation.empty()) mitigations.push_back(mitigation);
  nlohmann::json o{{"count", 1000},
                   {"nan_count", nan},
                   {"inf_count", 0},
                   {"nonfinite_mismatch", nan},
                   {"bias_z", z}};
  if (nan > 0) o["bias_z"] = nullptr;
  return {{"case_index", index},
          {"params",
           {{"implementation",
             {{"name", "paper_a"},
              {"preset", "paper-a"},
              {"format", "bf16"},
              {"mitigations", mitigations}}},
            {"input",
             {{"name", input},
              {"generator", "repeated-max"},
              {"shape", {8, 1, 256, 128}},
              {"seed", 1}}},
            {"analysis", nlohmann::json::object()}}},
          {"results", {{"outputs", {{"o", o}}}, {"row_sums", {{"cause", cause}}}}}};
}

TEST(MitigationVerdict, SaysOnWhichInputsItHolds) {
  const std::string cause = "beta-rowmax's shift (beta = 3) underflowed the row sum to 0";
  const std::vector<nlohmann::json> records = {
      record(0, "repeated", "", -30),     record(1, "repeated", "beta-rowmax:3", 0, 220, cause),
      record(2, "concentrated", "", -20), record(3, "concentrated", "beta-rowmax:3", 5.5),
      record(4, "sinks", "", -9),         record(5, "sinks", "beta-rowmax:3", 1.2),
      record(6, "normal", "", 0.5),       record(7, "normal", "beta-rowmax:3", -0.7)};
  std::string line;
  for (const auto& l : reports::verdict(records)) {
    if (l.rfind("`beta-rowmax:3`", 0) == 0) line = l;
  }
  ASSERT_FALSE(line.empty());
  EXPECT_NE(line.find("holds (removed the bias of O) on sinks (N = 256): z -9 -> 1.2"),
            std::string::npos)
      << line;
  EXPECT_NE(line.find("fails, leaving a bias of the opposite sign, on concentrated (N = 256): z "
                      "-20 -> 5.5"),
            std::string::npos)
      << line;
  EXPECT_NE(line.find("fails with non-finite O on repeated (N = 256): 22% of O NaN or infinite, " +
                      cause),
            std::string::npos)
      << line;
  EXPECT_NE(line.find("had no significant bias to remove on normal (N = 256)"), std::string::npos)
      << line;
}

}  // namespace
}  // namespace simprec::attention
