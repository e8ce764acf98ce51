// The derivative program of a score_mod: reverse mode over the modification's nodes with
// PyTorch's derivative formulas (tools/autograd/derivatives.yaml) and the decompositions
// Inductor lowers them through (torch/_decomp: tanh_backward, sigmoid_backward), in the order
// autograd runs them: nodes from the last created to the first, a node's gradients from its
// uses summed as they arrive (old + new).
#include <numbers>
#include <vector>

#include "lib/attention/score_mod.hpp"

namespace simprec::attention {

namespace {

class Reverse {
 public:
  explicit Reverse(const ScoreProgram& forward) : p_(forward) {}

  ScoreProgram run() {
    const size_t n = p_.nodes.size();
    const int32_t score = score_node();
    std::vector<bool> depends(n, false);
    for (size_t k = 0; k < n; ++k) {
      const ScoreNode& node = p_.nodes[k];
      if (static_cast<int32_t>(k) == score) depends[k] = true;
      for (const int32_t a : node.arg) {
        if (a >= 0 && depends[a] && node.type == ScoreType::kFloat) depends[k] = true;
      }
    }
    grad_.assign(n, -1);
    const int32_t result = p_.result;
    if (score < 0 || !depends[result]) {
      p_.result = node(ScoreOp::kConst, ScoreType::kFloat);
      return std::move(p_);
    }
    grad_[result] = mul(node(ScoreOp::kProbability, ScoreType::kFloat),
                        node(ScoreOp::kGradFactor, ScoreType::kFloat));
    for (size_t kk = n; kk-- > 0;) {
      const auto k = static_cast<int32_t>(kk);
      if (grad_[k] < 0 || !depends[k]) continue;
      const ScoreNode f = p_.nodes[k];
      const int32_t g = grad_[k];
      const int32_t a = f.arg[0], b = f.arg[1], c = f.arg[2];
      const auto wants = [&](int32_t x) { return x >= 0 && depends[x]; };
      switch (f.op) {
        case ScoreOp::kAdd:
          if (wants(a)) deliver(a, g);
          if (wants(b)) deliver(b, g);
          break;
        case ScoreOp::kSub:
          if (wants(a)) deliver(a, g);
          if (wants(b)) deliver(b, node(ScoreOp::kNeg, ScoreType::kFloat, g));
          break;
        case ScoreOp::kNeg:
          deliver(a, node(ScoreOp::kNeg, ScoreType::kFloat, g));
          break;
        case ScoreOp::kMul:  // self: grad * other; other: grad * self
          if (wants(a)) deliver(a, mul(g, b));
          if (wants(b)) deliver(b, mul(g, a));
          break;
        case ScoreOp::kDiv:  // self: grad / other; other: -grad * ((self / other) / other)
          if (wants(a)) deliver(a, node(ScoreOp::kDiv, ScoreType::kFloat, g, b));
          if (wants(b)) {
            const int32_t neg = node(ScoreOp::kNeg, ScoreType::kFloat, g);
            deliver(b, mul(neg, node(ScoreOp::kDiv, ScoreType::kFloat, k, b)));
          }
          break;
        case ScoreOp::kTanh: {  // tanh_backward: grad * (1 - y * y)
          const int32_t yy = mul(k, k);
          deliver(a, mul(g, node(ScoreOp::kSub, ScoreType::kFloat, constant(1), yy)));
          break;
        }
        case ScoreOp::kSigmoid: {  // sigmoid_backward: grad * (y * (1 - y))
          const int32_t one_minus = node(ScoreOp::kSub, ScoreType::kFloat, constant(1), k);
          deliver(a, mul(g, mul(k, one_minus)));
          break;
        }
        case ScoreOp::kExp:  // grad * result
          deliver(a, mul(g, k));
          break;
        case ScoreOp::kExp2:  // grad * result * M_LN2
          deliver(a, mul(mul(g, k), constant(std::numbers::ln2)));
          break;
        case ScoreOp::kLog:  // grad / self
          deliver(a, node(ScoreOp::kDiv, ScoreType::kFloat, g, a));
          break;
        case ScoreOp::kSqrt:  // grad / (2 * result)
          deliver(a, node(ScoreOp::kDiv, ScoreType::kFloat, g, mul(constant(2), k)));
          break;
        case ScoreOp::kAbs:  // grad * self.sgn()
          deliver(a, mul(g, node(ScoreOp::kSign, ScoreType::kFloat, a)));
          break;
        case ScoreOp::kWhere: {  // where(c, grad, 0), where(c, 0, grad)
          const int32_t zero = constant(0);
          if (wants(b)) deliver(b, node(ScoreOp::kWhere, ScoreType::kFloat, a, g, zero));
          if (wants(c)) deliver(c, node(ScoreOp::kWhere, ScoreType::kFloat, a, zero, g));
          break;
        }
        case ScoreOp::kMin:
        case ScoreOp::kMax: {
          // where(self == other, grad / 2, grad), zero where the other operand wins.
          const int32_t tie = node(ScoreOp::kEq, ScoreType::kBool, a, b);
          const int32_t shared = node(ScoreOp::kWhere, ScoreType::kFloat, tie,
                                      node(ScoreOp::kDiv, ScoreType::kFloat, g, constant(2)), g);
          const int32_t zero = constant(0);
          const bool max = f.op == ScoreOp::kMax;
          if (wants(a)) {
            const int32_t loses = node(max ? ScoreOp::kLt : ScoreOp::kGt, ScoreType::kBool, a, b);
            deliver(a, node(ScoreOp::kWhere, ScoreType::kFloat, loses, zero, shared));
          }
          if (wants(b)) {
            const int32_t loses = node(max ? ScoreOp::kGt : ScoreOp::kLt, ScoreType::kBool, a, b);
            deliver(b, node(ScoreOp::kWhere, ScoreType::kFloat, loses, zero, shared));
          }
          break;
        }
        default:
          break;  // no float input depends on the score through it
      }
    }
    p_.result = grad_[score];
    return std::move(p_);
  }

 private:
  int32_t node(ScoreOp op, ScoreType t, int32_t a = -1, int32_t b = -1, int32_t c = -1) {
    ScoreNode n{op, t};
    n.arg = {a, b, c};
    p_.nodes.push_back(std::move(n));
    return static_cast<int32_t>(p_.nodes.size() - 1);
  }
  int32_t constant(double v) {
    const int32_t k = node(ScoreOp::kConst, ScoreType::kFloat);
    p_.nodes[k].value = v;
    return k;
  }
  int32_t mul(int32_t a, int32_t b) { return node(ScoreOp::kMul, ScoreType::kFloat, a, b); }
  void deliver(int32_t to, int32_t g) {
    grad_[to] = grad_[to] < 0 ? g : node(ScoreOp::kAdd, ScoreType::kFloat, grad_[to], g);
  }
  // The score: the product of the raw score and the scale (score_mod_parse.cpp's).
  int32_t score_node() const {
    for (size_t k = 0; k < p_.nodes.size(); ++k) {
      const ScoreNode& n = p_.nodes[k];
      if (n.op == ScoreOp::kMul && p_.nodes[n.arg[0]].op == ScoreOp::kRawScore)
        return static_cast<int32_t>(k);
    }
    return -1;
  }

  ScoreProgram p_;
  std::vector<int32_t> grad_;
};

}  // namespace

ScoreProgram derivative_program(const ScoreProgram& forward) {
  return Reverse(forward).run();
}

}  // namespace simprec::attention
