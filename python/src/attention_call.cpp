#include "python/src/attention_call.hpp"

#include <algorithm>
#include <cmath>

#include "emulation/excerpt.hpp"
#include "lib/attention/numerics_spec.hpp"
#include "lib/inputs/generators.hpp"
#include "python/src/arguments.hpp"

namespace py = pybind11;

namespace simprec::python {

attention::AttentionConfig attention_config(const ConfigChoices& c) {
  if (c.tile && (c.tile->first < 1 || c.tile->second < 1)) {
    throw py::value_error("tile=(" + std::to_string(c.tile->first) + ", " +
                          std::to_string(c.tile->second) +
                          "): expected two positive sizes (rows, columns)");
  }
  attention::AttentionConfig config;
  try {
    // As `simprec attention --numerics SPEC --format F --tile T --set ... --mitigation ...`.
    attention::NumericsSpec spec = attention::parse_numerics_spec(c.numerics);
    if (c.tile) {
      spec.assignments.push_back("tile=" + std::to_string(c.tile->first) + "x" +
                                 std::to_string(c.tile->second));
    }
    spec.assignments.insert(spec.assignments.end(), c.sets.begin(), c.sets.end());
    spec.mitigations.insert(spec.mitigations.end(), c.mitigations.begin(), c.mitigations.end());
    config = attention::make_config(spec, parse_format(c.format));
  } catch (const std::invalid_argument& e) {
    throw py::value_error(std::string("numerics='") + excerpt(c.numerics) + "', format='" +
                          excerpt(c.format) + "': " + e.what());
  }
  config.causal = c.causal;
  if (c.scale) {
    if (!(*c.scale > 0) || !std::isfinite(*c.scale))
      throw py::value_error("scale=" + std::to_string(*c.scale) + ": expected a positive number");
    config.scale = *c.scale;
  }
  config.seed = c.seed;
  config.threads = c.threads;
  config.trace = c.trace;
  return config;
}

namespace {

NpyArray input_array(const py::object& object, const char* argument,
                     const std::optional<Format>& bits) {
  const py::array a = array_argument(object, argument);
  const std::string expected =
      bits ? "expected " + bits->name() + " encodings as " +
                 (bits->width() <= 8 ? "uint8" : "uint16") + ", as input_format says"
           : std::string("expected float32 or float64 values, or encodings with input_format=");
  NpyArray n = npy_copy(a, argument, expected);
  const bool is_float = n.type == NpyType::kFloat32 || n.type == NpyType::kFloat64;
  const bool is_bits = (n.type == NpyType::kUint8 && bits && bits->width() <= 8) ||
                       (n.type == NpyType::kUint16 && bits && bits->width() > 8);
  if (bits ? !is_bits : !is_float) {
    throw py::type_error(std::string(argument) + ": dtype " + dtype_name(a) + " is not accepted (" +
                         expected + ")");
  }
  return n;
}

}  // namespace

attention::AttentionInputs attention_inputs(const py::object& q, const py::object& k,
                                            const py::object& v, const py::object& d_out,
                                            const std::optional<std::string>& input_format,
                                            std::vector<int64_t>& leading) {
  std::optional<Format> bits;
  if (input_format) {
    bits = format_argument(*input_format);
    if (bits->width() > 16) {
      throw py::value_error("input_format='" + *input_format +
                            "': encodings are taken for formats of at most 16 bits; pass " +
                            "float32 or float64 values instead");
    }
  }
  const NpyArray qa = input_array(q, "q", bits), ka = input_array(k, "k", bits),
                 va = input_array(v, "v", bits);
  std::optional<NpyArray> da;
  if (!d_out.is_none()) da = input_array(d_out, "do", bits);
  attention::AttentionInputs in;
  try {
    in = inputs::inputs_from_arrays(
        {&qa, "q"}, {&ka, "k"}, {&va, "v"},
        da ? std::optional<inputs::LabelledArray>({&*da, "do"}) : std::nullopt, bits,
        inputs::NonFiniteInputs::kAllow);
  } catch (const std::invalid_argument& e) {
    throw py::value_error(e.what());
  }
  leading.assign(qa.shape.begin(), qa.shape.end() - 2);
  return in;
}

py::dict nonfinite_counts(const attention::AttentionInputs& in) {
  py::dict counts;
  const std::pair<const char*, const std::vector<double>*> tensors[] = {
      {"q", &in.q}, {"k", &in.k}, {"v", &in.v}, {"do", &in.d_out}};
  for (const auto& [name, values] : tensors) {
    if (values->empty()) continue;
    const auto nan =
        std::count_if(values->begin(), values->end(), [](double x) { return std::isnan(x); });
    const auto inf =
        std::count_if(values->begin(), values->end(), [](double x) { return std::isinf(x); });
    py::dict c;
    c["nan"] = nan;
    c["inf"] = inf;
    counts[name] = c;
  }
  return counts;
}

std::vector<double> values_argument(const py::object& object, const char* argument,
                                    const std::vector<int64_t>& shape) {
  const py::array a = array_argument(object, argument);
  if (shape_of(a) != shape) {
    std::string expected = "(";
    for (size_t i = 0; i < shape.size(); ++i)
      expected += (i ? ", " : "") + std::to_string(shape[i]);
    throw py::value_error(std::string(argument) + ": shape " + shape_text(a) + ", expected " +
                          expected + (shape.size() == 1 ? ",)" : ")"));
  }
  const NpyType type = npy_type_of(a, argument, "expected float32 or float64");
  std::vector<double> values(static_cast<size_t>(a.size()));
  if (type == NpyType::kFloat64) {
    const double* p = static_cast<const double*>(a.data());
    values.assign(p, p + a.size());
  } else if (type == NpyType::kFloat32) {
    const float* p = static_cast<const float*>(a.data());
    values.assign(p, p + a.size());
  } else {
    throw py::type_error(std::string(argument) + ": dtype " + dtype_name(a) +
                         " is not accepted (expected float32 or float64)");
  }
  return values;
}

}  // namespace simprec::python
