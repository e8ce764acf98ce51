// Validation of a Python attention kernel (a Triton kernel, FlexAttention, SDPA): its outputs,
// computed by the caller on the same inputs, against the emulation of a numerics description,
// with the report of `simprec validate` (lib/validate: bit agreement per output, ulp histogram,
// mean signed difference, each side's mean signed error against the fp64 reference, PASS/FAIL).
#include <pybind11/stl.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>

#include "lib/attention/analysis.hpp"
#include "lib/attention/footprint.hpp"
#include "lib/attention/numerics_spec.hpp"
#include "lib/validate/tensor_values.hpp"
#include "lib/validate/validation.hpp"
#include "python/src/arguments.hpp"
#include "python/src/attention_call.hpp"
#include "python/src/bindings.hpp"
#include "python/src/device_functions.hpp"
#include "python/src/integer_arguments.hpp"
#include "python/src/interruptible.hpp"
#include "python/src/locate_dict.hpp"

namespace py = pybind11;

namespace simprec::python {
namespace {

using plugins::HostTensor;

std::string report_text(const validate::ValidationResult& result) {
  char* buffer = nullptr;
  size_t size = 0;
  std::FILE* stream = open_memstream(&buffer, &size);
  if (!stream) throw std::runtime_error("cannot open a memory stream for the report");
  validate::print_validation(stream, result);
  std::fclose(stream);
  std::string text(buffer, size);
  std::free(buffer);
  return text;
}

// The kernel's output as a host tensor of `format`, from an array in its storage type.
HostTensor kernel_tensor(const std::string& name, const py::object& object, const Format& format,
                         const std::vector<int64_t>& shape) {
  const std::string argument = "kernel output " + name;
  const py::array a = array_argument(object, argument.c_str());
  HostTensor t = HostTensor::zeros(name, format.name(), shape);
  const std::string storage = plugins::dtype_text(plugins::storage_for_format(t.format).dtype);
  if (dtype_name(a) != storage) {
    throw py::type_error(argument + ": dtype " + dtype_name(a) + ", expected " + storage +
                         " (the storage of " + format.name() + ", the numerics' format of " + name +
                         ")");
  }
  if (shape_of(a) != shape) {
    throw py::value_error(argument + ": shape " + shape_text(a) + ", expected " +
                          plugins::shape_text(shape));
  }
  std::memcpy(t.bytes.data(), a.data(), t.bytes.size());
  return t;
}

HostTensor emulated_tensor(const std::string& name, const Format& format,
                           const std::vector<int64_t>& shape, const std::vector<double>& values) {
  HostTensor t = HostTensor::zeros(name, format.name(), shape);
  for (size_t i = 0; i < values.size(); ++i)
    validate::set_value(t, static_cast<int64_t>(i), values[i]);
  return t;
}

py::dict comparison_dict(const validate::OutputComparison& c) {
  py::dict d;
  d["name"] = c.name;
  d["format"] = c.format;
  d["values"] = c.values;
  d["bitwise_equal"] = c.bitwise_equal;
  d["both_nan"] = c.both_nan;
  d["nan_mismatch"] = c.nan_mismatch;
  py::list histogram;
  for (const auto& b : c.histogram) {
    if (b.count) histogram.append(py::make_tuple(b.low, b.high, b.count));
  }
  d["ulp_histogram"] = histogram;
  d["max_abs_ulps"] = c.max_abs_ulps;
  d["mean_signed_ulps"] = c.mean_signed_ulps;
  d["mean_signed_difference"] = c.mean_signed_difference;
  d["kernel_mean_signed_error"] = c.kernel_mean_signed_error;
  d["emulation_mean_signed_error"] = c.emulation_mean_signed_error;
  return d;
}

// validate --locate's report (locate.hpp) of the comparisons in `result`. With gradients from the
// kernel's own O and LSE, the forward outputs and the gradients come from two runs on inputs of
// their own: where O or the LSE differs the forward outputs are located, else the gradients.
validate::LocateReport locate_report(const attention::AttentionInputs& in,
                                     const attention::AttentionConfig& config,
                                     const attention::DeviceFunctions& functions,
                                     bool grads_from_kernel_forward,
                                     const validate::ValidationResult& result) {
  attention::AttentionInputs inputs = in;
  std::vector<HostTensor> kernel = result.kernel_outputs, emulated = result.emulated_outputs;
  if (grads_from_kernel_forward) {
    const std::vector<validate::FirstDifference> all =
        validate::first_differences(in.shape, kernel, emulated);
    const bool forward_differs = std::any_of(
        all.begin(), all.end(), [](const auto& d) { return d.output == "O" || d.output == "LSE"; });
    // Keeps the tensors of one side.
    const auto keep = [&](std::vector<HostTensor>& tensors) {
      std::erase_if(tensors,
                    [&](const HostTensor& t) { return (t.name[0] == 'd') == forward_differs; });
    };
    keep(kernel);
    keep(emulated);
    if (forward_differs) {
      inputs.d_out.clear();
    } else {
      for (const HostTensor& t : result.kernel_outputs) {
        if (t.name == "O") inputs.o = validate::values_of(t);
        if (t.name == "LSE") inputs.lse = validate::values_of(t);
      }
    }
  }
  validate::LocateReport report = validate::locate_attention(
      inputs.shape, config, kernel, emulated,
      [&](const attention::AttentionConfig& c, const attention::RunOptions& options) {
        return functions.empty() ? attention::run_attention(inputs, c, options)
                                 : attention::run_attention_with_device_functions(
                                       inputs, c, functions, 8, options);
      });
  report.differences =
      validate::first_differences(in.shape, result.kernel_outputs, result.emulated_outputs);
  return report;
}

py::dict validate_attention(const std::string& kernel, const py::dict& kernel_outputs,
                            const py::object& q, const py::object& k, const py::object& v,
                            const py::object& d_out, const ConfigChoices& choices,
                            const std::optional<std::string>& input_format, bool require_bit_exact,
                            const py::object& device_functions, const std::string& backward_from,
                            bool locate) {
  if (backward_from != "auto" && backward_from != "kernel" && backward_from != "emulation") {
    throw py::value_error("backward_from: expected 'auto', 'kernel' or 'emulation', got '" +
                          backward_from + "'");
  }
  std::vector<int64_t> leading;
  const attention::AttentionInputs in = attention_inputs(q, k, v, d_out, input_format, leading);
  const attention::AttentionConfig config = attention_config(choices);
  const attention::AttentionShape& s = in.shape;
  const auto with = [&](std::initializer_list<int64_t> tail) {
    std::vector<int64_t> shape = leading;
    shape.insert(shape.end(), tail);
    return shape;
  };
  struct Known {
    Format format;
    std::vector<int64_t> shape;
    const std::vector<double> attention::AttentionOutputs::*values;
  };
  using Outputs = attention::AttentionOutputs;
  const Format grad = config.site(attention::Site::kGradOut).format;
  const std::map<std::string, Known> known = {
      {"O", {config.site(attention::Site::kOOut).format, with({s.nq, s.dv}), &Outputs::o}},
      {"LSE", {config.site(attention::Site::kLse).format, with({s.nq}), &Outputs::lse}},
      {"dQ", {grad, with({s.nq, s.d}), &Outputs::dq}},
      {"dK", {grad, with({s.nk, s.d}), &Outputs::dk}},
      {"dV", {grad, with({s.nk, s.dv}), &Outputs::dv}}};
  std::vector<HostTensor> kernel_tensors;
  for (const auto& [key, value] : kernel_outputs) {
    const std::string name = py::str(key);
    const auto it = known.find(name);
    if (it == known.end())
      throw py::value_error("kernel output '" + name + "': expected O, LSE, dQ, dK or dV");
    if (name[0] == 'd' && !in.has_grad())
      throw py::value_error("kernel output " + name + " needs dO among the inputs");
    kernel_tensors.push_back(kernel_tensor(name, py::reinterpret_borrow<py::object>(value),
                                           it->second.format, it->second.shape));
  }
  if (kernel_tensors.empty()) throw py::value_error("kernel_outputs: no outputs to compare");
  const auto kernel_output = [&](const char* name) -> const HostTensor* {
    for (const HostTensor& t : kernel_tensors) {
      if (t.name == name) return &t;
    }
    return nullptr;
  };
  // A backward kernel receives the forward kernel's O and LSE. Fed the same, the emulated
  // backward is checked on its own; from the emulation's own forward pass, a difference in the
  // LSE's last bit would change every gradient of its row.
  const HostTensor* kernel_o = kernel_output("O");
  const HostTensor* kernel_lse = kernel_output("LSE");
  // auto: from the kernel's, unless the numerics keep a base-2 LSE for the backward pass
  // (lse_impl=log2, FlexAttention): the natural LSE a kernel returns is that value times ln 2
  // rounded to fp32, which does not give the base-2 one back on every row.
  const bool base2_lse = config.lse_impl->base2();
  const bool grads_from_kernel_forward =
      in.has_grad() && kernel_o && kernel_lse &&
      (backward_from == "kernel" || (backward_from == "auto" && !base2_lse));

  attention::AnalysisOptions options;
  options.baseline = false;
  options.device_functions = device_functions_argument(device_functions);
  check_memory_argument(attention::estimate_analysis_memory(s, config, options, in.has_grad()),
                        memory_limit_argument(py::none()),
                        "validation of attention on shape " + attention::shape_text(s));
  attention::AttentionAnalysis a, grads;
  interruptible([&] {
    if (grads_from_kernel_forward) {
      // One fp64 reference (forward and backward, from Q, K, V, dO alone) serves both.
      attention::AttentionInputs backward = in;
      backward.o = validate::values_of(*kernel_o);
      backward.lse = validate::values_of(*kernel_lse);
      grads = attention::analyse_attention(backward, config, options);
      attention::AttentionInputs forward = in;
      forward.d_out.clear();
      attention::AnalysisOptions forward_only = options;
      forward_only.reference = false;
      a = attention::analyse_attention(forward, config, forward_only);
      a.reference = grads.reference;
    } else {
      a = attention::analyse_attention(in, config, options);
    }
  });
  validate::ValidationResult result;
  result.plugin = "python";
  result.kernel = kernel;
  result.kind = in.has_grad() ? "attention_backward" : "attention_forward";
  result.numerics = attention::canonical_numerics(config);
  result.model = result.numerics;
  result.declared_model = result.model;
  result.claims_bit_exact = require_bit_exact;
  result.enforced = require_bit_exact;
  const Format input = config.site(attention::Site::kInput).format;
  for (const char* name : {"Q", "K", "V", "dO"}) {
    if (std::string(name) == "dO" && !in.has_grad()) continue;
    HostTensor t;
    t.name = name;
    t.format = input.name();
    const bool key_side = name[0] == 'K' || name[0] == 'V';
    t.shape = with({key_side ? s.nk : s.nq, name[0] == 'V' || name[1] == 'O' ? s.dv : s.d});
    result.inputs.push_back(std::move(t));
  }
  result.parameters = {
      {"causal", config.causal}, {"scale", a.scale}, {"seed", static_cast<int64_t>(config.seed)}};
  if (in.has_grad()) {
    result.parameters.push_back(
        {"backward_from", std::string(grads_from_kernel_forward ? "kernel" : "emulation")});
  }
  for (HostTensor& kt : kernel_tensors) {
    const Known& kn = known.at(kt.name);
    const attention::AttentionAnalysis& from =
        kt.name[0] == 'd' && grads_from_kernel_forward ? grads : a;
    HostTensor et = emulated_tensor(kt.name, kn.format, kn.shape, from.outputs.*(kn.values));
    validate::OutputComparison c = validate::compare_outputs(kt, et);
    validate::add_reference_errors(c, kt, et, (*from.reference).*(kn.values));
    result.comparisons.push_back(std::move(c));
    result.emulated_outputs.push_back(std::move(et));
    result.kernel_outputs.push_back(std::move(kt));
  }
  if (locate) {
    result.locate = interruptible([&] {
      return locate_report(in, config, options.device_functions, grads_from_kernel_forward, result);
    });
  }
  py::dict r;
  r["text"] = report_text(result);
  r["locate"] = result.locate ? py::object(locate_dict(*result.locate)) : py::object(py::none());
  r["passed"] = result.passed();
  r["bit_exact"] = result.bit_exact();
  py::list comparisons;
  for (const auto& c : result.comparisons) comparisons.append(comparison_dict(c));
  r["outputs"] = comparisons;
  py::dict emulated;
  for (auto& t : result.emulated_outputs) {
    std::vector<double> values = validate::values_of(t);
    emulated[py::str(t.name)] = numpy_of(std::move(values), t.shape);
  }
  r["emulated"] = emulated;
  return r;
}

}  // namespace

void bind_validation(py::module_& m) {
  m.def(
      "validate_attention",
      [](const std::string& kernel, const py::dict& kernel_outputs, const py::object& q,
         const py::object& k, const py::object& v, const py::object& d_out,
         const std::string& numerics, const std::string& format,
         const std::vector<std::string>& sets, const std::vector<std::string>& mitigations,
         const std::optional<std::pair<int, int>>& tile, bool causal,
         const std::optional<double>& scale, Seed seed, ThreadCount threads,
         const std::optional<std::string>& input_format, bool require_bit_exact,
         const py::object& device_functions, const std::string& backward_from, bool locate) {
        const ConfigChoices choices{numerics, format, sets,       mitigations,   tile,
                                    causal,   scale,  seed.value, threads.value, false};
        return validate_attention(kernel, kernel_outputs, q, k, v, d_out, choices, input_format,
                                  require_bit_exact, device_functions, backward_from, locate);
      },
      py::arg("kernel"), py::arg("kernel_outputs"), py::arg("q"), py::arg("k"), py::arg("v"),
      py::arg("do") = py::none(), py::kw_only(), py::arg("numerics") = "fa2",
      py::arg("format") = "bf16", py::arg("set") = std::vector<std::string>{},
      py::arg("mitigations") = std::vector<std::string>{}, py::arg("tile") = py::none(),
      py::arg("causal") = false, py::arg("scale") = py::none(), py::arg("seed") = 0,
      py::arg("threads") = 0, py::arg("input_format") = py::none(),
      py::arg("require_bit_exact") = true, py::arg("device_functions") = py::none(),
      py::arg("backward_from") = "auto", py::arg("locate") = false);
}

}  // namespace simprec::python
