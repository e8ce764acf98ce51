// `simprec attention`: emulated attention on given or generated inputs, compared with the exact
// reference; writes o.npy (and gradients), stats.json and a readable summary.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lib/attention/analysis.hpp"
#include "lib/attention/attention.hpp"
#include "lib/attention/dispatch.hpp"
#include "lib/attention/footprint.hpp"
#include "lib/attention/numerics_spec.hpp"
#include "lib/attention/options.hpp"
#include "lib/attention/preset.hpp"
#include "lib/attention/row_sum_diagnosis.hpp"
#include "lib/cli/command.hpp"
#include "lib/cli/masking_options.hpp"
#include "lib/cli/output_option.hpp"
#include "lib/cli/seed_option.hpp"
#include "lib/cli/threads_option.hpp"
#include "lib/inputs/generators.hpp"
#include "lib/inputs/query_rows.hpp"
#include "lib/limits/memory_bound.hpp"
#include "lib/limits/strict_parse.hpp"
#include "lib/metrics/error_metrics.hpp"
#include "lib/npy/npy.hpp"
#include "lib/progress/terminal_progress.hpp"

namespace simprec::cli {
namespace {

using namespace simprec::attention;

struct Options {
  std::string q, k, v, d_out, input_format;
  std::string generate, shape, preset, numerics, format = "bf16", tile, out, attribute_target = "o";
  std::string scale, max_memory;
  std::vector<std::string> sets, mitigations, gen_params;
  uint64_t seed = 0;
  std::string query_rows;  // --query-rows: emulate only a sample of this many query rows
  bool causal = false, attribute = false, backward = false, trace = false, no_baseline = false;
  bool quiet = false;
  unsigned threads = 0;
  MaskingOptions masking;
};

// B,H,N,d: four integers in [1, kMaxDimension].
std::vector<int64_t> parse_shape(const std::string& text) {
  std::vector<int64_t> values;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    try {
      values.push_back(limits::parse_integer(item, 1, kMaxDimension, "--shape entry"));
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string(e.what()) + " (expected --shape B,H,N,d)");
    }
  }
  if (values.size() != 4 || text.ends_with(','))
    throw UsageError("bad --shape '" + limits::excerpt(text) + "' (expected B,H,N,d)");
  return values;
}

// --scale: a finite positive number. Any such scale is run; where it makes scores overflow, the
// NaN and infinite outputs are counted and shown (docs/attention.md, "NaN rule").
double parse_scale(const std::string& text) {
  const auto value = limits::parse_finite_double(text);
  if (!value || !(*value > 0)) {
    throw UsageError("--scale '" + limits::excerpt(text) +
                     "' is not a softmax scale (expected a finite positive number)");
  }
  return *value;
}

inputs::GeneratorParams parse_generator_params(const std::vector<std::string>& items) {
  std::map<std::string, double> values;
  for (const auto& kv : items) {
    const size_t eq = kv.find('=');
    const auto value =
        eq == std::string::npos ? std::nullopt : limits::parse_finite_double(kv.substr(eq + 1));
    if (!value) {
      throw UsageError("bad --gen-param '" + limits::excerpt(kv) +
                       "' (expected peak=X, prototypes=N or concentration=X with a finite number)");
    }
    values[kv.substr(0, eq)] = *value;
  }
  try {
    return inputs::generator_params(values);
  } catch (const std::invalid_argument& e) {
    throw UsageError("--gen-param: " + std::string(e.what()));
  }
}

void print_metrics_line(const char* name, const metrics::ErrorMetrics& m) {
  std::printf(
      "  %-6s max|err| %-10.3g rms %-10.3g rel %-10.3g bias %-+11.3e se %-9.2e z %-+7.1f W1 %.3g\n",
      name, m.max_abs, m.rms, m.rel_frobenius, m.bias, m.bias_se, m.bias_z(), m.wasserstein1);
  if (m.nan_count || m.inf_count) std::printf("         %s\n", m.nonfinite_text().c_str());
}

