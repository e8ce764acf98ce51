// Common subexpressions merged, products contracted into fmas as LLVM's DAG combiner does for
// NVPTX (visitFADDForFMACombine, visitFSUBForFMACombine: contraction allowed globally, as Triton
// compiles, and aggressive on NVPTX, so a product is fused whatever its other uses; of two
// products the one with fewer uses, the first operand on a tie), then unused nodes dropped.
// A division by a constant is a product here: Inductor has made it one by the reciprocal.
#include <map>
#include <tuple>
#include <vector>

#include "lib/attention/score_mod.hpp"

namespace simprec::attention {

namespace {

using Key = std::tuple<ScoreOp, ScoreType, int32_t, int32_t, int32_t, double, int32_t,
                       std::vector<int32_t>>;

// Each node's arguments renamed through `to`, identical nodes merged.
ScoreProgram merged(const ScoreProgram& p) {
  ScoreProgram out;
  std::vector<int32_t> to(p.nodes.size(), -1);
  std::map<Key, int32_t> seen;
  for (size_t k = 0; k < p.nodes.size(); ++k) {
    ScoreNode n = p.nodes[k];
    for (int32_t& a : n.arg) a = a >= 0 ? to[a] : -1;
    for (int32_t& i : n.index) i = to[i];
    const Key key{n.op, n.type, n.arg[0], n.arg[1], n.arg[2], n.value, n.tensor, n.index};
    const auto [it, fresh] = seen.emplace(key, static_cast<int32_t>(out.nodes.size()));
    if (fresh) out.nodes.push_back(std::move(n));
    to[k] = it->second;
  }
  out.result = to[p.result];
  return out;
}

// Only the nodes the result needs, in their order.
ScoreProgram pruned(const ScoreProgram& p) {
  std::vector<bool> live(p.nodes.size(), false);
  live[p.result] = true;
  for (size_t k = p.nodes.size(); k-- > 0;) {
    if (!live[k]) continue;
    for (const int32_t a : p.nodes[k].arg) {
      if (a >= 0) live[a] = true;
    }
    for (const int32_t i : p.nodes[k].index) live[i] = true;
  }
  ScoreProgram out;
  std::vector<int32_t> to(p.nodes.size(), -1);
  for (size_t k = 0; k < p.nodes.size(); ++k) {
    if (!live[k]) continue;
    ScoreNode n = p.nodes[k];
    for (int32_t& a : n.arg) a = a >= 0 ? to[a] : -1;
    for (int32_t& i : n.index) i = to[i];
    to[k] = static_cast<int32_t>(out.nodes.size());
    out.nodes.push_back(std::move(n));
  }
  out.result = to[p.result];
  return out;
}

class Contraction {
 public:
  explicit Contraction(ScoreProgram p) : p_(std::move(p)), uses_(p_.nodes.size(), 0) {
    for (const ScoreNode& n : p_.nodes) {
      for (const int32_t a : n.arg) {
        if (a >= 0) ++uses_[a];
      }
      for (const int32_t i : n.index) ++uses_[i];
    }
    ++uses_[p_.result];
  }

  ScoreProgram run() {
    const size_t n = p_.nodes.size();
    std::vector<int32_t> to(n);
    for (size_t k = 0; k < n; ++k) to[k] = static_cast<int32_t>(k);
    // Rewritten nodes go to the end; later nodes read them through `to`.
    for (size_t k = 0; k < n; ++k) {
      ScoreNode& node = p_.nodes[k];
      for (int32_t& a : node.arg) a = a >= 0 ? to[a] : -1;
      for (int32_t& i : node.index) i = to[i];
      if (node.type != ScoreType::kFloat) continue;
      if (node.op == ScoreOp::kAdd || node.op == ScoreOp::kSub) {
        const int32_t fused = fuse(static_cast<int32_t>(k));
        if (fused >= 0) to[k] = fused;
      }
    }
    // The rewritten nodes were appended after their users: order them again.
    p_.result = to[p_.result];
    return ordered();
  }

