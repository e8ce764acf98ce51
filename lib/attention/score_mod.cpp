#include "lib/attention/score_mod.hpp"

#include <stdexcept>
#include <string>

#include "emulation/excerpt.hpp"
#include "lib/limits/strict_parse.hpp"

namespace simprec::attention {

ScoreMod::ScoreMod(std::string text, std::vector<ScoreModTensor> tensors)
    : text_(std::move(text)), tensors_(std::move(tensors)) {
  for (size_t t = 0; t < tensors_.size(); ++t) {
    const ScoreModTensor& x = tensors_[t];
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
    for (size_t u = 0; u < t; ++u) {
      if (tensors_[u].name == x.name)
        throw std::invalid_argument("score_mod tensor " + excerpt(x.name) + " given twice");
    }
  }
  const ScoreProgram forward = parse_score_program(text_, tensors_);
  modification_ = contracted(forward);
  derivative_ = contracted(derivative_program(forward));
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
