// score_mod expressions (lib/attention/score_mod.hpp): the programs against closed forms written
// here by hand (the derivative too), the fma contractions the H200's PTX shows for FlexAttention
// (fma(q.k, scale, -(0.05 x)) for score - 0.05 x), Python's integer semantics, and clear errors
// with the column of the fault.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "lib/attention/score_mod.hpp"

namespace simprec::attention {
namespace {

using Exact = ExactScoreArithmetic;

// Every operation rounded to float, as the kernel's fp32 arithmetic (tanh and exp through
// libm: the contractions are what these tests look at).
struct Float {
  static double f(double x) { return static_cast<float>(x); }
  double constant(double c) const { return f(c); }
  double to_float(double x, uint32_t) const { return f(x); }
  double add(double x, double y, uint32_t) const { return f(x + y); }
  double mul(double x, double y, uint32_t) const { return f(x * y); }
  double fma(double x, double y, double z, uint32_t) const {
    return std::fmaf(static_cast<float>(x), static_cast<float>(y), static_cast<float>(z));
  }
  double div(double x, double y, uint32_t) const { return f(x / y); }
  double div_const(double x, double c, uint32_t) const { return f(x * f(1.0 / c)); }
  double tanh(double x, uint32_t) const { return std::tanh(static_cast<float>(x)); }
  double exp(double x, uint32_t) const { return std::exp(static_cast<float>(x)); }
  double exp2(double x, uint32_t) const { return std::exp2(static_cast<float>(x)); }
  double log(double x, uint32_t) const { return std::log(static_cast<float>(x)); }
  double sqrt(double x, uint32_t) const { return f(std::sqrt(x)); }
  double sigmoid(double x, uint32_t) const { return f(1 / (1 + std::exp(-x))); }
};

template <class A>
double run(const ScoreProgram& p, const ScoreMod& m, const ScoreModPoint& at) {
  A arith;
  std::vector<double> scratch;
  return evaluate(p, m.tensors(), at, arith, scratch);
}

TEST(ScoreMod, ProgramsAgreeWithClosedFormsAndTheirDerivatives) {
  const std::vector<ScoreModTensor> table{{"t", {2, 7}, {}}};
  std::vector<ScoreModTensor> tensors = table;
  for (int i = 0; i < 14; ++i) tensors[0].values.push_back(0.25 * i - 1.5);
  struct Case {
    const char* text;
    double (*f)(double s, int64_t h, int64_t q, int64_t k);
    double (*df)(double s, int64_t h, int64_t q, int64_t k);
  };
  const Case cases[] = {
      {"score * sigmoid(score)",
       [](double s, int64_t, int64_t, int64_t) { return s / (1 + std::exp(-s)); },
       [](double s, int64_t, int64_t, int64_t) {
         const double g = 1 / (1 + std::exp(-s));
         return g + s * g * (1 - g);
       }},
      {"20 * tanh(score / 20) + t[h, q_idx - kv_idx + 3] * 2",
       [](double s, int64_t h, int64_t q, int64_t k) {
         return 20 * std::tanh(s / 20) + 2 * (0.25 * static_cast<double>(h * 7 + q - k + 3) - 1.5);
       },
       [](double s, int64_t, int64_t, int64_t) {
         const double t = std::tanh(s / 20);
         return 1 - t * t;
       }},
      {"where(q_idx >= kv_idx, score / 3.0, exp(score) - score ** 2)",
       [](double s, int64_t, int64_t q, int64_t k) { return q >= k ? s / 3 : std::exp(s) - s * s; },
       [](double s, int64_t, int64_t q, int64_t k) {
         return q >= k ? 1.0 / 3 : std::exp(s) - 2 * s;
       }},
      {"maximum(score, -1.0) + sqrt(abs(score) + 1) - log(exp2(score) + 1)",
       [](double s, int64_t, int64_t, int64_t) {
         return std::max(s, -1.0) + std::sqrt(std::fabs(s) + 1) - std::log(std::exp2(s) + 1);
       },
       [](double s, int64_t, int64_t, int64_t) {
         const double e = std::exp2(s);
         return (s > -1 ? 1.0 : 0.0) + (s > 0 ? 1 : -1) / (2 * std::sqrt(std::fabs(s) + 1)) -
                e * std::log(2.0) / (e + 1);
       }},
  };
  for (const Case& c : cases) {
    const ScoreMod m(c.text, tensors);
    for (const double raw : {-3.7, -0.6, 0.3, 2.9}) {
      for (const auto& [q, k] : {std::pair<int64_t, int64_t>{2, 1}, {0, 3}}) {
        const double scale = 0.75, s = raw * scale, p = 0.3, factor = -1.7;
        const ScoreModPoint at{raw, scale, 0, 1, q, k, p, factor};
        EXPECT_NEAR(run<Exact>(m.modification(), m, at), c.f(s, 1, q, k), 1e-12) << c.text;
        // The derivative program: dS = P (dP - D) times d mod / d score.
        EXPECT_NEAR(run<Exact>(m.derivative(), m, at), p * factor * c.df(s, 1, q, k), 1e-12)
            << c.text << " at " << s;
      }
    }
  }
}

// FlexAttention's kernel computes q.k * SM_SCALE, then the score_mod, and LLVM contracts the
// scale's product with what the score_mod adds (the H200's PTX: fma.rn.f32 q.k, 0f3DB504F3,
// -r), and a product in the score_mod with the score ("score + s[h] * (kv - q)": a tie of two
// single-use products, the first operand's taken; "30 * tanh(.) + b": fma(30, tanh, b)).
TEST(ScoreMod, ProductsAreContractedAsTheKernelsPtxShows) {
  const double raw = 1.2345678, scale = 0.08838834764831843;
  const float sc = static_cast<float>(scale);
  const ScoreModPoint at{raw, scale, 0, 1, 3, 10};
  const ScoreMod penalty("score - 0.05 * abs(q_idx - kv_idx)", {});
  const float x = static_cast<float>(7) * 0.05f;
  EXPECT_EQ(run<Float>(penalty.modification(), penalty, at),
            std::fmaf(static_cast<float>(raw), sc, -x));
  const ScoreMod alibi("score + s[h] * (kv_idx - q_idx)",
                       {{"s", {2}, {0.3f, 0.7f}, ScoreType::kFloat}});
  EXPECT_EQ(run<Float>(alibi.modification(), alibi, at),
            std::fmaf(static_cast<float>(raw), sc, 0.7f * 7.0f));
  const ScoreMod capped("30.0 * tanh(score / 30.0) + b[q_idx]",
                        {{"b", {4}, {0.f, 0.f, 0.f, 0.375f}, ScoreType::kFloat}});
  const float s = static_cast<float>(raw) * sc;
  const float t = std::tanh(s * static_cast<float>(1.0 / 30.0));
  EXPECT_EQ(run<Float>(capped.modification(), capped, at), std::fmaf(30.0f, t, 0.375f));
  // Its derivative as Inductor compiles tanh's: ((g 30) fma(-t, t, 1)) (1/30), g = P (dP - D).
  const ScoreModPoint back{raw, scale, 0, 1, 3, 10, 0.25, -0.625};
  const float g = 0.25f * -0.625f;
  EXPECT_EQ(run<Float>(capped.derivative(), capped, back),
            (g * 30.0f) * std::fmaf(-t, t, 1.0f) * static_cast<float>(1.0 / 30.0));
}

TEST(ScoreMod, IntegersFollowPython) {
  const ScoreMod m("score * 0 + (q_idx - kv_idx) // 3 + 10 * ((q_idx - kv_idx) % 3)", {});
  const ScoreModPoint at{1.0, 1.0, 0, 0, 0, 1};  // -1 // 3 = -1, -1 % 3 = 2
  EXPECT_EQ(run<Exact>(m.modification(), m, at), -1 + 20);
}

TEST(ScoreMod, FaultsAreReportedWithTheirColumn) {
  const std::vector<ScoreModTensor> t{{"t", {3}, {0, 0, 0}}};
  const std::pair<const char*, const char*> bad[] = {
      {"score +", "column 8: expected an operand"},
      {"(score", "column 7: expected ')'"},
      {"score score", "column 7: expected an operator or the end"},
      {"cos(score)", "column 1: unknown function 'cos'"},
      {"score + nope", "column 9: unknown name 'nope'"},
      {"score + t[q_idx, kv_idx]", "the tensor t has 1 dimensions, indexed with 2"},
      {"score + t[score]", "the indices of t must be integers"},
      {"score + q_idx // 2.0", "// and % take integers"},
      {"score ** 3", "the constant exponent 2"},
      {"where(score, 1, 2)", "where's condition must be a boolean"},
      {"score + 1 / 0", "column 11: division by zero"},
      {"score / 0", "column 7: division by the constant 0"},
      {"q_idx > kv_idx", "its value is a boolean"},
      {"score + 99999999999", "beyond 32 bits"},
  };
  for (const auto& [text, message] : bad) {
    try {
      const ScoreMod m(text, t);
      ADD_FAILURE() << text << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << text << ": " << e.what();
    }
  }
  // Arrays hold what the kernel loads: fp32 values, 32-bit integers.
  for (const auto& [tensor, message] :
       {std::pair<ScoreModTensor, const char*>{{"f", {1}, {0.1}, ScoreType::kFloat},
                                               "holds 0.1, not a float32 value"},
        {{"n", {1}, {4294967296.0}, ScoreType::kInt}, "beyond 32-bit integers"}}) {
    try {
      const ScoreMod m("score", {tensor});
      ADD_FAILURE() << tensor.name << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  }
  const ScoreMod m("score + t[q_idx]", t);
  const ScoreModPoint at{1.0, 1.0, 0, 0, 3, 0};
  EXPECT_THROW(run<Exact>(m.modification(), m, at), std::out_of_range);
}

}  // namespace
}  // namespace simprec::attention

namespace simprec::attention {
namespace {

TEST(MaskMod, MasksAsItsExpressionSaysAndRefusesWhatIsNoMask) {
  const MaskMod window("(q_idx >= kv_idx) & (q_idx - kv_idx < w[h])",
                       {{"w", {2}, {3, 5}, ScoreType::kInt}});
  for (int64_t h = 0; h < 2; ++h) {
    for (int64_t q = 0; q < 12; ++q) {
      for (int64_t k = 0; k < 12; ++k)
        EXPECT_EQ(window.visible(0, h, q, k), q >= k && q - k < (h == 0 ? 3 : 5));
    }
  }
  EXPECT_THROW(MaskMod("q_idx - kv_idx", {}), std::invalid_argument);
  try {
    MaskMod("score > 0", {});
    ADD_FAILURE() << "a mask_mod with a score was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("mask_mod 'score > 0': column 1: a mask_mod has no score"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(window.visible(0, 2, 0, 0), std::out_of_range);
}

}  // namespace
}  // namespace simprec::attention
