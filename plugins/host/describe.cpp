#include "plugins/host/describe.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <set>

#include <nlohmann/json.hpp>

#include "emulation/format.hpp"
#include "plugins/host/kind_shapes.hpp"
#include "plugins/host/plugin_error.hpp"
#include "plugins/host/plugin_text.hpp"

namespace simprec::plugins {
namespace {

// The sizes of ABI 1.0's structs, named by their last 1.0 field: the least any 1.x plugin
// sends. They stay as they are when later minor versions append fields.
constexpr size_t kPluginSize_1_0 = SIMPREC_STRUCT_SIZE(SimprecPlugin, shutdown);
constexpr size_t kKernelSize_1_0 = SIMPREC_STRUCT_SIZE(SimprecKernel, run);
constexpr size_t kOperandSize_1_0 = SIMPREC_STRUCT_SIZE(SimprecOperandSpec, shape);
constexpr size_t kDimensionSize_1_0 = SIMPREC_STRUCT_SIZE(SimprecDimensionSpec, multiple_of);
constexpr size_t kParameterSize_1_0 = SIMPREC_STRUCT_SIZE(SimprecParameterSpec, description);
constexpr size_t kNamedValueSize_1_0 = SIMPREC_STRUCT_SIZE(SimprecNamedValue, int64_value);

// A refusal, with the place in the description where it was found.
struct Refusal {
  std::string where;
  [[noreturn]] void fail(const std::string& what) const { throw PluginError(where + ": " + what); }
};

template <class T>
void check_struct_size(const T* item, size_t minimum, const char* type_name, const Refusal& at) {
  if (item == nullptr) at.fail(std::string("null ") + type_name + " pointer");
  if (item->struct_size < minimum) {
    at.fail(std::string(type_name) + ".struct_size is " + std::to_string(item->struct_size) +
            ", smaller than the " + std::to_string(minimum) + " bytes of ABI 1.0");
  }
}

// Text travels as JSON from the runner to the host and into `plugins list --json`, which
// needs UTF-8; nlohmann::json's own check says what it would refuse.
std::string utf8_text(const char* text, const char* field, const Refusal& at) {
  try {
    (void)nlohmann::json(text).dump();
  } catch (const nlohmann::json::type_error&) {
    at.fail(std::string(field) + " is not valid UTF-8");
  }
  return text;
}

// Free text (descriptions): any UTF-8; `plugins list` shows control characters escaped.
std::string optional_text(const char* text, const char* field, const Refusal& at) {
  return text == nullptr ? "" : utf8_text(text, field, at);
}

// Text printed as a field of one record of `plugins list` (a version, a model, a value): a
// control character, a newline above all, would end the record and start a forged one.
std::string field_text(const char* text, const char* field, const Refusal& at) {
  std::string value = utf8_text(text, field, at);
  if (const auto at_byte = first_control_character(value)) {
    at.fail(std::string(field) + " '" + one_line_text(value) + "' holds a control character (at " +
            "byte " + std::to_string(*at_byte) + "); names and values are printed one per line");
  }
  return value;
}

std::string required_text(const char* text, const char* field, const Refusal& at) {
  if (text == nullptr || *text == '\0') at.fail(std::string("no ") + field);
  return field_text(text, field, at);
}

std::string optional_field_text(const char* text, const char* field, const Refusal& at) {
  return text == nullptr ? "" : field_text(text, field, at);
}

// A name (of the plugin, a kernel, an operand, a parameter, an attribute, a shape symbol):
// besides the above, no spaces, which would blur the key=value fields of its record.
std::string required_name(const char* text, const char* field, const Refusal& at) {
  std::string name = required_text(text, field, at);
  if (name.find(' ') != std::string::npos)
    at.fail(std::string(field) + " '" + name + "' holds a space");
  return name;
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    std::string item = text.substr(start, comma - start);
    item.erase(
        std::remove_if(item.begin(), item.end(), [](unsigned char c) { return std::isspace(c); }),
        item.end());
    items.push_back(item);
    start = comma + 1;
  }
  return items;
}

bool is_symbol(const std::string& s) {
  return !s.empty() && (std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_') &&
         std::all_of(s.begin(), s.end(),
                     [](unsigned char c) { return std::isalnum(c) || c == '_'; });
}
bool is_integer(const std::string& s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

Value read_value(const SimprecNamedValue* v, ValueType type, const Refusal& at) {
  switch (type) {
    case ValueType::kInt64:
      return static_cast<int64_t>(v->int64_value);
    case ValueType::kFloat64:
      return v->float64_value;
    case ValueType::kString:
      return required_text(v->string_value, "string value", at);
    case ValueType::kBool:
      return v->int64_value != 0;
  }
  at.fail("unknown value type");
}

NamedValue read_named_value(const SimprecNamedValue* v, const Refusal& at) {
  check_struct_size(v, kNamedValueSize_1_0, "SimprecNamedValue", at);
  NamedValue out;
  out.name = required_name(v->name, "name", at);
  const auto type = value_type_from_code(v->type);
  if (!type) at.fail("'" + out.name + "' has unknown value type " + std::to_string(v->type));
  out.value = read_value(v, *type, {at.where + " '" + out.name + "'"});
  return out;
}

OperandInfo read_operand(const SimprecOperandSpec* o, const Refusal& at) {
  check_struct_size(o, kOperandSize_1_0, "SimprecOperandSpec", at);
  OperandInfo out;
  out.name = required_name(o->name, "name", at);
  const Refusal here{at.where + " '" + out.name + "'"};
  if (o->direction != SIMPREC_OPERAND_INPUT && o->direction != SIMPREC_OPERAND_OUTPUT) {
    here.fail("unknown direction " + std::to_string(o->direction));
  }
  out.is_output = o->direction == SIMPREC_OPERAND_OUTPUT;
  out.optional = (o->flags & SIMPREC_OPERAND_FLAG_OPTIONAL) != 0;
  for (const auto& name : split_list(required_text(o->formats, "formats", here))) {
    try {
      out.formats.push_back(parse_format(name).name());
    } catch (const std::invalid_argument& e) {
      here.fail(std::string("format: ") + e.what());
    }
  }
  for (const auto& dim : split_list(required_text(o->shape, "shape", here))) {
    if (!is_symbol(dim) && !is_integer(dim)) {
      here.fail("shape dimension '" + dim + "' is neither a symbol nor an integer");
    }
    // Fixed sizes are read back with stoll by the host: bound them here.
    if (is_integer(dim) &&
        (dim.size() > 10 || std::stoll(dim) < 1 || std::stoll(dim) > INT32_MAX)) {
      here.fail("shape dimension '" + dim + "' is not in [1, 2147483647]");
    }
    out.shape.push_back(dim);
  }
  return out;
}

DimensionInfo read_dimension(const SimprecDimensionSpec* d, const Refusal& at) {
  check_struct_size(d, kDimensionSize_1_0, "SimprecDimensionSpec", at);
  DimensionInfo out{required_name(d->symbol, "symbol", at), d->min, d->max, d->multiple_of};
  const Refusal here{at.where + " '" + out.symbol + "'"};
  if (out.min < 1) here.fail("min " + std::to_string(out.min) + " is below 1");
  if (out.max != 0 && out.max < out.min) here.fail("max is below min");
  if (out.multiple_of < 1)
    here.fail("multiple_of " + std::to_string(out.multiple_of) + " is below 1");
  return out;
}

ParameterInfo read_parameter(const SimprecParameterSpec* p, const Refusal& at) {
  check_struct_size(p, kParameterSize_1_0, "SimprecParameterSpec", at);
  ParameterInfo out;
  out.name = required_name(p->name, "name", at);
  const auto type = value_type_from_code(p->type);
  if (!type) at.fail("'" + out.name + "' has unknown value type " + std::to_string(p->type));
  out.type = *type;
  out.required = p->required != 0;
  out.default_value = optional_field_text(p->default_value, "default value", at);
  out.description = optional_text(p->description, "description", at);
  return out;
}

template <class Spec, class Read>
auto read_array(size_t count, const Spec* const* items, const std::string& what, const Refusal& at,
                Read read) {
  std::vector<decltype(read(items[0], at))> out;
  if (count > 0 && items == nullptr)
    at.fail(std::to_string(count) + " " + what + "s but a null array");
  for (size_t i = 0; i < count; ++i) {
    out.push_back(read(items[i], {at.where + ": " + what + " #" + std::to_string(i)}));
  }
  return out;
}

// The operands a kind cannot do without (the optional ones may be left out).
std::vector<std::string> required_operands(KernelKind kind) {
  switch (kind) {
    case KernelKind::kMatmul:
      return {"A", "B", "D"};
    case KernelKind::kAttentionForward:
      return {"Q", "K", "V", "O"};
    case KernelKind::kAttentionBackward:
      return {"Q", "K", "V", "O", "dO", "dQ", "dK", "dV"};
    case KernelKind::kFunction:
      return {"x", "y"};
  }
  return {};
}

// The attributes the host reads for each kind (simprec_plugin.h lists them); any other name is
// refused, so that a typo cannot silently leave a fact out of the emulation.
std::vector<std::string> known_attributes(KernelKind kind) {
  switch (kind) {
    case KernelKind::kMatmul:
      return {"accumulator_format"};
    case KernelKind::kAttentionForward:
    case KernelKind::kAttentionBackward:
      return {"format",       "output_format", "block_rows",    "block_cols",   "exp2_function",
              "exp_function", "log_function",  "log2_function", "rcp_function", "div_function"};
    case KernelKind::kFunction:
      return {"function"};
  }
  return {};
}

void check_consistency(const KernelInfo& k, const Refusal& at) {
  const std::vector<std::string> known = known_attributes(k.kind);
  std::set<std::string> attribute_names;
  for (const auto& a : k.attributes) {
    // "info." attributes are notes for people reading `simprec plugins list`; the host reads
    // none of them.
    const bool note = a.name.rfind("info.", 0) == 0 && a.name.size() > 5;
    if (!note && std::find(known.begin(), known.end(), a.name) == known.end()) {
      std::string list;
      for (const auto& n : known) list += (list.empty() ? "" : ", ") + n;
      at.fail("attribute '" + a.name + "' is not one the host reads for " +
              kernel_kind_name(k.kind) + " kernels (known: " + list +
              "; notes for readers are named info.NAME)");
    }
    if (!attribute_names.insert(a.name).second)
      at.fail("attribute '" + a.name + "' declared twice");
  }
  std::set<std::string> names;
  std::set<std::string> input_symbols;
  for (const auto& o : k.operands) {
    if (!names.insert(o.name).second) at.fail("operand '" + o.name + "' declared twice");
    if (!o.is_output) {
      for (const auto& d : o.shape) {
        if (is_symbol(d)) input_symbols.insert(d);
      }
    }
  }
  for (const auto& needed : required_operands(k.kind)) {
    if (!k.operand(needed)) {
      at.fail(kernel_kind_name(k.kind) + " kernels need an operand '" + needed + "'");
    }
  }
  // The host allocates outputs, so every output dimension must be known from the inputs.
  for (const auto& o : k.operands) {
    if (!o.is_output) continue;
    for (const auto& d : o.shape) {
      if (is_symbol(d) && !input_symbols.count(d)) {
        at.fail("output '" + o.name + "' has dimension '" + d + "' that no input determines");
      }
    }
  }
  std::set<std::string> parameter_names;
  for (const auto& p : k.parameters) {
    if (!parameter_names.insert(p.name).second)
      at.fail("parameter '" + p.name + "' declared twice");
  }
  // The host's emulation reads and writes the kind's shapes (kind_shapes.hpp).
  if (const std::string problem = declared_shape_problem(k); !problem.empty()) at.fail(problem);
}

KernelInfo read_kernel(const SimprecKernel* k, const Refusal& at) {
  check_struct_size(k, kKernelSize_1_0, "SimprecKernel", at);
  KernelInfo out;
  out.name = required_name(k->name, "name", at);
  const Refusal here{at.where + " '" + out.name + "'"};
  const auto kind = kernel_kind_from_code(k->kind);
  if (!kind) here.fail("unknown kernel kind " + std::to_string(k->kind));
  out.kind = *kind;
  out.bit_exact = (k->flags & SIMPREC_KERNEL_FLAG_BIT_EXACT) != 0;
  out.description = optional_text(k->description, "description", here);
  out.emulation_model = optional_field_text(k->emulation_model, "emulation model", here);
  if (out.bit_exact && out.emulation_model.empty())
    here.fail("claims bit-exactness but names no emulation model");
  if (k->run == nullptr) here.fail("no run function");
  out.operands = read_array(k->operand_count, k->operands, "operand", here, read_operand);
  out.dimensions = read_array(k->dimension_count, k->dimensions, "dimension", here, read_dimension);
  out.parameters = read_array(k->parameter_count, k->parameters, "parameter", here, read_parameter);
  out.attributes =
      read_array(k->attribute_count, k->attributes, "attribute", here, read_named_value);
  check_consistency(out, here);
  return out;
}

}  // namespace

PluginInfo describe_plugin(const SimprecPlugin* plugin, const std::string& path) {
  const Refusal at{"plugin " + path};
  if (plugin == nullptr) at.fail("the entry function returned no description");
  // struct_size and the version come first and are read before anything else.
  if (plugin->struct_size < offsetof(SimprecPlugin, name)) {
    at.fail("SimprecPlugin.struct_size is " + std::to_string(plugin->struct_size) +
            ", too small to hold a version");
  }
  if (plugin->abi_major != SIMPREC_PLUGIN_ABI_MAJOR) {
    at.fail("speaks plugin ABI " + std::to_string(plugin->abi_major) + "." +
            std::to_string(plugin->abi_minor) + ", this host speaks " +
            std::to_string(SIMPREC_PLUGIN_ABI_MAJOR) + "." +
            std::to_string(SIMPREC_PLUGIN_ABI_MINOR) + " (major versions must agree)");
  }
  check_struct_size(plugin, kPluginSize_1_0, "SimprecPlugin", at);
  PluginInfo out;
  out.path = path;
  out.abi_major = plugin->abi_major;
  out.abi_minor = plugin->abi_minor;
  out.name = required_name(plugin->name, "name", at);
  out.version = required_text(plugin->version, "version", at);
  out.description = optional_text(plugin->description, "description", at);
  out.kernels = read_array(plugin->kernel_count, plugin->kernels, "kernel", at, read_kernel);
  std::set<std::string> names;
  for (const auto& k : out.kernels) {
    if (!names.insert(k.name).second) at.fail("kernel '" + k.name + "' declared twice");
  }
  return out;
}

}  // namespace simprec::plugins
