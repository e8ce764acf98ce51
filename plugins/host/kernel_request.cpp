#include "plugins/host/kernel_request.hpp"

#include <algorithm>
#include <cctype>
#include <set>
#include <stdexcept>

#include "emulation/format.hpp"
#include "plugins/host/kind_shapes.hpp"

namespace simprec::plugins {
namespace {

bool is_integer(const std::string& s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

std::string join(const std::vector<std::string>& items) {
  std::string text;
  for (const auto& s : items) text += (text.empty() ? "" : ",") + s;
  return text;
}

std::string shape_pattern(const OperandInfo& o) {
  return std::string("[") + join(o.shape) + "]";
}

std::string canonical_format(const std::string& name) {
  try {
    return parse_format(name).name();
  } catch (const std::invalid_argument&) {
    return name;
  }
}

void check_dimension(const KernelInfo& kernel, const std::string& symbol, int64_t value) {
  const DimensionInfo* d = kernel.dimension(symbol);
  const int64_t min = d ? d->min : 1;
  if (value < min) {
    throw std::invalid_argument("kernel '" + kernel.name + "': " + symbol + " = " +
                                std::to_string(value) + " is below the smallest accepted " +
                                std::to_string(min));
  }
  if (d && d->max != 0 && value > d->max) {
    throw std::invalid_argument("kernel '" + kernel.name + "': " + symbol + " = " +
                                std::to_string(value) + " is above the largest accepted " +
                                std::to_string(d->max));
  }
  if (d && value % d->multiple_of != 0) {
    throw std::invalid_argument("kernel '" + kernel.name + "': " + symbol + " = " +
                                std::to_string(value) + " is not a multiple of " +
                                std::to_string(d->multiple_of));
  }
}

void check_format(const KernelInfo& kernel, const OperandInfo& o, const std::string& format) {
  if (std::find(o.formats.begin(), o.formats.end(), canonical_format(format)) == o.formats.end()) {
    throw std::invalid_argument("kernel '" + kernel.name + "': operand '" + o.name +
                                "' in format '" + format +
                                "' is not accepted; accepted formats: " + join(o.formats));
  }
}

void check_parameters(const KernelInfo& kernel, const std::vector<NamedValue>& parameters) {
  std::set<std::string> given;
  for (const auto& p : parameters) {
    const ParameterInfo* spec = kernel.parameter(p.name);
    if (!spec) {
      std::vector<std::string> names;
      for (const auto& q : kernel.parameters) names.push_back(q.name);
      throw std::invalid_argument("kernel '" + kernel.name + "' has no parameter '" + p.name +
                                  "'; its parameters: " + (names.empty() ? "none" : join(names)));
    }
    if (type_of(p.value) != spec->type) {
      throw std::invalid_argument("kernel '" + kernel.name + "': parameter '" + p.name + "' is " +
                                  value_type_name(spec->type) + ", given a " +
                                  value_type_name(type_of(p.value)));
    }
    if (!given.insert(p.name).second) {
      throw std::invalid_argument("kernel '" + kernel.name + "': parameter '" + p.name +
                                  "' given twice");
    }
  }
  for (const auto& spec : kernel.parameters) {
    if (spec.required && !given.count(spec.name)) {
      throw std::invalid_argument("kernel '" + kernel.name + "' needs parameter '" + spec.name +
                                  "' (" + value_type_name(spec.type) + ")");
    }
  }
}

}  // namespace

std::map<std::string, int64_t> bind_shape_symbols(const KernelInfo& kernel,
                                                  const std::vector<HostTensor>& inputs) {
  std::map<std::string, int64_t> bound;
  std::map<std::string, std::string> bound_by;  // for the message when two inputs disagree
  for (const auto& t : inputs) {
    const OperandInfo* o = kernel.operand(t.name);
    if (!o || o->is_output) {
      throw std::invalid_argument("kernel '" + kernel.name + "' has no input '" + t.name + "'");
    }
    if (t.shape.size() != o->shape.size()) {
      throw std::invalid_argument("kernel '" + kernel.name + "': input '" + t.name +
                                  "' has shape " + shape_text(t.shape) + ", expected " +
                                  shape_pattern(*o));
    }
    for (size_t i = 0; i < t.shape.size(); ++i) {
      const std::string& dim = o->shape[i];
      if (is_integer(dim)) {
        if (t.shape[i] != std::stoll(dim)) {
          throw std::invalid_argument("kernel '" + kernel.name + "': input '" + t.name +
                                      "' has shape " + shape_text(t.shape) + ", expected " +
                                      shape_pattern(*o));
        }
        continue;
      }
      const auto [it, inserted] = bound.emplace(dim, t.shape[i]);
      if (inserted) {
        bound_by[dim] = t.name;
      } else if (it->second != t.shape[i]) {
        throw std::invalid_argument("kernel '" + kernel.name + "': " + dim + " is " +
                                    std::to_string(it->second) + " in '" + bound_by[dim] +
                                    "' but " + std::to_string(t.shape[i]) + " in '" + t.name + "'");
      }
    }
  }
  for (const auto& [symbol, value] : bound) check_dimension(kernel, symbol, value);
  return bound;
}

std::vector<HostTensor> prepare_outputs(const KernelInfo& kernel, const KernelRequest& request) {
  std::set<std::string> given;
  for (const auto& t : request.inputs) {
    if (!given.insert(t.name).second) {
      throw std::invalid_argument("kernel '" + kernel.name + "': input '" + t.name +
                                  "' given twice");
    }
    const OperandInfo* o = kernel.operand(t.name);
    if (o && !o->is_output) check_format(kernel, *o, t.format);
    if (t.bytes.size() !=
        static_cast<size_t>(t.element_count()) * storage_for_format(t.format).bytes) {
      throw std::invalid_argument("input '" + t.name + "': " + std::to_string(t.bytes.size()) +
                                  " bytes do not hold " + shape_text(t.shape) + " " + t.format +
                                  " values");
    }
  }
  const auto bound = bind_shape_symbols(kernel, request.inputs);
  for (const auto& o : kernel.operands) {
    if (!o.is_output && !o.optional && !given.count(o.name)) {
      throw std::invalid_argument("kernel '" + kernel.name + "' needs input '" + o.name + "' " +
                                  shape_pattern(o));
    }
  }
  for (const auto& [name, format] : request.output_formats) {
    const OperandInfo* o = kernel.operand(name);
    if (!o || !o->is_output) {
      throw std::invalid_argument("kernel '" + kernel.name + "' has no output '" + name + "'");
    }
    check_format(kernel, *o, format);
  }
  check_parameters(kernel, request.parameters);

  std::vector<HostTensor> outputs;
  for (const auto& o : kernel.operands) {
    if (!o.is_output) continue;
    std::vector<int64_t> shape;
    for (const auto& dim : o.shape)
      shape.push_back(is_integer(dim) ? std::stoll(dim) : bound.at(dim));
    const auto chosen = request.output_formats.find(o.name);
    const std::string format = chosen != request.output_formats.end()
                                   ? canonical_format(chosen->second)
                                   : o.formats.front();
    outputs.push_back(HostTensor::zeros(o.name, format, shape));
  }
  // What the declaration alone could not show (a fixed size where the kind has a symbol).
  check_kind_shapes(kernel, request.inputs, outputs);
  return outputs;
}

}  // namespace simprec::plugins
