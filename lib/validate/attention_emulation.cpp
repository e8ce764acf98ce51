#include "lib/validate/attention_emulation.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <variant>

#include "emulation/excerpt.hpp"
#include "lib/attention/attention.hpp"
#include "lib/attention/numerics_spec.hpp"
#include "lib/attention/options.hpp"
#include "lib/attention/preset.hpp"
#include "lib/validate/tensor_values.hpp"

namespace simprec::validate {
namespace {

using attention::AttentionConfig;
using attention::AttentionInputs;
using attention::AttentionOutputs;
using attention::Site;
using plugins::HostTensor;
using plugins::NamedValue;

const NamedValue* find_parameter(const std::vector<NamedValue>& parameters,
                                 const std::string& name) {
  for (const auto& p : parameters) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::invalid_argument bad_parameter(const NamedValue& p, const std::string& expected) {
  return std::invalid_argument("parameter " + p.name + "=" + plugins::value_text(p.value) +
                               ": expected " + expected);
}

bool bool_parameter(const std::vector<NamedValue>& parameters, const std::string& name) {
  const NamedValue* p = find_parameter(parameters, name);
  if (!p) return false;
  if (const bool* b = std::get_if<bool>(&p->value)) return *b;
  const int64_t* i = std::get_if<int64_t>(&p->value);
  if (i && (*i == 0 || *i == 1)) return *i == 1;
  throw bad_parameter(*p, "a bool");
}

std::optional<double> number_parameter(const std::vector<NamedValue>& parameters,
                                       const std::string& name) {
  const NamedValue* p = find_parameter(parameters, name);
  if (!p) return std::nullopt;
  if (const double* d = std::get_if<double>(&p->value)) return *d;
  if (const int64_t* i = std::get_if<int64_t>(&p->value)) return static_cast<double>(*i);
  throw bad_parameter(*p, "a number");
}

int64_t int_parameter(const std::vector<NamedValue>& parameters, const std::string& name) {
  const NamedValue* p = find_parameter(parameters, name);
  if (!p) return 0;
  if (const int64_t* i = std::get_if<int64_t>(&p->value)) return *i;
  throw bad_parameter(*p, "an integer");
}

int tile_attribute(const plugins::KernelInfo& kernel, const std::string& name, int fallback) {
  const std::string text = attribute_text(kernel, name, "");
  if (text.empty()) return fallback;
  try {
    size_t used = 0;
    const int v = std::stoi(text, &used);
    if (used == text.size() && v > 0) return v;
  } catch (const std::exception&) {
  }
  throw std::invalid_argument("kernel '" + kernel.name + "': attribute " + name + "='" + text +
                              "' is not a positive integer");
}

// The tensor of that name among inputs or outputs (const or not).
template <class Tensors>
auto& named(Tensors& tensors, const std::string& name, const plugins::KernelInfo& kernel) {
  const auto it = std::find_if(tensors.begin(), tensors.end(),
                               [&](const HostTensor& t) { return t.name == name; });
  if (it == tensors.end()) {
    throw std::invalid_argument("attention emulation of kernel '" + kernel.name + "' needs " +
                                name);
  }
  return *it;
}
const HostTensor& required_input(const EmulationCall& call, const std::string& name) {
  return named(call.inputs, name, call.kernel);
}

// The problem's shape from Q [B,H,Sq,D], K [B,H,Sk,D], V [B,H,Sk,Dv].
attention::AttentionShape shape_of(const HostTensor& q, const HostTensor& k, const HostTensor& v) {
  for (const HostTensor* t : {&q, &k, &v}) {
    if (t->shape.size() != 4) {
      throw std::invalid_argument("attention input " + t->name + " has shape " +
                                  plugins::shape_text(t->shape) + "; expected [B,H,S,D]");
    }
  }
  if (k.shape[0] != q.shape[0] || v.shape[0] != q.shape[0] || k.shape[1] != q.shape[1] ||
      v.shape[1] != q.shape[1] || v.shape[2] != k.shape[2] || k.shape[3] != q.shape[3]) {
    throw std::invalid_argument("attention inputs Q " + plugins::shape_text(q.shape) + ", K " +
                                plugins::shape_text(k.shape) + ", V " +
                                plugins::shape_text(v.shape) +
                                " do not fit together (grouped-query attention is not emulated)");
  }
  return {q.shape[0], q.shape[1], q.shape[2], k.shape[2], q.shape[3], v.shape[3]};
}

AttentionInputs inputs_of(const HostTensor& q, const HostTensor& k, const HostTensor& v) {
  AttentionInputs in;
  in.shape = shape_of(q, k, v);
  in.q = values_of(q);
  in.k = values_of(k);
  in.v = values_of(v);
  return in;
}

void write(HostTensor& tensor, const std::vector<double>& values) {
  for (size_t i = 0; i < values.size(); ++i) set_value(tensor, static_cast<int64_t>(i), values[i]);
}

// The output format the kernel declares must be the tensor's.
void check_output_format(const plugins::KernelInfo& kernel, const HostTensor& output) {
  const std::string declared = attribute_text(kernel, "output_format", "");
  if (!declared.empty() && !(parse_format(declared) == parse_format(output.format))) {
    throw std::invalid_argument("kernel '" + kernel.name + "' declares output_format=" + declared +
                                " but its output " + output.name + " is " + output.format);
  }
}

// The attribute naming the plugin's kernel for a supplied function: exp2_function, ...
std::string function_attribute(attention::DeviceFn fn) {
  return std::string(attention::device_fn_name(fn)) + "_function";
}

// Each device function the kernel names must be a function kernel of the plugin taking fp32 x
// [N] (and the divisor d [N] for div) to fp32 y [N].
void check_device_functions(const EmulationCall& call) {
  if (!call.plugin) return;
  for (const attention::DeviceFn fn : attention::kDeviceFns) {
    const std::string attribute = function_attribute(fn);
    const std::string name = attribute_text(call.kernel, attribute, "");
    if (name.empty()) continue;
    const auto& kernels = call.plugin->kernels;
    const auto it = std::find_if(kernels.begin(), kernels.end(),
                                 [&](const plugins::KernelInfo& k) { return k.name == name; });
    const std::string prefix =
        "kernel '" + call.kernel.name + "' takes " + std::string(attention::device_fn_name(fn)) +
        " from device function '" + name + "', which plugin '" + call.plugin->name;
    if (it == kernels.end()) throw std::invalid_argument(prefix + "' does not have");
    const auto accepts_fp32 = [&](const char* operand, bool output) {
      const plugins::OperandInfo* o = it->operand(operand);
      return o && o->is_output == output && o->shape.size() == 1 &&
             std::find(o->formats.begin(), o->formats.end(), "fp32") != o->formats.end();
    };
    const bool binary = fn == attention::DeviceFn::kDiv;
    if (it->kind != plugins::KernelKind::kFunction || !accepts_fp32("x", false) ||
        !accepts_fp32("y", true) || (binary && !accepts_fp32("d", false))) {
      throw std::invalid_argument(prefix + "' does not offer as a function kernel of fp32 " +
                                  (binary ? "x [N], d [N]" : "x [N]") + " -> y [N]");
    }
  }
}

// run_attention, with the plugin's device functions where the kernel names them.
AttentionOutputs run(const EmulationCall& call, const AttentionInputs& in,
                     const AttentionConfig& config, const attention::RunOptions& options = {}) {
  attention::DeviceFunctions functions;
  for (const attention::DeviceFn fn : attention::kDeviceFns) {
    const std::string name = attribute_text(call.kernel, function_attribute(fn), "");
    if (name.empty()) continue;
    if (!call.run_function) {
      throw std::invalid_argument("kernel '" + call.kernel.name + "' takes " +
                                  std::string(attention::device_fn_name(fn)) +
                                  " from device function '" + name +
                                  "'; emulating it needs the plugin to run that function");
    }
    const FunctionRunner runner = call.run_function;
    const auto unary = [runner, name](const std::vector<uint32_t>& x) {
      return runner(name, x, {});
    };
    switch (fn) {
      case attention::DeviceFn::kExp2:
        functions.exp2 = unary;
        break;
      case attention::DeviceFn::kExp:
        functions.exp = unary;
        break;
      case attention::DeviceFn::kLog:
        functions.log = unary;
        break;
      case attention::DeviceFn::kLog2:
        functions.log2 = unary;
        break;
      case attention::DeviceFn::kRcp:
        functions.rcp = unary;
        break;
      case attention::DeviceFn::kDiv:
        functions.div = [runner, name](const std::vector<uint32_t>& x,
                                       const std::vector<uint32_t>& d) {
          return runner(name, x, d);
        };
        break;
    }
  }
  if (functions.empty()) return attention::run_attention(in, config, options);
  return attention::run_attention_with_device_functions(in, config, functions, 8, options);
}

// The attention inputs of a call: Q, K, V, and a backward kernel's dO, O and LSE.
AttentionInputs call_inputs(const EmulationCall& call) {
  AttentionInputs in =
      inputs_of(required_input(call, "Q"), required_input(call, "K"), required_input(call, "V"));
  if (call.kernel.kind == plugins::KernelKind::kAttentionBackward) {
    in.d_out = values_of(required_input(call, "dO"));
    in.o = values_of(required_input(call, "O"));
    in.lse = values_of(required_input(call, "LSE"));
  }
  return in;
}

AttentionOutputs reference_of(const AttentionInputs& in, const AttentionConfig& config) {
  return attention::reference_attention(attention::round_inputs_for_reference(in, config),
                                        attention::softmax_scale(config, in.shape), config.causal,
                                        config.threads);
}

// The mitigation texts of the call parameters beta_rowmax, beta, eps and sr_p_bits, each
// checked by the mitigation table; a bad one is refused naming the parameter.
std::vector<std::string> mitigations_from_parameters(const std::vector<NamedValue>& parameters) {
  const attention::Mitigation& beta_rowmax = *attention::find_mitigation("beta-rowmax");
  const auto text = [&](const char* name, std::string_view fallback) {
    const NamedValue* p = find_parameter(parameters, name);
    return p ? plugins::value_text(p->value) : std::string(fallback);
  };
  const std::string beta = text("beta", beta_rowmax.arguments[0].default_text);
  const std::string eps = text("eps", beta_rowmax.arguments[1].default_text);
  const auto check = [&](const char* name, const std::string& mitigation) {
    try {
      (void)attention::canonical_mitigation(mitigation);
    } catch (const std::invalid_argument& e) {
      const NamedValue& p = *find_parameter(parameters, name);
      throw std::invalid_argument("parameter " + p.name + "=" + plugins::value_text(p.value) +
                                  ": " + e.what());
    }
  };
  if (find_parameter(parameters, "beta")) check("beta", "beta-rowmax:" + beta);
  if (find_parameter(parameters, "eps")) check("eps", "beta-rowmax:2:" + eps);
  std::vector<std::string> out;
  if (bool_parameter(parameters, "beta_rowmax")) out.push_back("beta-rowmax:" + beta + ":" + eps);
  const int64_t bits = int_parameter(parameters, "sr_p_bits");
  if (bits < 0) {
    const NamedValue& p = *find_parameter(parameters, "sr_p_bits");
    throw std::invalid_argument("parameter sr_p_bits=" + plugins::value_text(p.value) +
                                ": 0 (off), or the bit count of sr-p-tiled (1, 2, 4, 8, 16 or 32)");
  }
  if (bits > 0) {
    out.push_back("sr-p-tiled:" + std::to_string(bits));
    check("sr_p_bits", out.back());
  }
  return out;
}

}  // namespace

AttentionConfig attention_config(const plugins::KernelInfo& kernel, const std::string& model,
                                 const std::vector<NamedValue>& parameters,
                                 const std::string& input_format,
                                 const std::string& output_format) {
  const std::string declared = attribute_text(kernel, "format", "");
  if (!declared.empty() && !(parse_format(declared) == parse_format(input_format))) {
    throw std::invalid_argument("kernel '" + kernel.name + "' declares format=" + declared +
                                " but its input Q is " + input_format);
  }
  for (const auto& p : parameters) {
    const auto known = attention::kernel_parameter_names();
    if (std::find(known.begin(), known.end(), p.name) == known.end()) {
      std::string names;
      for (const auto& k : known) names += (names.empty() ? "" : ", ") + std::string(k);
      throw std::invalid_argument("attention emulation does not know parameter '" + p.name +
                                  "' (known: " + names + ")");
    }
  }
  AttentionConfig c;
  try {
    attention::NumericsSpec spec = attention::parse_numerics_spec(model);
    // The kernel's tile attributes come first, so that a spec naming a tile wins.
    const AttentionConfig preset = attention::make_preset(spec.preset, formats::bf16);
    const int rows = tile_attribute(kernel, "block_rows", preset.block_rows);
    const int cols = tile_attribute(kernel, "block_cols", preset.block_cols);
    if (rows != preset.block_rows || cols != preset.block_cols) {
      spec.assignments.insert(spec.assignments.begin(),
                              "tile=" + std::to_string(rows) + "x" + std::to_string(cols));
    }
    // The mitigations the call's parameters ask for, through the mitigation table, whose
    // checks apply to every parameter given.
    for (auto& m : mitigations_from_parameters(parameters)) spec.mitigations.push_back(m);
    c = attention::make_config(spec, parse_format(declared.empty() ? input_format : declared));
    // The outputs are written in the output tensor's format, rounded as the spec rounds them.
    for (Site s : {Site::kOOut, Site::kGradOut}) {
      attention::apply_override(c, std::string(attention::site_name(s)) + "=" + output_format +
                                       ":" + attention::rounding_name(c.site(s).rounding));
    }
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("kernel '" + excerpt(kernel.name) + "': model '" + excerpt(model) +
                                "': " + e.what());
  }
  c.causal = bool_parameter(parameters, "causal");
  if (const auto scale = number_parameter(parameters, "scale")) {
    if (!(*scale > 0) || !std::isfinite(*scale))
      throw bad_parameter(*find_parameter(parameters, "scale"), "a positive finite number");
    c.scale = *scale;
  }
  c.seed = static_cast<uint64_t>(int_parameter(parameters, "seed"));
  return c;
}

void check_attention_call(const EmulationCall& call, const std::vector<HostTensor>& outputs) {
  const bool forward = call.kernel.kind == plugins::KernelKind::kAttentionForward;
  const HostTensor& q = required_input(call, "Q");
  (void)shape_of(q, required_input(call, "K"), required_input(call, "V"));
  const HostTensor& out = named(outputs, forward ? "O" : "dQ", call.kernel);
  check_output_format(call.kernel, out);
  if (!forward) {
    for (const char* name : {"O", "dO", "LSE"}) (void)required_input(call, name);
    for (const char* name : {"dK", "dV"}) {
      const HostTensor& g = named(outputs, name, call.kernel);
      if (g.format != out.format) {
        throw std::invalid_argument("attention emulation writes dQ, dK, dV in one format; " +
                                    out.format + " and " + g.format + " differ");
      }
    }
  }
  (void)attention_config(call.kernel, call.model, call.parameters, q.format, out.format);
  check_device_functions(call);
}

void emulate_attention_forward(const EmulationCall& call, std::vector<HostTensor>& outputs) {
  check_attention_call(call, outputs);
  const HostTensor& q = required_input(call, "Q");
  HostTensor& o = named(outputs, "O", call.kernel);
  HostTensor* lse = find_output(outputs, "LSE");
  const AttentionConfig config =
      attention_config(call.kernel, call.model, call.parameters, q.format, o.format);
  const AttentionInputs in = call_inputs(call);
  const AttentionOutputs out = run(call, in, config);
  write(o, out.o);
  if (lse) write(*lse, out.lse);
  if (call.reference) {
    const AttentionOutputs ref = reference_of(in, config);
    (*call.reference)["O"] = ref.o;
    if (lse) (*call.reference)["LSE"] = ref.lse;
  }
}

void emulate_attention_backward(const EmulationCall& call, std::vector<HostTensor>& outputs) {
  check_attention_call(call, outputs);
  const HostTensor& q = required_input(call, "Q");
  HostTensor& dq = named(outputs, "dQ", call.kernel);
  HostTensor& dk = named(outputs, "dK", call.kernel);
  HostTensor& dv = named(outputs, "dV", call.kernel);
  const AttentionConfig config =
      attention_config(call.kernel, call.model, call.parameters, q.format, dq.format);
  const AttentionInputs in = call_inputs(call);
  const AttentionOutputs out = run(call, in, config);
  write(dq, out.dq);
  write(dk, out.dk);
  write(dv, out.dv);
  if (call.reference) {
    const AttentionOutputs ref = reference_of(in, config);
    (*call.reference)["dQ"] = ref.dq;
    (*call.reference)["dK"] = ref.dk;
    (*call.reference)["dV"] = ref.dv;
  }
}

LocateReport locate_attention_call(const EmulationCall& call,
                                   const std::vector<HostTensor>& kernel_outputs,
                                   const std::vector<HostTensor>& emulated_outputs) {
  check_attention_call(call, emulated_outputs);
  const bool forward = call.kernel.kind == plugins::KernelKind::kAttentionForward;
  const AttentionConfig config =
      attention_config(call.kernel, call.model, call.parameters, required_input(call, "Q").format,
                       named(emulated_outputs, forward ? "O" : "dQ", call.kernel).format);
  const AttentionInputs in = call_inputs(call);
  return locate_attention(
      in.shape, config, kernel_outputs, emulated_outputs,
      [&](const AttentionConfig& c, const attention::RunOptions& options) {
        return run(call, in, c, options);
      },
      true);
}

void set_forward_inputs(const plugins::KernelInfo& kernel, const std::string& model,
                        const std::set<std::string>& keep, plugins::KernelRequest& request) {
  const auto input = [&](const std::string& name) -> HostTensor& {
    for (auto& t : request.inputs) {
      if (t.name == name) return t;
    }
    throw std::invalid_argument("kernel '" + kernel.name + "' has no input " + name);
  };
  if (keep.count("O") && keep.count("LSE")) return;
  HostTensor& o = input("O");
  HostTensor& lse = input("LSE");
  const AttentionConfig config =
      attention_config(kernel, model, request.parameters, input("Q").format, o.format);
  const AttentionOutputs out =
      attention::run_attention(inputs_of(input("Q"), input("K"), input("V")), config);
  if (!keep.count("O")) write(o, out.o);
  if (!keep.count("LSE")) write(lse, out.lse);
}

}  // namespace simprec::validate
