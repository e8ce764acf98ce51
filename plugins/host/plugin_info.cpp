#include "plugins/host/plugin_info.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "emulation/excerpt.hpp"
#include "plugins/host/plugin_error.hpp"

namespace simprec::plugins {
namespace {

template <class T>
const T* find_named(const std::vector<T>& items, std::string_view name) {
  for (const auto& item : items) {
    if (item.name == name) return &item;
  }
  return nullptr;
}

}  // namespace

std::string kernel_kind_name(KernelKind kind) {
  switch (kind) {
    case KernelKind::kMatmul:
      return "matmul";
    case KernelKind::kAttentionForward:
      return "attention-forward";
    case KernelKind::kAttentionBackward:
      return "attention-backward";
    case KernelKind::kFunction:
      return "function";
  }
  return "unknown";
}

std::optional<KernelKind> kernel_kind_from_code(uint32_t code) {
  if (code >= 1 && code <= 4) return static_cast<KernelKind>(code);
  return std::nullopt;
}

std::optional<KernelKind> kernel_kind_from_name(std::string_view name) {
  for (uint32_t code = 1; code <= 4; ++code) {
    if (kernel_kind_name(static_cast<KernelKind>(code)) == name)
      return static_cast<KernelKind>(code);
  }
  return std::nullopt;
}

std::string value_type_name(ValueType type) {
  switch (type) {
    case ValueType::kInt64:
      return "int64";
    case ValueType::kFloat64:
      return "float64";
    case ValueType::kString:
      return "string";
    case ValueType::kBool:
      return "bool";
  }
  return "unknown";
}

std::optional<ValueType> value_type_from_code(uint32_t code) {
  if (code >= 1 && code <= 4) return static_cast<ValueType>(code);
  return std::nullopt;
}

std::optional<ValueType> value_type_from_name(std::string_view name) {
  for (uint32_t code = 1; code <= 4; ++code) {
    if (value_type_name(static_cast<ValueType>(code)) == name) return static_cast<ValueType>(code);
  }
  return std::nullopt;
}

ValueType type_of(const Value& value) {
  switch (value.index()) {
    case 0:
      return ValueType::kInt64;
    case 1:
      return ValueType::kFloat64;
    case 2:
      return ValueType::kString;
    default:
      return ValueType::kBool;
  }
}

std::string value_text(const Value& value) {
  if (const auto* i = std::get_if<int64_t>(&value)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&value)) {
    // Shortest text that reads back to the same double.
    char buffer[64];
    const auto result = std::to_chars(buffer, buffer + sizeof buffer, *d);
    return std::string(buffer, result.ptr);
  }
  if (const auto* s = std::get_if<std::string>(&value)) return *s;
  return std::get<bool>(value) ? "true" : "false";
}

Value parse_value(ValueType type, std::string_view text) {
  const auto fail = [&] {
    return std::invalid_argument(std::string("'") + std::string(text) + "' is not a " +
                                 value_type_name(type) + " value");
  };
  switch (type) {
    case ValueType::kInt64: {
      int64_t v = 0;
      const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
      if (r.ec != std::errc() || r.ptr != text.data() + text.size()) throw fail();
      return v;
    }
    case ValueType::kFloat64: {
      // strtod accepts hex floats and inf/nan as well as decimal text.
      const std::string s(text);
      char* end = nullptr;
      const double v = std::strtod(s.c_str(), &end);
      if (s.empty() || end != s.c_str() + s.size()) throw fail();
      return v;
    }
    case ValueType::kString:
      return std::string(text);
    case ValueType::kBool:
      if (text == "true" || text == "1") return true;
      if (text == "false" || text == "0") return false;
      throw fail();
  }
  throw fail();
}

const OperandInfo* KernelInfo::operand(std::string_view wanted) const {
  return find_named(operands, wanted);
}
const ParameterInfo* KernelInfo::parameter(std::string_view wanted) const {
  return find_named(parameters, wanted);
}
const NamedValue* KernelInfo::attribute(std::string_view wanted) const {
  return find_named(attributes, wanted);
}
const DimensionInfo* KernelInfo::dimension(std::string_view symbol) const {
  for (const auto& d : dimensions) {
    if (d.symbol == symbol) return &d;
  }
  return nullptr;
}

const KernelInfo& PluginInfo::kernel(std::string_view wanted) const {
  if (const auto* k = find_named(kernels, wanted)) return *k;
  std::string names;
  for (const auto& k : kernels) names += (names.empty() ? "" : ", ") + k.name;
  throw PluginError("plugin '" + name + "' (" + path + ") has no kernel '" + excerpt(wanted) +
                    "'; it offers: " + (names.empty() ? "none" : names));
}

}  // namespace simprec::plugins
