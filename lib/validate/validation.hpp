// `simprec validate`: run a plugin kernel and the emulation that claims to reproduce it on the
// same inputs, and say how far apart they are.
#pragma once

#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "lib/validate/locate.hpp"
#include "lib/validate/output_comparison.hpp"
#include "plugins/host/kernel_request.hpp"
#include "plugins/host/plugin.hpp"

namespace simprec::validate {

struct ValidationOptions {
  std::string model;               // empty: the model the kernel declares
  bool require_bit_exact = false;  // fail on any difference, whatever the kernel claims
  // The longest the host's emulation of the kernel may take (the plugin's own steps have the
  // limit of its OpenOptions); past it the emulation stops at its next cancellation point with
  // Cancelled (emulation/cancellation.hpp). None: no limit.
  std::optional<std::chrono::milliseconds> time_limit;
  // Attention kernels: where the outputs differ and which choice of the numerics would make them
  // agree (locate.hpp), within time_limit of its own.
  bool locate = false;
};

struct ValidationResult {
  std::string plugin;
  std::string kernel;
  std::string kind;
  std::string model;  // the model compared with
  std::string declared_model;
  std::string numerics;           // attention kernels: the canonical numerics spec emulated
  bool claims_bit_exact = false;  // the kernel's claim
  bool enforced = false;          // whether differences fail the run
  std::vector<plugins::HostTensor> inputs;
  std::vector<plugins::NamedValue> parameters;
  std::vector<plugins::HostTensor> kernel_outputs, emulated_outputs;
  std::vector<OutputComparison> comparisons;
  std::optional<LocateReport> locate;  // when asked for

  bool bit_exact() const;
  // NaN where the other side has none is never a rounding difference: it fails whatever the
  // claim. Otherwise differences fail only when enforced.
  int64_t nan_mismatches() const;
  bool passed() const { return nan_mismatches() == 0 && (!enforced || bit_exact()); }
};

// Throws std::invalid_argument unless validate can emulate the kernel with `model` (empty: the
// declared one): a kind without emulation yet, no model named, --locate (`locate`) for a kernel
// that is not an attention kernel. Cheap; call it before making inputs.
void check_can_validate(const plugins::KernelInfo& kernel, const std::string& model,
                        bool locate = false);

// Throws std::invalid_argument for a request that does not fit, PluginError when the plugin
// fails, crashes or times out, Cancelled when the emulation outlives options.time_limit.
ValidationResult validate_kernel(plugins::Plugin& plugin, const plugins::KernelRequest& request,
                                 const ValidationOptions& options);

// Runs device-function kernel `name` of the plugin (x [N] fp32 -> y [N] fp32; with d, x [N] and
// the divisor d [N]) on the arguments (fp32 bit patterns; d empty or of x's length), in calls
// that fit its dimension constraints (zero-padded; a padded divisor is 1); returns y's bit
// patterns. Throws std::invalid_argument when the kernel is not such a function.
std::vector<uint32_t> run_device_function(plugins::Plugin& plugin, const std::string& name,
                                          const std::vector<uint32_t>& x,
                                          const std::vector<uint32_t>& d = {});

// The human-readable report (format in docs/plugins.md).
void print_validation(std::FILE* out, const ValidationResult& result);

}  // namespace simprec::validate
