#include "plugins/host/kind_shapes.hpp"

#include <cctype>
#include <map>
#include <stdexcept>
#include <string_view>

namespace simprec::plugins {
namespace {

struct KindOperand {
  const char* name;
  std::vector<std::string> letters;
};

// Inputs first: a letter is bound by the inputs before an output is held against it.
const std::vector<KindOperand>& kind_operands(KernelKind kind) {
  static const std::vector<KindOperand> matmul = {
      {"A", {"M", "K"}}, {"B", {"K", "N"}}, {"C", {"M", "N"}}, {"D", {"M", "N"}}};
  static const std::vector<KindOperand> forward = {{"Q", {"B", "H", "Sq", "D"}},
                                                   {"K", {"B", "Hk", "Sk", "D"}},
                                                   {"V", {"B", "Hk", "Sk", "Dv"}},
                                                   {"O", {"B", "H", "Sq", "Dv"}},
                                                   {"LSE", {"B", "H", "Sq"}}};
  static const std::vector<KindOperand> backward = {
      {"Q", {"B", "H", "Sq", "D"}},   {"K", {"B", "Hk", "Sk", "D"}},
      {"V", {"B", "Hk", "Sk", "Dv"}}, {"O", {"B", "H", "Sq", "Dv"}},
      {"dO", {"B", "H", "Sq", "Dv"}}, {"LSE", {"B", "H", "Sq"}},
      {"dQ", {"B", "H", "Sq", "D"}},  {"dK", {"B", "Hk", "Sk", "D"}},
      {"dV", {"B", "Hk", "Sk", "Dv"}}};
  static const std::vector<KindOperand> function = {{"x", {"N"}}, {"d", {"N"}}, {"y", {"N"}}};
  switch (kind) {
    case KernelKind::kMatmul:
      return matmul;
    case KernelKind::kAttentionForward:
      return forward;
    case KernelKind::kAttentionBackward:
      return backward;
    case KernelKind::kFunction:
      return function;
  }
  static const std::vector<KindOperand> none;
  return none;
}

std::string bracketed(const std::vector<std::string>& items) {
  std::string text = "[";
  for (size_t i = 0; i < items.size(); ++i) text += (i ? "," : "") + items[i];
  return text + "]";
}

bool is_integer(std::string_view s) {
  return !s.empty() && std::isdigit(static_cast<unsigned char>(s[0]));
}

// "a matmul kernel's D is [M,N]", "an attention-forward kernel's O is [B,H,Sq,Dv]".
std::string kind_shape_text(KernelKind kind, const KindOperand& ko) {
  const std::string name = kernel_kind_name(kind);
  return (name[0] == 'a' ? "an " : "a ") + name + " kernel's " + ko.name + " is " +
         bracketed(ko.letters);
}

std::string operand_text(const OperandInfo& o) {
  return std::string(o.is_output ? "output '" : "input '") + o.name + "'";
}

// Where a letter was first seen, and as what.
template <class Dimension>
struct Binding {
  Dimension value;
  std::string operand;  // "input 'B'"
  size_t position;      // 1-based
};

}  // namespace

std::string declared_shape_problem(const KernelInfo& kernel) {
  std::map<std::string, Binding<std::string>> bound;
  for (const KindOperand& ko : kind_operands(kernel.kind)) {
    const OperandInfo* o = kernel.operand(ko.name);
    if (!o) continue;
    const std::string kind_shape = kind_shape_text(kernel.kind, ko);
    if (o->shape.size() != ko.letters.size()) {
      return operand_text(*o) + " is declared " + bracketed(o->shape) + ", but " + kind_shape;
    }
    for (size_t i = 0; i < ko.letters.size(); ++i) {
      const std::string& declared = o->shape[i];
      const auto [it, inserted] =
          bound.emplace(ko.letters[i], Binding<std::string>{declared, operand_text(*o), i + 1});
      const std::string& first = it->second.value;
      // A symbol and a size may agree at run time; check_kind_shapes decides those.
      if (inserted || first == declared || is_integer(first) != is_integer(declared)) continue;
      return operand_text(*o) + " is declared " + bracketed(o->shape) + ", but " + kind_shape +
             ": its dimension " + std::to_string(i + 1) + " is " + ko.letters[i] + ", which " +
             it->second.operand + " declares as '" + first + "', not '" + declared + "'";
    }
  }
  return "";
}

void check_kind_shapes(const KernelInfo& kernel, const std::vector<HostTensor>& inputs,
                       const std::vector<HostTensor>& outputs) {
  const auto find = [&](const std::string& name) -> const HostTensor* {
    for (const auto* list : {&inputs, &outputs}) {
      for (const auto& t : *list) {
        if (t.name == name) return &t;
      }
    }
    return nullptr;
  };
  std::map<std::string, Binding<int64_t>> bound;
  for (const KindOperand& ko : kind_operands(kernel.kind)) {
    const HostTensor* t = find(ko.name);
    if (!t) continue;
    const OperandInfo* o = kernel.operand(ko.name);
    const std::string which = o ? operand_text(*o) : "operand '" + std::string(ko.name) + "'";
    const std::string kind_shape = kind_shape_text(kernel.kind, ko);
    if (t->shape.size() != ko.letters.size()) {
      throw std::invalid_argument("kernel '" + kernel.name + "': " + which + " has shape " +
                                  shape_text(t->shape) + ", but " + kind_shape);
    }
    for (size_t i = 0; i < ko.letters.size(); ++i) {
      const auto [it, inserted] =
          bound.emplace(ko.letters[i], Binding<int64_t>{t->shape[i], which, i + 1});
      if (inserted || it->second.value == t->shape[i]) continue;
      throw std::invalid_argument(
          "kernel '" + kernel.name + "': " + which + " has shape " + shape_text(t->shape) +
          " (from its declaration " + (o ? bracketed(o->shape) : std::string("?")) + "), but " +
          kind_shape + ": " + ko.letters[i] + " is " + std::to_string(it->second.value) + " in " +
          it->second.operand + " (dimension " + std::to_string(it->second.position) + "), not " +
          std::to_string(t->shape[i]));
    }
  }
}

}  // namespace simprec::plugins
