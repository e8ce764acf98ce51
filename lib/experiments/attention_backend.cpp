#include "lib/experiments/attention_backend.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>

#include "emulation/excerpt.hpp"
#include "emulation/round.hpp"
#include "lib/attention/attention.hpp"
#include "lib/attention/attribution.hpp"
#include "lib/attention/footprint.hpp"
#include "lib/attention/numerics_spec.hpp"
#include "lib/attention/options.hpp"
#include "lib/attention/preset.hpp"
#include "lib/attention/row_sum_diagnosis.hpp"
#include "lib/attention/score_mod.hpp"
#include "lib/inputs/generators.hpp"
#include "lib/inputs/query_rows.hpp"
#include "lib/limits/checked_arithmetic.hpp"
#include "lib/metrics/error_metrics.hpp"
#include "lib/npy/npy.hpp"
#include "plugins/host/plugin.hpp"

namespace simprec::experiments {
namespace {

using attention::AttentionConfig;

AttentionConfig build_config(const ImplementationSpec& impl) {
  attention::NumericsSpec spec;
  try {
    spec = attention::parse_numerics_spec(impl.numerics.empty() ? impl.preset : impl.numerics);
  } catch (const std::invalid_argument& e) {
    throw FieldError(impl.numerics.empty() ? "preset" : "numerics", e.what());
  }
  if (!impl.tile.empty()) spec.assignments.push_back("tile=" + impl.tile);
  const size_t set_from = spec.assignments.size();
  spec.assignments.insert(spec.assignments.end(), impl.set.begin(), impl.set.end());
  const size_t mitigations_from = spec.mitigations.size();
  spec.mitigations.insert(spec.mitigations.end(), impl.mitigations.begin(), impl.mitigations.end());
  Format low;
  try {
    low = parse_format(spec.format.empty() ? impl.format : spec.format);
  } catch (const std::invalid_argument& e) {
    throw FieldError("format", e.what());
  }
  // The parts one at a time, so that an error names the field it came from.
  AttentionConfig config;
  try {
    config = attention::make_config({spec.preset, low.name(), {}, {}}, low);
  } catch (const std::invalid_argument& e) {
    throw FieldError(impl.numerics.empty() ? "preset" : "numerics", e.what());
  }
  for (size_t i = 0; i < spec.assignments.size(); ++i) {
    try {
      attention::apply_override(config, spec.assignments[i]);
    } catch (const std::invalid_argument& e) {
      const bool tile = !impl.tile.empty() && i + 1 == set_from;
      throw FieldError(i >= set_from ? "set[" + std::to_string(i - set_from) + "]"
                       : tile        ? "tile"
                                     : "numerics",
                       e.what());
    }
  }
  for (size_t i = 0; i < spec.mitigations.size(); ++i) {
    try {
      attention::apply_mitigation(config, spec.mitigations[i]);
    } catch (const std::invalid_argument& e) {
      throw FieldError(i >= mitigations_from
                           ? "mitigations[" + std::to_string(i - mitigations_from) + "]"
                           : "numerics",
                       e.what());
    }
  }
  config.causal = impl.causal;
  config.masking.causal_align = attention::parse_causal_align(impl.causal_align, "causal_align");
  if (impl.window.size() == 2) {
    config.masking.window_left = impl.window[0];
    config.masking.window_right = impl.window[1];
  }
  config.masking.softcap = impl.softcap;
  config.masking.alibi_default = impl.alibi_default;
  if (!impl.mask_mod.empty())
    config.masking.mask_mod = std::make_shared<const attention::MaskMod>(
        impl.mask_mod, std::vector<attention::ScoreModTensor>{});
  if (!impl.score_mod.empty())
    config.masking.score_mod = std::make_shared<const attention::ScoreMod>(
        impl.score_mod, std::vector<attention::ScoreModTensor>{});
  return config;
}

ImplementationSpec implementation_from_json(const nlohmann::json& j) {
  ImplementationSpec impl;
  impl.name = j.value("name", "");
  impl.preset = j.value("preset", "");
  impl.numerics = j.value("numerics", "");
  impl.plugin = j.value("plugin", "");
  impl.kernel = j.value("kernel", "");
  impl.format = j.value("format", "bf16");
  impl.tile = j.value("tile", "");
  impl.causal = j.value("causal", false);
  impl.causal_align = j.value("causal_align", "top-left");
  impl.window = j.value("window", std::vector<int64_t>{});
  impl.softcap = j.value("softcap", 0.0);
  impl.alibi_default = j.value("alibi", "") == "default";
  impl.score_mod = j.value("score_mod", "");
  impl.mask_mod = j.value("mask_mod", "");
  impl.set = j.value("set", std::vector<std::string>{});
  impl.mitigations = j.value("mitigations", std::vector<std::string>{});
  return impl;
}

attention::AttentionShape generated_shape(const std::vector<int64_t>& shape) {
  attention::AttentionShape s;
  s.batch = shape.at(0);
  s.heads = shape.at(1);
  s.nq = s.nk = shape.at(2);
  s.d = s.dv = shape.at(3);
  return s;
}

// The shape of file inputs from their headers (the data is not read).
attention::AttentionShape file_shape(const std::string& q, const std::string& k,
                                     const std::string& v) {
  const NpyArray qh = read_npy_header(q), kh = read_npy_header(k), vh = read_npy_header(v);
  for (const NpyArray* h : {&qh, &kh, &vh}) {
    if (h->shape.size() < 2) throw std::invalid_argument(q + ": expected shape (..., N, d)");
  }
  attention::AttentionShape s;
  const size_t rank = qh.shape.size();
  s.nq = qh.shape[rank - 2];
  s.d = qh.shape[rank - 1];
  s.nk = kh.shape[kh.shape.size() - 2];
  s.dv = vh.shape.back();
  s.heads = limits::checked_product(std::span<const int64_t>(qh.shape.data(), rank - 2), q);
  return s;
}

// The shape a generated input's cases run on: with query_rows, the sampled rows.
attention::AttentionShape case_shape(const nlohmann::json& in) {
  const attention::AttentionShape s = generated_shape(in["shape"].get<std::vector<int64_t>>());
  const int64_t rows = in.value("query_rows", int64_t{0});
  return rows > 0 ? inputs::sampled_shape(s, rows) : s;
}

attention::AttentionInputs make_inputs(const nlohmann::json& in, bool backward) {
  if (in.contains("generator")) {
    const attention::AttentionShape s = generated_shape(in["shape"].get<std::vector<int64_t>>());
    const inputs::GeneratorParams p =
        inputs::generator_params(in.value("options", std::map<std::string, double>{}));
    attention::AttentionInputs generated =
        inputs::generate(in["generator"].get<std::string>(), s, in["seed"].get<uint64_t>(),
                         backward && in.value("backward", true), p);
    const int64_t rows = in.value("query_rows", int64_t{0});
    return rows > 0 ? inputs::select_query_rows(generated, rows) : generated;
  }
  std::optional<Format> bits;
  if (in.contains("input_format")) bits = parse_format(in["input_format"].get<std::string>());
  std::optional<std::filesystem::path> d_out;
  if (backward && in.contains("do")) d_out = in["do"].get<std::string>();
  return inputs::load_inputs(in["q"].get<std::string>(), in["k"].get<std::string>(),
                             in["v"].get<std::string>(), d_out, bits);
}

// The attribution in the record layout of docs/experiments.md: one row per site with its
// exact and stochastic reruns side by side, ranked by the share made exact explains.
nlohmann::json attribution_json(const attention::AttributionResult& a,
                                const std::vector<std::string>& only) {
  const auto z = [](double bias, double se) { return se > 0 ? bias / se : 0.0; };
  std::map<std::string, nlohmann::json> rows;
  for (const auto& s : a.exact) {
    const std::string name(attention::site_name(s.site));
    if (!only.empty() && std::find(only.begin(), only.end(), name) == only.end()) continue;
    rows[name] = {{"site", name},
                  {"bias_exact", s.bias_without},
                  {"bias_z_exact", z(s.bias_without, s.bias_without_se)},
                  {"explained_exact", s.fraction}};
  }
  for (const auto& s : a.stochastic) {
    const std::string name(attention::site_name(s.site));
    if (!only.empty() && std::find(only.begin(), only.end(), name) == only.end()) continue;
    if (!rows.count(name)) rows[name] = {{"site", name}};  // a cast feeding a tensor-core product
    rows[name]["bias_sr"] = s.bias_without;
    rows[name]["bias_z_sr"] = z(s.bias_without, s.bias_without_se);
    rows[name]["explained_sr"] = s.fraction;
  }
  std::vector<nlohmann::json> ranked;
  for (auto& [_, row] : rows) ranked.push_back(std::move(row));
  // Ranked by the larger share either rerun explains: a site whose rounding is biased shows it
  // when made unbiased, even where making it exact shifts the bias elsewhere.
  const auto share = [](const nlohmann::json& row) {
    return std::max(row.value("explained_exact", 0.0), row.value("explained_sr", 0.0));
  };
  std::stable_sort(ranked.begin(), ranked.end(),
                   [&](const auto& x, const auto& y) { return share(x) > share(y); });
  return {{"output", a.target},
          {"bias", a.bias_full},
          {"bias_se", a.bias_full_se},
          {"bias_z", z(a.bias_full, a.bias_full_se)},
          {"sites", ranked}};
}

// The plugin's attention-forward kernel, or a FieldError saying why it cannot serve.
struct OpenedKernel {
  std::unique_ptr<plugins::Plugin> plugin;
  plugins::KernelInfo kernel;
};
OpenedKernel plugin_kernel(const ImplementationSpec& impl) {
  if (!std::filesystem::exists(impl.plugin))
    throw FieldError("plugin", "file '" + impl.plugin + "' does not exist");
  std::unique_ptr<plugins::Plugin> plugin;
  try {
    plugin = plugins::open_plugin(impl.plugin);
  } catch (const std::exception& e) {
    throw FieldError("plugin", e.what());
  }
  plugins::KernelInfo kernel;
  try {
    kernel = plugin->info().kernel(impl.kernel);
  } catch (const std::exception& e) {
    throw FieldError("kernel", e.what());
  }
  if (kernel.kind != plugins::KernelKind::kAttentionForward) {
    throw FieldError("kernel", "kernel '" + impl.kernel + "' is a " +
                                   plugins::kernel_kind_name(kernel.kind) +
                                   " kernel; experiments compare attention-forward kernels");
  }
  for (const char* operand : {"Q", "K", "V", "O"}) {
    if (!kernel.operand(operand))
      throw FieldError("kernel", "kernel '" + impl.kernel + "' has no operand " + operand);
  }
  return {std::move(plugin), std::move(kernel)};
}

// A plugin kernel's parameters for the implementation's mitigations, through the mitigation
// table (lib/attention/options.hpp), and the case's seed where SR asks for random bits. A
// mitigation no kernel parameter expresses, or one this kernel lacks, is a FieldError.
std::vector<plugins::NamedValue> mitigation_parameters(const plugins::KernelInfo& kernel,
                                                       const ImplementationSpec& impl,
                                                       uint64_t seed) {
  std::vector<plugins::NamedValue> out;
  for (size_t i = 0; i < impl.mitigations.size(); ++i) {
    const std::string& text = impl.mitigations[i];
    const std::string field = "mitigations[" + std::to_string(i) + "]";
    std::vector<attention::KernelParameter> parameters;
    try {
      parameters = attention::mitigation_kernel_parameters(text);
    } catch (const std::invalid_argument& e) {
      throw FieldError(field, e.what());
    }
    bool random = false;
    for (const auto& p : parameters) {
      if (!kernel.parameter(p.name)) {
        throw FieldError(field, "kernel '" + kernel.name + "' has no parameter '" + p.name +
                                    "' for mitigation '" + text + "'");
      }
      random = random || p.name == "sr_p_bits";
      std::visit([&](auto v) { out.push_back({p.name, v}); }, p.value);
    }
    if (random && kernel.parameter("seed")) out.push_back({"seed", static_cast<int64_t>(seed)});
  }
  return out;
}

// Runs a plugin's attention forward on the case's inputs, rounded into the kernel's input
// format (the reference sees the same rounded values), and measures O against the reference.
nlohmann::json run_plugin_case(const ImplementationSpec& impl,
                               const attention::AttentionInputs& raw, uint64_t seed,
                               unsigned threads) {
  const OpenedKernel opened = plugin_kernel(impl);
  const plugins::KernelInfo& kernel = opened.kernel;
  const std::string in_format = kernel.operand("Q")->formats.at(0);
  const std::string out_format = kernel.operand("O")->formats.at(0);
  const Format in_f = parse_format(in_format), out_f = parse_format(out_format);
  const auto& s = raw.shape;
  const auto tensor = [&](const char* name, const std::vector<double>& values, int64_t n, int64_t d,
                          std::vector<double>& rounded) {
    plugins::HostTensor t = plugins::HostTensor::zeros(name, in_format, {s.batch, s.heads, n, d});
    rounded.resize(values.size());
    for (size_t i = 0; i < values.size(); ++i) {
      const uint64_t bits = round_to_format(in_f, unrounded_from_double(values[i]), {});
      t.set_bits_at(static_cast<int64_t>(i), bits);
      rounded[i] = decode(in_f, bits);
    }
    return t;
  };
  attention::AttentionInputs seen;
  seen.shape = s;
  plugins::KernelRequest request;
  request.kernel = impl.kernel;
  request.inputs.push_back(tensor("Q", raw.q, s.nq, s.d, seen.q));
  request.inputs.push_back(tensor("K", raw.k, s.nk, s.d, seen.k));
  request.inputs.push_back(tensor("V", raw.v, s.nk, s.dv, seen.v));
  const double scale = 1.0 / std::sqrt(static_cast<double>(s.d));
  if (kernel.parameter("causal"))
    request.parameters.push_back({"causal", impl.causal});
  else if (impl.causal)
    throw std::invalid_argument("kernel '" + impl.kernel + "' has no causal parameter");
  if (kernel.parameter("scale")) request.parameters.push_back({"scale", scale});
  for (auto& p : mitigation_parameters(kernel, impl, seed)) request.parameters.push_back(p);
  request.output_formats["O"] = out_format;
  const auto& plugin = opened.plugin;
  const auto outputs = plugin->run(request);
  const auto o =
      std::find_if(outputs.begin(), outputs.end(), [](const auto& t) { return t.name == "O"; });
  if (o == outputs.end()) throw std::runtime_error("plugin returned no O");
  std::vector<double> o_values(static_cast<size_t>(o->element_count()));
  for (size_t i = 0; i < o_values.size(); ++i)
    o_values[i] = decode(out_f, o->bits_at(static_cast<int64_t>(i)));
  const attention::AttentionOutputs reference =
      attention::reference_attention(seen, scale, impl.causal, threads);
  nlohmann::json results;
  results["outputs"]["o"] =
      metrics::compute_metrics(o_values, reference.o, s.batch, out_f).to_json();
  results["plugin"] = {{"path", impl.plugin},
                       {"kernel", impl.kernel},
                       {"name", plugin->info().name},
                       {"version", plugin->info().version},
                       {"input_format", in_format},
                       {"output_format", out_format},
                       {"emulation_model", kernel.emulation_model}};
  return results;
}

}  // namespace

void AttentionBackend::check_input(const InputSpec& input) const {
  if (!input.generator.empty()) {
    const auto kinds = inputs::generator_kinds();
    if (std::find(kinds.begin(), kinds.end(), input.generator) == kinds.end()) {
      std::string list;
      for (const auto& k : kinds) list += (list.empty() ? "" : ", ") + k;
      throw FieldError("generator", "unknown generator '" + excerpt(input.generator) +
                                        "': expected one of " + list);
    }
    try {
      inputs::generator_params(input.options);
    } catch (const std::invalid_argument& e) {
      throw FieldError("options", e.what());
    }
    try {
      attention::check_shape(generated_shape(input.shape));
    } catch (const std::invalid_argument& e) {
      throw FieldError("shape", e.what());
    }
  } else {
    std::optional<Format> bits;
    if (!input.input_format.empty()) {
      try {
        bits = parse_format(input.input_format);
      } catch (const std::invalid_argument& e) {
        throw FieldError("input_format", e.what());
      }
    }
    // Read the files now, so that a malformed one or shapes that disagree stop the run before
    // any case starts.
    try {
      std::optional<std::filesystem::path> d_out;
      if (!input.d_out.empty()) d_out = input.d_out;
      inputs::load_inputs(input.q, input.k, input.v, d_out, bits);
    } catch (const std::exception& e) {
      throw FieldError("q", e.what());
    }
  }
}

void AttentionBackend::check_implementation(const ImplementationSpec& impl) const {
  if (!impl.plugin.empty()) {
    mitigation_parameters(plugin_kernel(impl).kernel, impl, 0);
    return;
  }
  build_config(impl);
}

limits::MemoryEstimate AttentionBackend::estimate_memory(const nlohmann::json& params) const {
  const ImplementationSpec impl = implementation_from_json(params["implementation"]);
  const auto& in = params["input"];
  const bool backward = params["analysis"].value("backward", true) &&
                        (in.contains("generator") ? in.value("backward", true) : in.contains("do"));
  const attention::AttentionShape shape =
      in.contains("generator") ? case_shape(in)
                               : file_shape(in["q"].get<std::string>(), in["k"].get<std::string>(),
                                            in["v"].get<std::string>());
  attention::FootprintUse use;
  use.threads = 1;
  if (!impl.plugin.empty()) return attention::estimate_memory(shape, AttentionConfig{}, use);
  use.backward = backward;
  // The emulation's outputs, the reference's and, with attribution, a rerun's.
  use.output_sets = params["analysis"].value("attribute", false) ? 3 : 2;
  limits::MemoryEstimate estimate = attention::estimate_memory(shape, build_config(impl), use);
  if (in.value("query_rows", int64_t{0}) > 0) {
    estimate.add(inputs::sampling_memory(generated_shape(in["shape"].get<std::vector<int64_t>>())));
  }
  return estimate;
}

nlohmann::json AttentionBackend::run_case(const nlohmann::json& params, unsigned threads) const {
  const ImplementationSpec impl = implementation_from_json(params["implementation"]);
  const auto& analysis = params["analysis"];
  if (!impl.plugin.empty())
    return run_plugin_case(impl, make_inputs(params["input"], false),
                           params["input"].value("seed", uint64_t{0}), threads);
  AttentionConfig config = build_config(impl);
  if (config.causal && params["input"].value("query_rows", int64_t{0}) > 0) {
    throw std::invalid_argument(
        "query_rows samples rows of a problem without a causal mask (a sampled row would see "
        "other keys); this case is causal");
  }
  config.threads = threads;
  config.trace = true;
  const bool backward = analysis.value("backward", true);
  const attention::AttentionInputs raw = make_inputs(params["input"], backward);
  const attention::AttentionInputs rounded = attention::round_inputs_for_reference(raw, config);
  const attention::AttentionOutputs reference = attention::reference_attention(
      rounded, attention::softmax_scale(config, raw.shape), config.causal, threads);
  const attention::AttentionOutputs out = attention::run_attention(raw, config);

  const int64_t draws = raw.shape.batch;
  nlohmann::json results;
  const auto wanted =
      analysis.value("outputs", std::vector<std::string>{"o", "delta", "dq", "dk", "dv"});
  const auto add_metrics = [&](const char* name, const std::vector<double>& test,
                               const std::vector<double>& ref, const Format& format) {
    if (test.empty() || ref.empty()) return;
    if (std::find(wanted.begin(), wanted.end(), name) == wanted.end()) return;
    results["outputs"][name] = metrics::compute_metrics(test, ref, draws, format).to_json();
  };
  const Format& o_format = config.site(attention::Site::kOOut).format;
  const Format& grad_format = config.site(attention::Site::kGradOut).format;
  add_metrics("o", out.o, reference.o, o_format);
  add_metrics("delta", out.delta, reference.delta, config.site(attention::Site::kD).format);
  add_metrics("dq", out.dq, reference.dq, grad_format);
  add_metrics("dk", out.dk, reference.dk, grad_format);
  add_metrics("dv", out.dv, reference.dv, grad_format);
  for (int s = 0; s < attention::kSiteCount; ++s) {
    if (out.traces[s].count > 0) {
      results["traces"][std::string(attention::site_name(static_cast<attention::Site>(s)))] =
          out.traces[s].to_json();
    }
  }
  if (analysis.value("attribute", false)) {
    AttentionConfig quiet = config;
    quiet.trace = false;
    const auto a = attention::attribute_sites(raw, quiet, reference, "o", true);
    results["attribution"] =
        attribution_json(a, analysis.value("attribute_sites", std::vector<std::string>{}));
  }
  if (!out.row_sum.empty())
    results["row_sums"] = attention::to_json(attention::diagnose_row_sums(out, config));
  // The tile the run used: the sram rule's for this head dimension.
  results["config"] = attention::to_json(attention::with_sram_tile(config, raw.shape.d));
  results["numerics"] = attention::canonical_numerics(config);
  return results;
}

}  // namespace simprec::experiments
