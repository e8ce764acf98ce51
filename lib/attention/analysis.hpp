// One attention study as `simprec attention` and the Python package run it: the emulation, the
// fp64 reference on the same rounded inputs, the error metrics, the standard-attention baseline
// of a flash configuration, per-site traces and the attribution of the bias to sites.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "lib/attention/attention.hpp"
#include "lib/attention/attribution.hpp"
#include "lib/metrics/error_metrics.hpp"
#include "lib/npy/npy.hpp"

namespace simprec::attention {

struct AnalysisOptions {
  bool reference = true;  // the fp64 reference and the metrics against it
  bool baseline = true;   // standard attention with the same sites (flash configurations only)
  bool attribute = false;
  std::string attribute_target = "o";  // o, dq, dk, dv or delta
  // The functions the caller supplies for the emulation (run_attention_with_device_functions);
  // none: device_math's, else correctly rounded at their sites. The reference and the baseline
  // never use them.
  DeviceFunctions device_functions;
};

// The metrics of O, LSE and, with dO, dQ, dK, dV and D against the reference.
struct OutputMetrics {
  metrics::ErrorMetrics o, lse;
  std::optional<metrics::ErrorMetrics> dq, dk, dv, delta;
  nlohmann::json to_json() const;
};

struct BaselineComparison {
  metrics::ErrorMetrics o;
  std::optional<metrics::ErrorMetrics> dq, dk, dv;
  nlohmann::json to_json(const OutputMetrics& flash) const;  // with the flash/standard ratios
};

struct AttentionAnalysis {
  AttentionConfig config;
  double scale = 0;
  AttentionOutputs outputs;
  std::optional<AttentionOutputs> reference;
  std::optional<OutputMetrics> metrics;
  std::optional<BaselineComparison> baseline;
  std::optional<AttributionResult> attribution;
  double emulation_seconds = 0;

  // The per-site traces as stats.json writes them (sites that rounded anything).
  nlohmann::json trace_json() const;
};

// Throws std::invalid_argument for an attribution target the inputs cannot give (a gradient
// without dO) or an unknown one.
AttentionAnalysis analyse_attention(const AttentionInputs& inputs, const AttentionConfig& config,
                                    const AnalysisOptions& options);

// Values as the npy type that holds `format` exactly: float64, float32, or bit patterns
// (uint16, uint8) rounded to nearest (exact for values already in the format).
NpyArray stored_array(const std::vector<double>& values, std::vector<int64_t> shape,
                      const Format& format);
// What stored_array gives, in words: "bf16 bit patterns (uint16)", "float32 values", ...
std::string stored_kind(const Format& format);

}  // namespace simprec::attention
