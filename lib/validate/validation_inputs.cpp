#include "lib/validate/validation_inputs.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <span>
#include <stdexcept>

#include "emulation/excerpt.hpp"
#include "emulation/random.hpp"
#include "emulation/round.hpp"
#include "lib/inputs/generators.hpp"
#include "lib/limits/checked_arithmetic.hpp"
#include "lib/limits/memory_bound.hpp"
#include "lib/npy/npy.hpp"
#include "lib/validate/attention_emulation.hpp"
#include "lib/validate/tensor_values.hpp"

namespace simprec::validate {
namespace {

using plugins::HostTensor;
using plugins::KernelInfo;
using plugins::OperandInfo;

bool is_integer(const std::string& s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

// A uniform double in [0, 1) with 53 random bits, from two consecutive 32-bit draws.
double uniform_unit(const RandomStream& stream, uint64_t index) {
  const uint64_t high = random_bits(stream, 2 * index), low = random_bits(stream, 2 * index + 1);
  return static_cast<double>(((high << 32) | low) >> 11) * 0x1p-53;
}

HostTensor generate_input(const OperandInfo& operand, const std::string& format,
                          std::vector<int64_t> shape, const InputChoices& choices,
                          uint64_t stream_index) {
  HostTensor t = HostTensor::zeros(operand.name, parse_format(format).name(), std::move(shape));
  RoundingContext nearest(parse_format(format));
  const RandomStream stream{choices.seed, stream_index};
  for (int64_t i = 0; i < t.element_count(); ++i) {
    const double x =
        choices.low + (choices.high - choices.low) * uniform_unit(stream, static_cast<uint64_t>(i));
    set_value(t, i, nearest.round_value(x));
  }
  return t;
}

std::string inferred_format(const OperandInfo& operand, size_t storage_bytes, bool is_float) {
  std::vector<std::string> matching;
  for (const auto& f : operand.formats) {
    const auto storage = plugins::storage_for_format(f);
    if (storage.bytes == storage_bytes && (storage.dtype.code == kDLFloat) == is_float)
      matching.push_back(f);
  }
  // fp32 storage is shared by fp32 and tf32; plain fp32 is the natural reading of a float32 file.
  if (std::find(matching.begin(), matching.end(), "fp32") != matching.end()) return "fp32";
  if (matching.size() == 1) return matching.front();
  std::string accepted;
  for (const auto& f : operand.formats) accepted += (accepted.empty() ? "" : ",") + f;
  throw std::invalid_argument("input '" + operand.name +
                              "': cannot tell the format of the file's values among " + accepted +
                              "; pass --format " + operand.name + "=FORMAT");
}

bool is_attention(const KernelInfo& kernel) {
  return kernel.kind == plugins::KernelKind::kAttentionForward ||
         kernel.kind == plugins::KernelKind::kAttentionBackward;
}

// Q, K, V (and dO of a backward kernel) from choices.generator, those not read from files.
// The sizes of Q's symbols B, H, Sq, D are taken from `sizes` or defaulted into it; K's and
// V's sequence symbol defaults to Sq, V's last is bound to D.
void add_generated_attention_inputs(const KernelInfo& kernel, const InputChoices& choices,
                                    std::map<std::string, int64_t>& sizes,
                                    std::vector<HostTensor>& inputs) {
  const std::string what = "--generate " + choices.generator;
  if (!is_attention(kernel)) {
    throw std::invalid_argument(what + " makes attention inputs; kernel '" + kernel.name +
                                "' is a " + plugins::kernel_kind_name(kernel.kind) + " kernel");
  }
  const OperandInfo* q = kernel.operand("Q");
  const OperandInfo* k = kernel.operand("K");
  const OperandInfo* v = kernel.operand("V");
  if (!q || !k || !v || q->shape.size() != 4 || k->shape.size() != 4 || v->shape.size() != 4) {
    throw std::invalid_argument(what + ": kernel '" + kernel.name +
                                "' does not declare Q, K, V of rank 4");
  }
  const auto size_of = [&](const std::string& symbol) {
    if (is_integer(symbol)) return static_cast<int64_t>(std::stoll(symbol));
    return sizes.emplace(symbol, default_dimension(kernel, symbol)).first->second;
  };
  const int64_t b = size_of(q->shape[0]), h = size_of(q->shape[1]), n = size_of(q->shape[2]),
                d = size_of(q->shape[3]);
  const auto bind = [&](const std::string& symbol, int64_t value, const std::string& rule) {
    const int64_t bound =
        is_integer(symbol) ? std::stoll(symbol) : sizes.emplace(symbol, value).first->second;
    if (bound != value) {
      throw std::invalid_argument(what + " makes " + rule + ", but " + symbol + " is " +
                                  std::to_string(bound) + " and the other " +
                                  std::to_string(value));
    }
  };
  bind(k->shape[0], b, "one batch");
  bind(v->shape[0], b, "one batch");
  bind(k->shape[1], h, "K and V with Q's heads");
  bind(v->shape[1], h, "K and V with Q's heads");
  // The key length defaults to the query length; a kernel whose K has a length of its own
  // (Sk) may be given another with --dim.
  const int64_t nk = is_integer(k->shape[2]) ? std::stoll(k->shape[2])
                                             : sizes.emplace(k->shape[2], n).first->second;
  bind(v->shape[2], nk, "V with K's length");
  bind(k->shape[3], d, "K with Q's head dimension");
  bind(v->shape[3], d, "Dv = D");
  const bool backward = kernel.kind == plugins::KernelKind::kAttentionBackward;
  const attention::AttentionInputs g =
      inputs::generate(choices.generator, {b, h, n, nk, d, d}, choices.seed, backward);
  const std::pair<const char*, const std::vector<double>*> tensors[] = {
      {"Q", &g.q}, {"K", &g.k}, {"V", &g.v}, {"dO", &g.d_out}};
  for (const auto& [name, values] : tensors) {
    const OperandInfo* o = kernel.operand(name);
    if (!o || o->is_output || values->empty() || choices.files.count(name) ||
        choices.omitted.count(name)) {
      continue;
    }
    const auto format = choices.formats.find(name);
    const int64_t rows = values == &g.k || values == &g.v ? nk : n;
    HostTensor t = HostTensor::zeros(
        name,
        parse_format(format == choices.formats.end() ? o->formats.front() : format->second).name(),
        {b, h, rows, d});
    RoundingContext nearest(parse_format(t.format));
    for (int64_t i = 0; i < t.element_count(); ++i)
      set_value(t, i, nearest.round_value((*values)[static_cast<size_t>(i)]));
    inputs.push_back(std::move(t));
  }
}

}  // namespace

int64_t default_dimension(const KernelInfo& kernel, const std::string& symbol) {
  // 64 per dimension of a matrix; smaller for tensors of higher rank, so that no generated
  // input has more than about 2^18 elements.
  int64_t preferred = 64;
  for (const auto& o : kernel.operands) {
    if (std::find(o.shape.begin(), o.shape.end(), symbol) == o.shape.end()) continue;
    preferred = std::min<int64_t>(preferred, o.shape.size() <= 2   ? 64
                                             : o.shape.size() == 3 ? 32
                                                                   : 16);
  }
  const plugins::DimensionInfo* d = kernel.dimension(symbol);
  if (!d) return preferred;
  int64_t v = std::max<int64_t>(preferred, d->min);
  v = (v + d->multiple_of - 1) / d->multiple_of * d->multiple_of;
  if (d->max != 0 && v > d->max) v = d->max / d->multiple_of * d->multiple_of;
  return v;
}

HostTensor read_npy_input(const OperandInfo& operand, const std::filesystem::path& file,
                          const std::string& format) {
  const NpyArray array = read_npy(file);
  const bool is_float = array.type == NpyType::kFloat32 || array.type == NpyType::kFloat64;
  const std::string chosen =
      format.empty() ? inferred_format(operand, array.element_bytes(), is_float) : format;
  const auto storage = plugins::storage_for_format(chosen);
  if (storage.bytes != array.element_bytes() || (storage.dtype.code == kDLFloat) != is_float) {
    throw std::invalid_argument(file.string() + ": " + npy_type_name(array.type) +
                                " values cannot hold format " + chosen + ", which travels as " +
                                plugins::dtype_text(storage.dtype));
  }
  HostTensor t{operand.name, parse_format(chosen).name(), array.shape, array.data};
  return t;
}

NpyArray npy_of(const HostTensor& tensor) {
  const auto storage = plugins::storage_for_format(tensor.format);
  NpyArray a;
  if (storage.dtype.code == kDLFloat) {
    a.type = storage.bytes == 8 ? NpyType::kFloat64 : NpyType::kFloat32;
  } else {
    a.type = storage.bytes == 2 ? NpyType::kUint16 : NpyType::kUint8;
  }
  a.shape = tensor.shape;
  a.data = tensor.bytes;
  return a;
}

// The estimate of make_validation_request: every operand's elements, at most 8 bytes stored and
// a double copy each, outputs twice.
static void check_validation_memory(const KernelInfo& kernel, const InputChoices& choices,
                                    const std::map<std::string, int64_t>& sizes) {
  limits::MemoryEstimate estimate;
  for (const auto& o : kernel.operands) {
    std::vector<int64_t> shape;
    for (const auto& dim : o.shape) {
      const auto bound = sizes.find(dim);
      shape.push_back(is_integer(dim)        ? std::stoll(dim)
                      : bound != sizes.end() ? bound->second
                                             : default_dimension(kernel, dim));
    }
    const int64_t elements =
        limits::checked_product(std::span<const int64_t>(shape), "operand " + o.name);
    estimate.add(elements, (o.is_output ? 2 : 1) * (8 + sizeof(double)));
  }
  limits::check_memory(estimate, limits::memory_limit(choices.max_memory),
                       "validating kernel '" + kernel.name + "'");
}

plugins::KernelRequest make_validation_request(const KernelInfo& kernel,
                                               const InputChoices& choices) {
  for (const auto& [name, file] : choices.files) {
    const OperandInfo* o = kernel.operand(name);
    if (!o || o->is_output)
      throw std::invalid_argument("kernel '" + kernel.name + "' has no input '" + excerpt(name) +
                                  "'");
  }
  for (const auto& name : choices.omitted) {
    const OperandInfo* o = kernel.operand(name);
    if (!o || o->is_output || !o->optional) {
      throw std::invalid_argument("kernel '" + kernel.name + "' has no optional input '" +
                                  excerpt(name) + "'");
    }
  }
  for (const auto& [name, format] : choices.formats) {
    if (!kernel.operand(name))
      throw std::invalid_argument("kernel '" + kernel.name + "' has no operand '" + excerpt(name) +
                                  "'");
  }

  plugins::KernelRequest request;
  request.kernel = kernel.name;
  // Files first: their shapes fix symbols that generated inputs must agree with.
  for (const auto& o : kernel.operands) {
    const auto file = choices.files.find(o.name);
    if (o.is_output || file == choices.files.end()) continue;
    const auto format = choices.formats.find(o.name);
    request.inputs.push_back(
        read_npy_input(o, file->second, format == choices.formats.end() ? "" : format->second));
  }
  std::map<std::string, int64_t> sizes = plugins::bind_shape_symbols(kernel, request.inputs);
  for (const auto& [symbol, size] : choices.dimensions) {
    const bool used =
        std::any_of(kernel.operands.begin(), kernel.operands.end(),
                    // A copy of the name: clang 14 cannot capture a structured binding.
                    [&, name = symbol](const OperandInfo& o) {
                      return std::find(o.shape.begin(), o.shape.end(), name) != o.shape.end();
                    });
    if (!used)
      throw std::invalid_argument("kernel '" + kernel.name + "' has no dimension '" + symbol + "'");
    const auto [it, inserted] = sizes.emplace(symbol, size);
    if (!inserted && it->second != size) {
      throw std::invalid_argument(symbol + "=" + std::to_string(size) +
                                  " disagrees with the input files, where " + symbol + " is " +
                                  std::to_string(it->second));
    }
  }

  check_validation_memory(kernel, choices, sizes);
  if (!choices.generator.empty()) {
    add_generated_attention_inputs(kernel, choices, sizes, request.inputs);
  }
  const auto present = [&](const std::string& name) {
    return std::any_of(request.inputs.begin(), request.inputs.end(),
                       [&](const HostTensor& t) { return t.name == name; });
  };
  uint64_t stream_index = 0;
  for (const auto& o : kernel.operands) {
    if (o.is_output) continue;
    const uint64_t stream = stream_index++;
    if (present(o.name) || choices.omitted.count(o.name)) continue;
    std::vector<int64_t> shape;
    for (const auto& dim : o.shape) {
      if (is_integer(dim)) {
        shape.push_back(std::stoll(dim));
      } else {
        const auto [it, inserted] = sizes.emplace(dim, default_dimension(kernel, dim));
        shape.push_back(it->second);
      }
    }
    const auto format = choices.formats.find(o.name);
    request.inputs.push_back(
        generate_input(o, format == choices.formats.end() ? o.formats.front() : format->second,
                       shape, choices, stream));
  }
  for (const auto& [name, format] : choices.formats) {
    if (kernel.operand(name)->is_output) request.output_formats[name] = format;
  }
  for (const auto& [name, text] : choices.parameters) {
    const plugins::ParameterInfo* p = kernel.parameter(name);
    if (!p)
      throw std::invalid_argument("kernel '" + kernel.name + "' has no parameter '" +
                                  excerpt(name) + "'");
    request.parameters.push_back({name, plugins::parse_value(p->type, text)});
  }
  if (kernel.kind == plugins::KernelKind::kAttentionBackward) {
    std::set<std::string> from_files;
    for (const auto& [name, file] : choices.files) from_files.insert(name);
    set_forward_inputs(kernel, choices.model.empty() ? kernel.emulation_model : choices.model,
                       from_files, request);
  }
  return request;
}

}  // namespace simprec::validate
