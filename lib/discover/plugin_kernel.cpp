#include "lib/discover/plugin_kernel.hpp"

#include <algorithm>
#include <stdexcept>

#include "lib/validate/tensor_values.hpp"
#include "plugins/host/plugin_error.hpp"

namespace simprec::discover {
namespace {

const plugins::OperandInfo& operand(const plugins::KernelInfo& k, const char* name) {
  const plugins::OperandInfo* o = k.operand(name);
  if (!o) throw std::invalid_argument("kernel '" + k.name + "' has no operand " + name);
  return *o;
}

// The shape symbol of a probe dimension: B, H, Sq, D from Q [B,H,Sq,D], Sk from K.
std::string symbol_of(const plugins::KernelInfo& k, const std::string& role) {
  const plugins::OperandInfo& q = operand(k, "Q");
  const plugins::OperandInfo& key = operand(k, "K");
  if (q.shape.size() != 4 || key.shape.size() != 4) {
    throw std::invalid_argument("kernel '" + k.name + "': Q and K must be [B,H,S,D]");
  }
  if (role == "B") return q.shape[0];
  if (role == "H") return q.shape[1];
  if (role == "Sq") return q.shape[2];
  if (role == "Sk") return key.shape[2];
  return q.shape[3];
}

plugins::HostTensor tensor(const std::string& name, const std::string& format,
                           const std::vector<double>& values, std::vector<int64_t> shape) {
  plugins::HostTensor t = plugins::HostTensor::zeros(name, format, std::move(shape));
  for (size_t i = 0; i < values.size(); ++i)
    validate::set_value(t, static_cast<int64_t>(i), values[i]);
  return t;
}

}  // namespace

PluginKernel::PluginKernel(plugins::Plugin& plugin, const std::string& kernel,
                           std::string input_format)
    : plugin_(plugin), kernel_(plugin.info().kernel(kernel)), format_(std::move(input_format)) {
  if (kernel_.kind != plugins::KernelKind::kAttentionForward) {
    throw std::invalid_argument(
        "discover calls attention forward kernels (Q, K, V -> O, LSE); "
        "kernel '" +
        kernel_.name + "' is a " + plugins::kernel_kind_name(kernel_.kind) + " kernel");
  }
  const plugins::OperandInfo& q = operand(kernel_, "Q");
  (void)operand(kernel_, "O");
  if (format_.empty()) format_ = q.formats.front();
  if (std::find(q.formats.begin(), q.formats.end(), format_) == q.formats.end()) {
    std::string accepted;
    for (const auto& f : q.formats) accepted += (accepted.empty() ? "" : ", ") + f;
    throw std::invalid_argument("kernel '" + kernel_.name + "' takes Q in " + accepted + ", not " +
                                format_);
  }
  (void)symbol_of(kernel_, "B");
}

std::string PluginKernel::description() const {
  return "plugin=" + plugin_.info().name + " kernel=" + kernel_.name;
}

ProbeLimits PluginKernel::limits() const {
  ProbeLimits l;
  const plugins::KernelInfo* k = &kernel_;
  l.fit = [k](const std::string& role, int64_t wanted) -> int64_t {
    const std::string symbol = symbol_of(*k, role);
    if (!symbol.empty() && std::all_of(symbol.begin(), symbol.end(), ::isdigit)) {
      return std::stoll(symbol);  // a fixed size
    }
    const plugins::DimensionInfo* d = k->dimension(symbol);
    if (!d) return wanted;
    // The nearest accepted size at or above the one wanted, or the largest accepted.
    int64_t v = std::max(wanted, d->min);
    v = (v + d->multiple_of - 1) / d->multiple_of * d->multiple_of;
    if (d->max > 0 && v > d->max) v = d->max / d->multiple_of * d->multiple_of;
    return v >= d->min ? v : -1;
  };
  const plugins::ParameterInfo* causal = kernel_.parameter("causal");
  l.causal = causal && (causal->type == plugins::ValueType::kBool ||
                        causal->type == plugins::ValueType::kInt64);
  return l;
}

Case PluginKernel::run(const ProbeDesign& probe, const attention::AttentionInputs& in) {
  const attention::AttentionShape& s = in.shape;
  plugins::KernelRequest request;
  request.kernel = kernel_.name;
  request.inputs.push_back(tensor("Q", format_, in.q, {s.batch, s.heads, s.nq, s.d}));
  request.inputs.push_back(tensor("K", format_, in.k, {s.batch, s.heads, s.nk, s.d}));
  request.inputs.push_back(tensor("V", format_, in.v, {s.batch, s.heads, s.nk, s.dv}));
  if (probe.causal) {
    const plugins::ParameterInfo* p = kernel_.parameter("causal");
    request.parameters.push_back({"causal", p->type == plugins::ValueType::kBool
                                                ? plugins::Value(true)
                                                : plugins::Value(int64_t{1})});
  }
  Case c;
  c.inputs = in;
  c.input_format = format_;
  c.causal = probe.causal;
  std::vector<plugins::HostTensor> outputs;
  try {
    outputs = plugin_.run(request);
  } catch (const plugins::AbandonedCallError&) {
    throw;
  } catch (const plugins::PluginError& e) {
    throw ProbeRefused(e.what());
  } catch (const std::invalid_argument& e) {
    throw ProbeRefused(e.what());  // a shape the kernel's description does not accept
  }
  for (plugins::HostTensor& t : outputs) {
    if (t.name == "O" || t.name == "LSE") c.outputs.push_back({std::move(t), {}});
  }
  return c;
}

}  // namespace simprec::discover
