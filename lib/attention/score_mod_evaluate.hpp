// evaluate() of score_mod.hpp: one pass over a program's nodes.
#pragma once

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace simprec::attention {

namespace score_mod_detail {

[[noreturn]] void throw_load_out_of_range(const ScoreModTensor& t, size_t dim, double index);
[[noreturn]] void throw_integer_fault(ScoreOp op, double a, double b);

// An integer result as the kernel's 32-bit arithmetic holds it, or a clear error.
inline double checked_int(ScoreOp op, double r, double a, double b) {
  if (!(std::fabs(r) <= 2147483647.0)) throw_integer_fault(op, a, b);
  return r;
}

}  // namespace score_mod_detail

template <class Arith>
double evaluate(const ScoreProgram& p, const std::vector<ScoreModTensor>& tensors,
                const ScoreModPoint& at, Arith& arith, std::vector<double>& v) {
  using score_mod_detail::checked_int;
  v.resize(p.nodes.size());
  for (size_t k = 0; k < p.nodes.size(); ++k) {
    const ScoreNode& n = p.nodes[k];
    const double a = n.arg[0] >= 0 ? v[n.arg[0]] : 0.0;
    const double b = n.arg[1] >= 0 ? v[n.arg[1]] : 0.0;
    const double c = n.arg[2] >= 0 ? v[n.arg[2]] : 0.0;
    const bool real = n.type == ScoreType::kFloat;
    const auto step = static_cast<uint32_t>(k);
    double r = 0;
    switch (n.op) {
      case ScoreOp::kRawScore:
        r = at.raw_score;
        break;
      case ScoreOp::kScale:
        r = arith.constant(at.scale);
        break;
      case ScoreOp::kProbability:
        r = at.p;
        break;
      case ScoreOp::kGradFactor:
        r = at.grad_factor;
        break;
      case ScoreOp::kBatch:
        r = static_cast<double>(at.b);
        break;
      case ScoreOp::kHead:
        r = static_cast<double>(at.h);
        break;
      case ScoreOp::kQuery:
        r = static_cast<double>(at.q);
        break;
      case ScoreOp::kKey:
        r = static_cast<double>(at.kv);
        break;
      case ScoreOp::kConst:
        r = real ? arith.constant(n.value) : n.value;
        break;
      case ScoreOp::kLoad: {
        const ScoreModTensor& t = tensors[static_cast<size_t>(n.tensor)];
        size_t offset = 0;
        for (size_t d = 0; d < t.dims.size(); ++d) {
          const double i = v[n.index[d]];
          if (!(i >= 0 && i < static_cast<double>(t.dims[d])))
            score_mod_detail::throw_load_out_of_range(t, d, i);
          offset = offset * static_cast<size_t>(t.dims[d]) + static_cast<size_t>(i);
        }
        r = t.values[offset];
        break;
      }
      case ScoreOp::kNeg:
        r = -a;
        break;
      case ScoreOp::kAbs:
        r = std::fabs(a);
        break;
      case ScoreOp::kSign:
        r = a > 0 ? 1.0 : a < 0 ? -1.0 : 0.0;
        break;
      case ScoreOp::kNot:
        r = a == 0 ? 1.0 : 0.0;
        break;
      case ScoreOp::kToFloat:
        r = arith.to_float(a, step);
        break;
      case ScoreOp::kTanh:
        r = arith.tanh(a, step);
        break;
      case ScoreOp::kExp:
        r = arith.exp(a, step);
        break;
      case ScoreOp::kExp2:
        r = arith.exp2(a, step);
        break;
      case ScoreOp::kLog:
        r = arith.log(a, step);
        break;
      case ScoreOp::kSqrt:
        r = arith.sqrt(a, step);
        break;
      case ScoreOp::kSigmoid:
        r = arith.sigmoid(a, step);
        break;
      case ScoreOp::kAdd:
        r = real ? arith.add(a, b, step) : checked_int(n.op, a + b, a, b);
        break;
      case ScoreOp::kSub:
        r = real ? arith.add(a, -b, step) : checked_int(n.op, a - b, a, b);
        break;
      case ScoreOp::kMul:
        r = real ? arith.mul(a, b, step) : checked_int(n.op, a * b, a, b);
        break;
      case ScoreOp::kDiv:
        r = p.nodes[n.arg[1]].op == ScoreOp::kConst
                ? arith.div_const(a, p.nodes[n.arg[1]].value, step)
                : arith.div(a, b, step);
        break;
      case ScoreOp::kFloorDiv:
        if (b == 0) score_mod_detail::throw_integer_fault(n.op, a, b);
        r = checked_int(n.op, std::floor(a / b), a, b);
        break;
      case ScoreOp::kMod:
        if (b == 0) score_mod_detail::throw_integer_fault(n.op, a, b);
        r = a - b * std::floor(a / b);
        break;
      case ScoreOp::kMin:
        r = std::isnan(a) || std::isnan(b) ? NAN : std::fmin(a, b);
        break;
      case ScoreOp::kMax:
        r = std::isnan(a) || std::isnan(b) ? NAN : std::fmax(a, b);
        break;
      case ScoreOp::kLt:
        r = a < b;
        break;
      case ScoreOp::kLe:
        r = a <= b;
        break;
      case ScoreOp::kGt:
        r = a > b;
        break;
      case ScoreOp::kGe:
        r = a >= b;
        break;
      case ScoreOp::kEq:
        r = a == b;
        break;
      case ScoreOp::kNe:
        r = a != b;
        break;
      case ScoreOp::kAnd:
        r = (a != 0) && (b != 0);
        break;
      case ScoreOp::kOr:
        r = (a != 0) || (b != 0);
        break;
      case ScoreOp::kFma:
        r = arith.fma(a, b, c, step);
        break;
      case ScoreOp::kWhere:
        r = a != 0 ? b : c;
        break;
    }
    v[k] = r;
  }
  return v[static_cast<size_t>(p.result)];
}

}  // namespace simprec::attention
