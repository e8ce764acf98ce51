#include "lib/attention/score_mod.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "emulation/excerpt.hpp"
#include "lib/limits/strict_parse.hpp"

namespace simprec::attention {

namespace {

// Each tensor's values fill its dimensions (each above 0, at most 2^40 values) and are what the
// kernel loads (floats fp32 values, integers within 32 bits), and no name is given twice.
void check_tensors(const std::vector<ScoreModTensor>& tensors) {
  for (size_t t = 0; t < tensors.size(); ++t) {
    const ScoreModTensor& x = tensors[t];
    size_t count = 1;
    for (const int64_t d : x.dims) {
      if (d <= 0 || count > (size_t{1} << 40) / static_cast<size_t>(d))
        throw std::invalid_argument("score_mod tensor " + excerpt(x.name) + ": a dimension of " +
                                    std::to_string(d) +
                                    " (expected sizes above 0, at most 2^40 values)");
      count *= static_cast<size_t>(d);
    }
    if (x.values.size() != count)
      throw std::invalid_argument("score_mod tensor " + excerpt(x.name) + ": " +
                                  std::to_string(x.values.size()) + " values for " +
                                  std::to_string(count));
    for (const double v : x.values) {
      const bool fits = x.type == ScoreType::kFloat
                            ? (std::isnan(v) || static_cast<double>(static_cast<float>(v)) == v)
                            : std::fabs(v) <= 2147483647.0;
      if (!fits)
        throw std::invalid_argument(
            "score_mod tensor " + excerpt(x.name) + ": holds " + limits::shortest_text(v) +
            (x.type == ScoreType::kFloat ? ", not a float32 value (the kernel computes in float32)"
                                         : ", beyond 32-bit integers"));
    }
    for (size_t u = 0; u < t; ++u) {
      if (tensors[u].name == x.name)
        throw std::invalid_argument("score_mod tensor " + excerpt(x.name) + " given twice");
    }
  }
}

}  // namespace

ScoreMod::ScoreMod(std::string text, std::vector<ScoreModTensor> tensors)
    : text_(std::move(text)), tensors_(std::move(tensors)) {
  check_tensors(tensors_);
  const ScoreProgram forward = parse_score_program(text_, tensors_);
  modification_ = contracted(forward);
  derivative_ = contracted(derivative_program(forward));
}

namespace {

// A mask_mod's float operations in fp32, each correctly rounded (through double, whose rounding
// to fp32 after one exact-or-rounded double operation is innocuous for +, -, *, / and sqrt).
struct Fp32 {
  static double f(double x) { return static_cast<float>(x); }
  double constant(double c) const { return f(c); }
  double to_float(double x, uint32_t) const { return f(x); }
  double add(double x, double y, uint32_t) const { return f(x + y); }
  double mul(double x, double y, uint32_t) const { return f(x * y); }
  double fma(double x, double y, double z, uint32_t) const { return f(std::fma(x, y, z)); }
  double div(double x, double y, uint32_t) const { return f(x / y); }
  double div_const(double x, double c, uint32_t) const { return f(x * f(1.0 / c)); }
  double tanh(double x, uint32_t) const { return f(std::tanh(x)); }
  double exp(double x, uint32_t) const { return f(std::exp(x)); }
  double exp2(double x, uint32_t) const { return f(std::exp2(x)); }
  double log(double x, uint32_t) const { return f(std::log(x)); }
  double sqrt(double x, uint32_t) const { return f(std::sqrt(x)); }
  double sigmoid(double x, uint32_t) const { return f(1 / (1 + std::exp(-x))); }
};

}  // namespace

MaskMod::MaskMod(std::string text, std::vector<ScoreModTensor> tensors)
    : text_(std::move(text)), tensors_(std::move(tensors)) {
  check_tensors(tensors_);
  program_ = contracted(parse_score_program(text_, tensors_, /*mask=*/true));
}

bool MaskMod::visible(int64_t b, int64_t h, int64_t q, int64_t kv) const {
  thread_local std::vector<double> scratch;
  const Fp32 arith;
  return evaluate(program_, tensors_, ScoreModPoint{0, 1, b, h, q, kv}, arith, scratch) != 0;
}

ScoreMod ScoreMod::softcap_and_alibi(double softcap, const std::vector<double>& slopes) {
  std::string text = "score";
  std::vector<ScoreModTensor> tensors;
  if (softcap > 0) {
    const std::string cap = limits::shortest_text(softcap);
    text = cap + " * tanh(score / " + cap + ")";
  }
  if (!slopes.empty()) {
    ScoreModTensor t{"alibi_slopes", {static_cast<int64_t>(slopes.size())}, {}};
    for (const double s : slopes) t.values.push_back(static_cast<float>(s));
    tensors.push_back(std::move(t));
    text += " + alibi_slopes[h] * (kv_idx - q_idx)";
  }
  return ScoreMod(text, std::move(tensors));
}

namespace score_mod_detail {

void throw_load_out_of_range(const ScoreModTensor& t, size_t dim, double index) {
  throw std::out_of_range("score_mod: " + t.name + "'s index " + std::to_string(dim) + " is " +
                          std::to_string(static_cast<int64_t>(index)) + ", outside [0, " +
                          std::to_string(t.dims[dim]) + ")");
}

void throw_integer_fault(ScoreOp op, double a, double b) {
  throw std::out_of_range(std::string("score_mod: ") + score_op_name(op) + " of " +
                          std::to_string(static_cast<int64_t>(a)) + " and " +
                          std::to_string(static_cast<int64_t>(b)) +
                          " (division by zero, or beyond 32-bit integers)");
}

}  // namespace score_mod_detail

const char* score_op_name(ScoreOp op) {
  switch (op) {
    case ScoreOp::kRawScore:
      return "q.k";
    case ScoreOp::kScale:
      return "scale";
    case ScoreOp::kProbability:
      return "p";
    case ScoreOp::kGradFactor:
      return "dp - D";
    case ScoreOp::kBatch:
      return "b";
    case ScoreOp::kHead:
      return "h";
    case ScoreOp::kQuery:
      return "q_idx";
    case ScoreOp::kKey:
      return "kv_idx";
    case ScoreOp::kConst:
      return "const";
    case ScoreOp::kLoad:
      return "load";
    case ScoreOp::kNeg:
      return "neg";
    case ScoreOp::kAbs:
      return "abs";
    case ScoreOp::kSign:
      return "sign";
    case ScoreOp::kNot:
      return "not";
    case ScoreOp::kToFloat:
      return "float";
    case ScoreOp::kTanh:
      return "tanh";
    case ScoreOp::kExp:
      return "exp";
    case ScoreOp::kExp2:
      return "exp2";
    case ScoreOp::kLog:
      return "log";
    case ScoreOp::kSqrt:
      return "sqrt";
    case ScoreOp::kSigmoid:
      return "sigmoid";
    case ScoreOp::kAdd:
      return "add";
    case ScoreOp::kSub:
      return "sub";
    case ScoreOp::kMul:
      return "mul";
    case ScoreOp::kDiv:
      return "div";
    case ScoreOp::kFloorDiv:
      return "floordiv";
    case ScoreOp::kMod:
      return "mod";
    case ScoreOp::kMin:
      return "minimum";
    case ScoreOp::kMax:
      return "maximum";
    case ScoreOp::kLt:
      return "lt";
    case ScoreOp::kLe:
      return "le";
    case ScoreOp::kGt:
      return "gt";
    case ScoreOp::kGe:
      return "ge";
    case ScoreOp::kEq:
      return "eq";
    case ScoreOp::kNe:
      return "ne";
    case ScoreOp::kAnd:
      return "and";
    case ScoreOp::kOr:
      return "or";
    case ScoreOp::kFma:
      return "fma";
    case ScoreOp::kWhere:
      return "where";
  }
  return "?";
}

}  // namespace simprec::attention