void run(const Options& opt) {
  const auto start = std::chrono::steady_clock::now();
  int64_t query_rows = 0;  // 0: every row
  if (!opt.query_rows.empty()) {
    try {
      query_rows = limits::parse_integer(opt.query_rows, 1, kMaxDimension, "--query-rows");
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
  }
  // Configuration.
  AttentionConfig config;
  Format low;
  try {
    low = parse_format(opt.format);
    if (!opt.numerics.empty() && !opt.preset.empty())
      throw std::invalid_argument("--numerics names the preset; drop --preset " + opt.preset);
    NumericsSpec spec = parse_numerics_spec(
        opt.numerics.empty() ? (opt.preset.empty() ? "fa2" : opt.preset) : opt.numerics);
    if (!opt.tile.empty()) spec.assignments.push_back("tile=" + opt.tile);
    spec.assignments.insert(spec.assignments.end(), opt.sets.begin(), opt.sets.end());
    spec.mitigations.insert(spec.mitigations.end(), opt.mitigations.begin(), opt.mitigations.end());
    config = make_config(spec, low);
    low = config.low_precision;
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  config.causal = opt.causal;
  if (!opt.scale.empty()) config.scale = parse_scale(opt.scale);
  limits::MemoryLimit memory_limit;
  try {
    memory_limit = limits::memory_limit(opt.max_memory);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  AnalysisOptions analysis_options;
  analysis_options.baseline = !opt.no_baseline;
  analysis_options.attribute = opt.attribute;
  analysis_options.attribute_target = opt.attribute_target;
  // With --query-rows, the sampled problem's estimate and the full inputs it is taken from.
  const auto check_memory = [&](const AttentionShape& full, bool backward) {
    const AttentionShape shape = query_rows > 0 ? inputs::sampled_shape(full, query_rows) : full;
    limits::MemoryEstimate estimate =
        estimate_analysis_memory(shape, config, analysis_options, backward);
    if (query_rows > 0) estimate.add(inputs::sampling_memory(full));
    try {
      limits::check_memory(estimate, memory_limit, "attention on shape " + shape_text(full));
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
  };
  config.seed = opt.seed;
  config.threads = opt.threads;
  config.trace = opt.trace;

  // Inputs.
  AttentionInputs raw;
  std::vector<int64_t> leading;  // the leading dimensions of the input files
  std::string source;
  if (!opt.generate.empty()) {
    if (!opt.q.empty() || !opt.k.empty() || !opt.v.empty()) {
      throw UsageError("--generate replaces --q/--k/--v; give one or the other");
    }
    const auto dims = parse_shape(opt.shape);
    AttentionShape s{dims[0], dims[1], dims[2], dims[2], dims[3], dims[3]};
    try {
      check_shape(s);
    } catch (const std::invalid_argument& e) {
      throw UsageError("--shape " + opt.shape + ": " + e.what());
    }
    const inputs::GeneratorParams params = parse_generator_params(opt.gen_params);
    check_memory(s, opt.backward);
    try {
      raw = inputs::generate(opt.generate, s, opt.seed, opt.backward, params);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    leading = {dims[0], dims[1]};
    source = "generated " + opt.generate + " seed " + std::to_string(opt.seed);
  } else {
    if (opt.q.empty() || opt.k.empty() || opt.v.empty()) {
      throw UsageError("give --q, --k and --v (.npy files) or --generate KIND --shape B,H,N,d");
    }
    std::optional<Format> bits;
    if (!opt.input_format.empty()) {
      try {
        bits = parse_format(opt.input_format);
      } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
      }
    }
    std::optional<std::filesystem::path> d_out;
    if (!opt.d_out.empty()) d_out = opt.d_out;
    try {
      raw = inputs::load_inputs(opt.q, opt.k, opt.v, d_out, bits);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    const NpyArray header = read_npy(opt.q);
    leading.assign(header.shape.begin(), header.shape.end() - 2);
    check_memory(raw.shape, raw.has_grad());
    source = "files " + opt.q + ", " + opt.k + ", " + opt.v +
             (opt.d_out.empty() ? "" : ", " + opt.d_out);
  }
  if (query_rows > 0) {
    if (opt.masking.any()) {
      throw UsageError(
          "--query-rows samples rows of a problem without masks; drop the masking "
          "options or --query-rows");
    }
    if (opt.causal) {
      throw UsageError(
          "--query-rows samples rows of a problem without a causal mask (a sampled row would see "
          "other keys); drop --causal or --query-rows");
    }
    try {
      raw = inputs::select_query_rows(raw, query_rows);
    } catch (const std::invalid_argument& e) {
      throw UsageError("--query-rows: " + std::string(e.what()));
    }
    source += ", query rows sampled: " + std::to_string(raw.shape.nq);
  }
  const AttentionShape& s = raw.shape;
  if (opt.masking.any()) {
    if (leading.empty()) leading = {s.batch, s.heads};
    config.masking = opt.masking.masking(s, leading);
  }
  if (opt.attribute && opt.attribute_target != "o" && !raw.has_grad()) {
    throw UsageError("--attribute-target " + opt.attribute_target +
                     " needs dO (--do or --backward)");
  }

  // Emulation, reference, metrics, baseline, attribution.
  AttentionAnalysis analysis;
  try {
    ProgressMeter meter;
    const ProgressScope counted(&meter);
    const TerminalProgress shown("simprec attention", meter, !opt.quiet);
    analysis = analyse_attention(raw, config, analysis_options);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  const AttentionOutputs& out = analysis.outputs;
  const OutputMetrics& m = *analysis.metrics;
  const double scale = analysis.scale;
  const int64_t draws = s.batch;
  const Format o_format = config.site(Site::kOOut).format;
  const Format g_format = config.site(Site::kGradOut).format;

  // The tile the run used (the sram rule's for this head dimension, the dispatch's, flex's).
  const AttentionConfig tiled = resolve_for_shape(config, s);
  nlohmann::json stats;
  stats["config"] = to_json(tiled);
  stats["numerics"] = canonical_numerics(config);
  stats["inputs"] = {{"source", source},
                     {"shape",
                      {{"batch", s.batch},
                       {"heads", s.heads},
                       {"nq", s.nq},
                       {"nk", s.nk},
                       {"d", s.d},
                       {"dv", s.dv}}},
                     {"input_format", config.site(Site::kInput).format.name()},
                     {"draws", draws}};
  stats["scale"] = scale;
  stats["metrics"] = m.to_json();
  const RowSumDiagnosis row_sums = diagnose_row_sums(out, config);
  if (!out.row_sum.empty()) stats["row_sums"] = to_json(row_sums);
  if (analysis.baseline) stats["baseline"] = analysis.baseline->to_json(m);
  if (opt.trace) stats["trace"] = analysis.trace_json();
  if (analysis.attribution) stats["attribution"] = analysis.attribution->to_json();
  const auto end = std::chrono::steady_clock::now();
  stats["seconds"] = {{"emulation", analysis.emulation_seconds},
                      {"total", std::chrono::duration<double>(end - start).count()}};

  // Files.
  const limits::OutputFolder dir(opt.out);
  std::vector<int64_t> oshape = leading;
  oshape.push_back(s.nq);
  oshape.push_back(s.dv);
  write_npy(dir, "o.npy", stored_array(out.o, oshape, o_format));
  if (raw.has_grad()) {
    std::vector<int64_t> qshape = leading, kshape = leading, vshape = leading;
    if (!kshape.empty()) kshape.back() = vshape.back() = s.kv_heads();  // grouped-query heads
    qshape.insert(qshape.end(), {s.nq, s.d});
    kshape.insert(kshape.end(), {s.nk, s.d});
    vshape.insert(vshape.end(), {s.nk, s.dv});
    write_npy(dir, "dq.npy", stored_array(out.dq, qshape, g_format));
    write_npy(dir, "dk.npy", stored_array(out.dk, kshape, g_format));
    write_npy(dir, "dv.npy", stored_array(out.dv, vshape, g_format));
  }
  dir.write_file("stats.json", stats.dump(2) + "\n");

  // Summary.
  std::printf("numerics: %s\n", stats["numerics"].get<std::string>().c_str());
  std::printf("simprec attention: preset %s, format %s, %s attention, exp %s, tile %dx%d%s\n",
              config.preset.c_str(), low.name().c_str(),
              std::string(config.algorithm.name()).c_str(),
              std::string(config.exp_impl.name()).c_str(), tiled.block_rows, tiled.block_cols,
              config.masking.active() ? (", " + config.masking.describe(config.causal)).c_str()
              : config.causal         ? ", causal"
                                      : "");
  std::printf("inputs: %s; shape B=%lld H=%lld Nq=%lld Nk=%lld d=%lld dv=%lld; scale %.6g\n",
              source.c_str(), (long long)s.batch, (long long)s.heads, (long long)s.nq,
              (long long)s.nk, (long long)s.d, (long long)s.dv, scale);
  for (const auto& m : config.mitigations) std::printf("mitigation: %s\n", m.c_str());
  for (const auto& o : config.overrides) std::printf("override: %s\n", o.c_str());
  std::printf("error against the fp64 reference (bias se and z across %lld draws):\n",
              (long long)draws);
  print_metrics_line("O", m.o);
  if (raw.has_grad()) {
    print_metrics_line("dQ", *m.dq);
    print_metrics_line("dK", *m.dk);
    print_metrics_line("dV", *m.dv);
    print_metrics_line("D", *m.delta);
  }
  if (!row_sums.cause.empty()) std::printf("non-finite O: %s\n", row_sums.cause.c_str());
  if (analysis.baseline) {
    const metrics::ErrorMetrics& baseline_o = analysis.baseline->o;
    std::printf(
        "standard attention with the same sites: O max|err| %.3g rms %.3g; flash/standard ratio: "
        "max %.3g, rms %.3g\n",
        baseline_o.max_abs, baseline_o.rms, metrics::ratio(m.o.max_abs, baseline_o.max_abs),
        metrics::ratio(m.o.rms, baseline_o.rms));
  }
  if (opt.trace) {
    std::printf(
        "rounding sites (signed error of each rounding):\n  %-11s %10s %11s %11s %10s %9s %7s\n",
        "site", "count", "mean err", "mean ulp", "rms ulp", "exact", "ties");
    for (int i = 0; i < kSiteCount; ++i) {
      const auto& t = out.traces[i];
      if (!t.count) continue;
      std::printf("  %-11s %10llu %+11.3e %+11.4f %10.4f %8.1f%% %6.2f%%\n",
                  std::string(site_name(static_cast<Site>(i))).c_str(), (unsigned long long)t.count,
                  t.mean_error(), t.mean_error_ulp(), t.rms_error_ulp(), 100 * t.exact_fraction(),
                  100 * t.tie_fraction());
    }
  }
  if (analysis.attribution) std::printf("%s", analysis.attribution->table().c_str());
  std::printf("wrote %s (%s)%s and stats.json to %s\n", "o.npy", stored_kind(o_format).c_str(),
              raw.has_grad() ? ", dq.npy, dk.npy, dv.npy" : "", dir.path().string().c_str());
}

const RegisterCommand kRegistration([](CLI::App& app) {
  auto* command = app.add_subcommand(
      "attention",
      "Emulate attention (flash or standard, forward and backward) with named rounding sites, "
      "compare it with the exact reference and find where its bias comes from. See "
      "docs/attention.md.");
  auto opt = std::make_shared<Options>();
  command->add_option("--q", opt->q, "queries .npy, shape (..., N, d)");
  command->add_option("--k", opt->k, "keys .npy, shape (..., N, d)");
  command->add_option("--v", opt->v, "values .npy, shape (..., N, dv)");
  command->add_option("--do", opt->d_out,
                      "output gradient .npy, shape (..., N, dv): runs the backward pass");
  command->add_option("--input-format", opt->input_format,
                      "the .npy files hold bit patterns (uint16/uint8) of this format");
  command->add_option("--generate", opt->generate,
                      "generate inputs: normal, peaky, repeated-max, low-rank, sinks, outliers");
  command->add_option(
      "--gen-param", opt->gen_params,
      "generator parameter: peak=X (peaky), prototypes=N, concentration=X (repeated-max)");
  command->add_option("--shape", opt->shape, "B,H,N,d of generated inputs (B = independent draws)");
  add_seed_option(*command, opt->seed, "seed of generated inputs and stochastic rounding");
  command->add_flag("--backward", opt->backward,
                    "with --generate: also generate dO and run the backward pass");
  command->add_option("--numerics", opt->numerics,
                      "the numerics spec PRESET[,format=F][,SITE=FORMAT:ROUNDING[:ACC]...]"
                      "[,OPTION=VALUE...][,MITIGATION...] or a .toml file holding it "
                      "(`simprec numerics --list`)");
  std::string presets;
  for (const std::string& name : preset_names()) presets += (presets.empty() ? "" : ", ") + name;
  command->add_option(
      "--preset", opt->preset,
      "a kernel model: " + presets + " (default fa2); the same as --numerics PRESET");
  command->add_option("--format", opt->format,
                      "the preset's low-precision format unless the spec names one (default bf16)");
  command->add_option("--set", opt->sets,
                      "SITE=FORMAT:ROUNDING[:ACCUMULATION] or OPTION=VALUE (repeatable; "
                      "`simprec numerics --list`)");
  command->add_option("--mitigation", opt->mitigations, mitigation_syntax() + " (repeatable)");
  command->add_option("--tile", opt->tile, "BRxBC tile sizes (default: the preset's); tile=BRxBC");
  command->add_flag("--causal", opt->causal, "causal mask");
  opt->masking.add_to(*command);
  command->add_option("--query-rows", opt->query_rows,
                      "emulate only R evenly spaced query rows (row r * Nq / R) against every key: "
                      "long sequences at the cost of R rows; forward only, no causal mask");
  command->add_option("--scale", opt->scale,
                      "softmax scale, a finite positive number (default 1/sqrt(d))");
  command->add_option("--max-memory", opt->max_memory,
                      "refuse work whose estimated memory exceeds SIZE (e.g. 4G; default: the "
                      "machine's physical memory)");
  command->add_flag("--attribute", opt->attribute,
                    "rank the rounding sites by the bias they explain");
  command->add_option("--attribute-target", opt->attribute_target,
                      "o (default), dq, dk, dv or delta");
  command->add_flag("--trace", opt->trace, "per-site rounding error statistics");
  command->add_flag("--no-baseline", opt->no_baseline, "skip the standard-attention comparison");
  add_threads_option(*command, opt->threads, "--threads",
                     "threads over batch x heads (default: all cores)");
  command->add_option("--out", opt->out, "output directory")->required()->check(output_path());
  command->add_flag("--quiet", opt->quiet,
                    "no progress line on a terminal (shown on stderr after 2 s otherwise)");
  command->callback([opt] { run(*opt); });
});

}  // namespace
}  // namespace simprec::cli
