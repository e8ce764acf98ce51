#include "lib/attention/analysis.hpp"

#include <chrono>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "emulation/bulk.hpp"
#include "emulation/progress.hpp"

namespace simprec::attention {

nlohmann::json OutputMetrics::to_json() const {
  nlohmann::json j;
  j["o"] = o.to_json();
  j["lse"] = lse.to_json();
  if (dq) {
    j["dq"] = dq->to_json();
    j["dk"] = dk->to_json();
    j["dv"] = dv->to_json();
    j["delta"] = delta->to_json();
  }
  return j;
}

nlohmann::json BaselineComparison::to_json(const OutputMetrics& flash) const {
  nlohmann::json b{{"o", o.to_json()},
                   {"ratio_max_abs", metrics::ratio(flash.o.max_abs, o.max_abs)},
                   {"ratio_rms", metrics::ratio(flash.o.rms, o.rms)}};
  if (dq) {
    const char* names[] = {"dq", "dk", "dv"};
    const metrics::ErrorMetrics* standard[] = {&*dq, &*dk, &*dv};
    const metrics::ErrorMetrics* tiled[] = {&*flash.dq, &*flash.dk, &*flash.dv};
    for (int i = 0; i < 3; ++i) {
      b[names[i]] = standard[i]->to_json();
      b[std::string("ratio_rms_") + names[i]] = metrics::ratio(tiled[i]->rms, standard[i]->rms);
    }
  }
  return b;
}

nlohmann::json AttentionAnalysis::trace_json() const {
  nlohmann::json tj = nlohmann::json::object();
  for (int i = 0; i < kSiteCount; ++i) {
    if (outputs.traces[i].count)
      tj[std::string(site_name(static_cast<Site>(i)))] = outputs.traces[i].to_json();
  }
  return tj;
}

namespace {

OutputMetrics metrics_of(const AttentionOutputs& out, const AttentionOutputs& ref, int64_t draws,
                         const AttentionConfig& config) {
  const Format g_format = config.site(Site::kGradOut).format;
  OutputMetrics m;
  m.o = metrics::compute_metrics(out.o, ref.o, draws, config.site(Site::kOOut).format);
  m.lse = metrics::compute_metrics(out.lse, ref.lse, draws, config.site(Site::kLse).format);
  if (!out.dq.empty()) {
    m.dq = metrics::compute_metrics(out.dq, ref.dq, draws, g_format);
    m.dk = metrics::compute_metrics(out.dk, ref.dk, draws, g_format);
    m.dv = metrics::compute_metrics(out.dv, ref.dv, draws, g_format);
    m.delta = metrics::compute_metrics(out.delta, ref.delta, draws, config.site(Site::kD).format);
  }
  return m;
}

BaselineComparison baseline_of(const AttentionInputs& inputs, const AttentionConfig& config,
                               const AttentionOutputs& ref, int64_t draws) {
  // The same sites in standard (non-tiled) attention: the flash-vs-baseline deviation ratio.
  AttentionConfig standard = config;
  standard.algorithm = find_strategy<Algorithm>("standard");
  standard.trace = false;
  const AttentionOutputs out = run_attention(inputs, standard);
  const Format g_format = config.site(Site::kGradOut).format;
  BaselineComparison b;
  b.o = metrics::compute_metrics(out.o, ref.o, draws, config.site(Site::kOOut).format);
  if (inputs.has_grad()) {
    b.dq = metrics::compute_metrics(out.dq, ref.dq, draws, g_format);
    b.dk = metrics::compute_metrics(out.dk, ref.dk, draws, g_format);
    b.dv = metrics::compute_metrics(out.dv, ref.dv, draws, g_format);
  }
  return b;
}

}  // namespace

AttentionAnalysis analyse_attention(const AttentionInputs& inputs, const AttentionConfig& config,
                                    const AnalysisOptions& options) {
  if (options.attribute) {
    if (!options.reference)
      throw std::invalid_argument("attribution needs the fp64 reference; do not turn it off");
    if (options.attribute_target != "o" && !inputs.has_grad())
      throw std::invalid_argument("attribution target '" + options.attribute_target +
                                  "' needs dO (the backward pass)");
  }
  AttentionAnalysis a;
  a.config = config;
  a.scale = softmax_scale(config, inputs.shape);
  const auto start = std::chrono::steady_clock::now();
  progress_stage("emulation");
  a.outputs = options.device_functions.empty()
                  ? run_attention(inputs, config)
                  : run_attention_with_device_functions(inputs, config, options.device_functions);
  a.emulation_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!options.reference) return a;

  progress_stage("fp64 reference");
  const AttentionInputs rounded = round_inputs_for_reference(inputs, config);
  a.reference =
      reference_attention(rounded, a.scale, config.causal, config.threads, config.masking);
  const int64_t draws = inputs.shape.batch;
  a.metrics = metrics_of(a.outputs, *a.reference, draws, config);
  if (config.flash() && options.baseline) {
    progress_stage("baseline");
    a.baseline = baseline_of(inputs, config, *a.reference, draws);
  }
  if (options.attribute) {
    progress_stage("attribution");
    a.attribution = attribute_sites(inputs, config, *a.reference, options.attribute_target);
  }
  return a;
}

NpyArray stored_array(const std::vector<double>& values, std::vector<int64_t> shape,
                      const Format& format) {
  if (format == formats::fp64) return make_npy<double>(shape, values);
  if (format.width() <= 16) {
    const BulkRounding spec{format, Rounding{}, RandomStream{}, 0, 1};
    if (format.width() <= 8) {
      std::vector<uint8_t> bits(values.size());
      round_to_bits<double, uint8_t>(values, bits, spec);
      return make_npy<uint8_t>(shape, bits);
    }
    std::vector<uint16_t> bits(values.size());
    round_to_bits<double, uint16_t>(values, bits, spec);
    return make_npy<uint16_t>(shape, bits);
  }
  if (format.precision() <= 24 && format.emax() <= 127 && format.emin() >= -126) {
    const std::vector<float> f(values.begin(), values.end());
    return make_npy<float>(shape, f);
  }
  return make_npy<double>(shape, values);
}

std::string stored_kind(const Format& f) {
  if (f == formats::fp64) return "float64 values";
  if (f.width() <= 8) return f.name() + " bit patterns (uint8)";
  if (f.width() <= 16) return f.name() + " bit patterns (uint16)";
  if (f.precision() <= 24) return "float32 values";
  return "float64 values";
}

}  // namespace simprec::attention
