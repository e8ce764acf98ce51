#include "lib/validate/validation.hpp"

#include <cinttypes>
#include <stdexcept>

#include "lib/validate/kernel_emulation.hpp"

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

}  // namespace

bool ValidationResult::bit_exact() const {
  for (const auto& c : comparisons) {
    if (!c.bit_exact()) return false;
  }
  return true;
}

void check_can_validate(const plugins::KernelInfo& kernel, const std::string& model) {
  if (!has_kernel_emulator(kernel.kind)) {
    throw std::invalid_argument("validate cannot emulate " +
                                plugins::kernel_kind_name(kernel.kind) + " kernels yet (kernel '" +
                                kernel.name + "')");
  }
  if (model.empty() && kernel.emulation_model.empty()) {
    throw std::invalid_argument("kernel '" + kernel.name +
                                "' names no emulation model; pass --model to compare with one");
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
  check_can_validate(kernel, result.model);
  result.kernel_outputs = plugin.run(request);
  result.emulated_outputs = plugins::prepare_outputs(kernel, request);
  emulate_kernel({kernel, result.model, request.inputs, request.parameters},
                 result.emulated_outputs);
  for (size_t i = 0; i < result.kernel_outputs.size(); ++i) {
    result.comparisons.push_back(
        compare_outputs(result.kernel_outputs[i], result.emulated_outputs[i]));
  }
  return result;
}

void print_validation(std::FILE* out, const ValidationResult& r) {
  std::fprintf(
      out, "validate plugin=%s kernel=%s kind=%s model=%s declared-model=%s claims-bit-exact=%s\n",
      r.plugin.c_str(), r.kernel.c_str(), r.kind.c_str(), r.model.c_str(),
      r.declared_model.empty() ? "none" : r.declared_model.c_str(),
      r.claims_bit_exact ? "yes" : "no");
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
                 " (%.4g%%) both-nan=%" PRId64 " nan-mismatch=%" PRId64 "\n",
                 c.name.c_str(), c.format.c_str(), plugins::shape_text(c.shape).c_str(), c.values,
                 c.bitwise_equal,
                 c.values
                     ? 100.0 * static_cast<double>(c.bitwise_equal) / static_cast<double>(c.values)
                     : 100.0,
                 c.both_nan, c.nan_mismatch);
    for (const auto& b : c.histogram) {
      if (b.count > 0)
        std::fprintf(out, "  ulp %-16s %" PRId64 "\n", bucket_label(b).c_str(), b.count);
    }
    std::fprintf(out,
                 "  mean-signed-ulp %.6g max-abs-ulp %" PRId64
                 " mean-signed-difference %.6g mean-abs-value %.6g\n",
                 c.mean_signed_ulps, c.max_abs_ulps, c.mean_signed_difference, c.mean_abs_value);
  }
  if (r.bit_exact()) {
    std::fprintf(out, "result PASS bit-exact%s\n", r.claims_bit_exact ? " as claimed" : "");
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