 private:
  bool product(int32_t k) const {
    const ScoreNode& n = p_.nodes[k];
    if (n.type != ScoreType::kFloat) return false;
    return n.op == ScoreOp::kMul ||
           (n.op == ScoreOp::kDiv && p_.nodes[n.arg[1]].op == ScoreOp::kConst);
  }
  int32_t append(ScoreOp op, int32_t a, int32_t b = -1, int32_t c = -1) {
    ScoreNode n{op, ScoreType::kFloat};
    n.arg = {a, b, c};
    p_.nodes.push_back(n);
    return static_cast<int32_t>(p_.nodes.size() - 1);
  }
  // The product's two factors (a division's by a constant: the reciprocal).
  std::pair<int32_t, int32_t> factors(int32_t m) {
    const ScoreNode n = p_.nodes[m];
    if (n.op == ScoreOp::kMul) return {n.arg[0], n.arg[1]};
    ScoreNode r{ScoreOp::kConst, ScoreType::kFloat};
    r.value = 1.0 / p_.nodes[n.arg[1]].value;
    p_.nodes.push_back(r);
    return {n.arg[0], static_cast<int32_t>(p_.nodes.size() - 1)};
  }
  int32_t fma(int32_t m, bool negate_product, int32_t addend) {
    auto [x, y] = factors(m);
    if (negate_product) x = append(ScoreOp::kNeg, x);
    return append(ScoreOp::kFma, x, y, addend);
  }

  int32_t fuse(int32_t k) {
    const ScoreNode n = p_.nodes[k];
    const int32_t a = n.arg[0], b = n.arg[1];
    const bool pa = product(a), pb = product(b);
    if (n.op == ScoreOp::kAdd) {
      // fadd (fmul x, y), z -> fma x, y, z; of two products, the one with fewer uses.
      if (pa && pb && uses_[a] > uses_[b]) return fma(b, false, a);
      if (pa) return fma(a, false, b);
      if (pb) return fma(b, false, a);
      return -1;
    }
    // fsub (fmul x, y), z -> fma x, y, -z; fsub x, (fmul y, z) -> fma -y, z, x.
    if (pa && pb && uses_[a] > uses_[b]) return fma(b, true, a);
    if (pa) return fma(a, false, append(ScoreOp::kNeg, b));
    if (pb) return fma(b, true, a);
    return -1;
  }

  ScoreProgram ordered() {
    ScoreProgram out;
    std::vector<int32_t> to(p_.nodes.size(), -1);
    std::vector<uint8_t> state(p_.nodes.size(), 0);
    // Depth first from the result: every argument placed before its user.
    std::vector<std::pair<int32_t, bool>> stack{{p_.result, false}};
    while (!stack.empty()) {
      const auto [k, children_done] = stack.back();
      stack.pop_back();
      if (state[k] == 2 || (!children_done && state[k] == 1)) continue;
      const ScoreNode& n = p_.nodes[k];
      if (children_done) {
        ScoreNode copy = n;
        for (int32_t& a : copy.arg) a = a >= 0 ? to[a] : -1;
        for (int32_t& i : copy.index) i = to[i];
        to[k] = static_cast<int32_t>(out.nodes.size());
        out.nodes.push_back(std::move(copy));
        state[k] = 2;
        continue;
      }
      state[k] = 1;
      stack.push_back({k, true});
      for (auto it = n.index.rbegin(); it != n.index.rend(); ++it) {
        if (state[*it] == 0) stack.push_back({*it, false});
      }
      for (int j = 2; j >= 0; --j) {
        if (n.arg[j] >= 0 && state[n.arg[j]] == 0) stack.push_back({n.arg[j], false});
      }
    }
    out.result = to[p_.result];
    return out;
  }

  ScoreProgram p_;
  std::vector<int32_t> uses_;
};

}  // namespace

ScoreProgram contracted(const ScoreProgram& p) {
  const ScoreProgram m = pruned(merged(p));
  return Contraction(m).run();
}

}  // namespace simprec::attention
