#include "lib/validate/validation.hpp"

#include <algorithm>
#include <cinttypes>
#include <stdexcept>

#include "emulation/cancellation.hpp"
#include "emulation/excerpt.hpp"
#include "emulation/progress.hpp"
#include "lib/attention/numerics_spec.hpp"
#include "lib/validate/attention_emulation.hpp"
#include "lib/validate/kernel_emulation.hpp"
#include "plugins/host/plugin_error.hpp"

namespace simprec::validate {
namespace {

std::string bucket_label(const UlpBucket& b) {
  const auto bound = [](int64_t v) {
    return v == INT64_MAX ? std::string("inf") : std::to_string(v);
  };
  if (b.low == b.high) return std::to_string(b.low);
  if (b.low < 0) return std::string("[-") + bound(-b.low) + "," + std::to_string(b.high) + "]";
  return std::string("[") + std::to_string(b.low) + "," + bound(b.high) + "]";
}

// Pads a device function's arguments with zeros up to what its dimension accepts.
int64_t accepted_length(const plugins::DimensionInfo* d, int64_t n) {
  if (!d) return std::max<int64_t>(n, 1);
  n = std::max(n, d->min);
  return (n + d->multiple_of - 1) / d->multiple_of * d->multiple_of;
}

}  // namespace

std::vector<uint32_t> run_device_function(plugins::Plugin& plugin, const std::string& name,
                                          const std::vector<uint32_t>& x,
                                          const std::vector<uint32_t>& d) {
  const plugins::KernelInfo& f = plugin.info().kernel(name);
  const plugins::OperandInfo* xin = f.operand("x");
  const bool binary = !d.empty();
  if (f.kind != plugins::KernelKind::kFunction || !xin || xin->shape.size() != 1 ||
      (binary && !f.operand("d"))) {
    throw std::invalid_argument("kernel '" + excerpt(name) + "' of plugin '" + plugin.info().name +
                                "' is not a device function of " +
                                (binary ? "x [N] and d [N]" : "x [N]"));
  }
  if (binary && d.size() != x.size())
    throw std::invalid_argument("device function '" + excerpt(name) +
                                "': x and d differ in length");
  const plugins::DimensionInfo* dim = f.dimension(xin->shape[0]);
  // Calls of at most the dimension's maximum (a multiple of multiple_of), zero-padded.
  int64_t chunk = static_cast<int64_t>(x.size());
  if (dim && dim->max > 0) chunk = std::min(chunk, dim->max / dim->multiple_of * dim->multiple_of);
  chunk = std::max<int64_t>(chunk, 1);
  std::vector<uint32_t> y;
  y.reserve(x.size());
  for (size_t start = 0; start < x.size(); start += static_cast<size_t>(chunk)) {
    const int64_t n = std::min<int64_t>(chunk, static_cast<int64_t>(x.size() - start));
    plugins::KernelRequest request;
    request.kernel = name;
    plugins::HostTensor t = plugins::HostTensor::zeros("x", "fp32", {accepted_length(dim, n)});
    for (int64_t i = 0; i < n; ++i) t.set_bits_at(i, x[start + static_cast<size_t>(i)]);
    request.inputs.push_back(std::move(t));
    if (binary) {
      plugins::HostTensor divisor =
          plugins::HostTensor::zeros("d", "fp32", {accepted_length(dim, n)});
      for (int64_t i = 0; i < divisor.element_count(); ++i)
        divisor.set_bits_at(i, i < n ? d[start + static_cast<size_t>(i)] : 0x3f800000u);
      request.inputs.push_back(std::move(divisor));
    }
    request.output_formats["y"] = "fp32";
    const std::vector<plugins::HostTensor> out = plugin.run(request);
    const auto it =
        std::find_if(out.begin(), out.end(), [](const auto& o) { return o.name == "y"; });
    if (it == out.end())
      throw std::invalid_argument("device function '" + name + "' has no output y");
    for (int64_t i = 0; i < n; ++i) y.push_back(static_cast<uint32_t>(it->bits_at(i)));
  }
  return y;
}

bool ValidationResult::bit_exact() const {
  for (const auto& c : comparisons) {
    if (!c.bit_exact()) return false;
  }
  return true;
}

int64_t ValidationResult::nan_mismatches() const {
  int64_t n = 0;
  for (const auto& c : comparisons) n += c.nan_mismatch;
  return n;
}

// The canonical numerics spec an attention kernel is emulated with (empty for other kinds).
static std::string numerics_of(const EmulationCall& call,
                               const std::vector<plugins::HostTensor>& outputs) {
  const auto kind = call.kernel.kind;
  if (kind != plugins::KernelKind::kAttentionForward &&
      kind != plugins::KernelKind::kAttentionBackward) {
    return "";
  }
  const auto named = [](const std::vector<plugins::HostTensor>& tensors, const char* name) {
    for (const auto& t : tensors) {
      if (t.name == name) return t.format;
    }
    return std::string();
  };
  const std::string out =
      named(outputs, kind == plugins::KernelKind::kAttentionForward ? "O" : "dQ");
  return attention::canonical_numerics(
      attention_config(call.kernel, call.model, call.parameters, named(call.inputs, "Q"), out));
}

void check_can_validate(const plugins::KernelInfo& kernel, const std::string& model, bool locate) {
  if (!has_kernel_emulator(kernel.kind)) {
    throw std::invalid_argument("validate cannot emulate " +
                                plugins::kernel_kind_name(kernel.kind) + " kernels yet (kernel '" +
                                kernel.name + "')");
  }
  if (model.empty() && kernel.emulation_model.empty()) {
    throw std::invalid_argument("kernel '" + kernel.name +
                                "' names no emulation model; pass --model to compare with one");
  }
  if (locate && kernel.kind != plugins::KernelKind::kAttentionForward &&
      kernel.kind != plugins::KernelKind::kAttentionBackward) {
    throw std::invalid_argument("--locate locates the differences of attention kernels; kernel '" +
                                kernel.name + "' is a " + plugins::kernel_kind_name(kernel.kind) +
                                " kernel");
  }
}

ValidationResult validate_kernel(plugins::Plugin& plugin, const plugins::KernelRequest& request,
                                 const ValidationOptions& options) {
  const plugins::KernelInfo& kernel = plugin.info().kernel(request.kernel);
  ValidationResult result;
  result.plugin = plugin.info().name;
  result.kernel = kernel.name;
  result.kind = plugins::kernel_kind_name(kernel.kind);
  result.declared_model = kernel.emulation_model;
  result.model = options.model.empty() ? kernel.emulation_model : options.model;
  result.claims_bit_exact = kernel.bit_exact;
  // A claim is about the declared model; trying another model is exploration unless asked.
  result.enforced =
      options.require_bit_exact || (kernel.bit_exact && result.model == kernel.emulation_model);
  result.inputs = request.inputs;
  result.parameters = request.parameters;

  // Everything that can be refused is refused before the plugin runs.
  check_can_validate(kernel, result.model, options.locate);
  result.emulated_outputs = plugins::prepare_outputs(kernel, request);
  ReferenceValues reference;
  const EmulationCall call{
      kernel,
      result.model,
      request.inputs,
      request.parameters,
      &plugin.info(),
      [&plugin](const std::string& name, const std::vector<uint32_t>& x,
                const std::vector<uint32_t>& d) { return run_device_function(plugin, name, x, d); },
      &reference};
  check_kernel_call(call, result.emulated_outputs);
  result.numerics = numerics_of(call, result.emulated_outputs);
  progress_stage("kernel");
  result.kernel_outputs = plugin.run(request);
  // Runs `step` of the host's emulation within the time limit, if any.
  const auto limited = [&](const std::string& what, const auto& step) {
    if (!options.time_limit) return step();
    const CancellationToken deadline(what + " of kernel '" + kernel.name + "' (model " +
                                         result.model + ") did not finish within " +
                                         plugins::seconds_text(*options.time_limit) +
                                         " and was stopped",
                                     CancellationToken::Clock::now() + *options.time_limit);
    const CancellationScope scope(&deadline);
    return step();
  };
  progress_stage("emulation");
  limited("simprec's emulation", [&] { emulate_kernel(call, result.emulated_outputs); });
  for (size_t i = 0; i < result.kernel_outputs.size(); ++i) {
    OutputComparison c = compare_outputs(result.kernel_outputs[i], result.emulated_outputs[i]);
    const auto ref = reference.find(c.name);
    if (ref != reference.end()) {
      add_reference_errors(c, result.kernel_outputs[i], result.emulated_outputs[i], ref->second);
    }
    result.comparisons.push_back(std::move(c));
  }
  if (options.locate) {
    progress_stage("locate");
    result.locate = limited("simprec's --locate", [&] {
      return locate_attention_call(call, result.kernel_outputs, result.emulated_outputs);
    });
  }
  return result;
}

void print_validation(std::FILE* out, const ValidationResult& r) {
  std::fprintf(
      out, "validate plugin=%s kernel=%s kind=%s model=%s declared-model=%s claims-bit-exact=%s\n",
      r.plugin.c_str(), r.kernel.c_str(), r.kind.c_str(), r.model.c_str(),
      r.declared_model.empty() ? "none" : r.declared_model.c_str(),
      r.claims_bit_exact ? "yes" : "no");
  if (!r.numerics.empty()) std::fprintf(out, "numerics %s\n", r.numerics.c_str());
  for (const auto& t : r.inputs) {
    std::fprintf(out, "input %s format=%s shape=%s\n", t.name.c_str(), t.format.c_str(),
                 plugins::shape_text(t.shape).c_str());
  }
  for (const auto& p : r.parameters) {
    std::fprintf(out, "parameter %s=%s\n", p.name.c_str(), plugins::value_text(p.value).c_str());
  }
  for (const auto& c : r.comparisons) {
    std::fprintf(out,
                 "output %s format=%s shape=%s values=%" PRId64 " bitwise-equal=%" PRId64
                 " (%s%%) both-nan=%" PRId64 " nan-mismatch=%" PRId64 "\n",
                 c.name.c_str(), c.format.c_str(), plugins::shape_text(c.shape).c_str(), c.values,
                 c.bitwise_equal, percentage_text(c.bitwise_equal, c.values).c_str(), c.both_nan,
                 c.nan_mismatch);
    for (const auto& b : c.histogram) {
      if (b.count > 0)
        std::fprintf(out, "  ulp %-16s %" PRId64 "\n", bucket_label(b).c_str(), b.count);
    }
    std::fprintf(out,
                 "  mean-signed-ulp %.6g max-abs-ulp %" PRId64
                 " mean-signed-difference %.6g mean-abs-value %.6g\n",
                 c.mean_signed_ulps, c.max_abs_ulps, c.mean_signed_difference, c.mean_abs_value);
    if (c.kernel_mean_signed_error && c.emulation_mean_signed_error) {
      std::fprintf(out,
                   "  reference kernel-mean-signed-error %.6g emulation-mean-signed-error %.6g\n",
                   *c.kernel_mean_signed_error, *c.emulation_mean_signed_error);
    }
  }
  if (r.locate) print_locate(out, *r.locate);
  if (r.bit_exact()) {
    std::fprintf(out, "result PASS bit-exact%s\n", r.claims_bit_exact ? " as claimed" : "");
  } else if (r.nan_mismatches() > 0) {
    std::fprintf(out, "result FAIL %" PRId64 " values are NaN in one output and not in the other\n",
                 r.nan_mismatches());
  } else if (r.enforced) {
    std::fprintf(out, "result FAIL %s\n",
                 r.claims_bit_exact
                     ? "the kernel claims bit-exact agreement with this model but differs"
                     : "differences where bit-exact agreement was required");
  } else {
    std::fprintf(out, "result DIFFERENT not bit-exact; no bit-exact claim for this model\n");
  }
}

}  // namespace simprec::validate
