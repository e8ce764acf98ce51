// Attention forward and backward with the analysis `simprec attention` prints and writes:
// outputs, the metrics against the fp64 reference, the standard-attention baseline, per-site
// traces and the attribution of the bias to sites. Also the input generators.
#include <pybind11/stl.h>

#include <nlohmann/json.hpp>

#include "lib/attention/analysis.hpp"
#include "lib/attention/footprint.hpp"
#include "lib/attention/numerics_spec.hpp"
#include "lib/attention/row_sum_diagnosis.hpp"
#include "lib/inputs/generators.hpp"
#include "python/src/arguments.hpp"
#include "python/src/attention_call.hpp"
#include "python/src/bindings.hpp"
#include "python/src/device_functions.hpp"
#include "python/src/integer_arguments.hpp"
#include "python/src/interruptible.hpp"
#include "python/src/masking_arguments.hpp"

namespace py = pybind11;

namespace simprec::python {
namespace {

std::vector<int64_t> with(std::vector<int64_t> leading, std::initializer_list<int64_t> tail) {
  leading.insert(leading.end(), tail);
  return leading;
}

py::dict run_attention_call(const py::object& q, const py::object& k, const py::object& v,
                            const py::object& d_out, const ConfigChoices& choices,
                            const std::optional<std::string>& input_format, const py::object& o,
                            const py::object& lse, const attention::AnalysisOptions& options,
                            const py::object& max_memory, const MaskingArguments& masking) {
  const limits::MemoryLimit memory_limit = memory_limit_argument(max_memory);
  std::vector<int64_t> leading;
  attention::AttentionInputs in = attention_inputs(q, k, v, d_out, input_format, leading);
  const attention::AttentionShape s = in.shape;
  if (o.is_none() != lse.is_none())
    throw py::value_error("o and lse: give both (a forward pass to differentiate) or neither");
  if (!o.is_none()) {
    if (d_out.is_none()) throw py::value_error("o and lse are taken only with do");
    in.o = values_argument(o, "o", with(leading, {s.nq, s.dv}));
    in.lse = values_argument(lse, "lse", with(leading, {s.nq}));
  }
  attention::AttentionConfig config = attention_config(choices);
  config.masking = masking_argument(masking, s, leading);
  // dK and dV have K's leading dimensions (fewer heads with grouped-query attention).
  std::vector<int64_t> kv_leading = leading;
  if (!kv_leading.empty()) kv_leading.back() = s.kv_heads();
  check_memory_argument(attention::estimate_analysis_memory(s, config, options, in.has_grad()),
                        memory_limit, "attention on shape " + attention::shape_text(s));
  attention::AttentionAnalysis a =
      interruptible([&] { return attention::analyse_attention(in, config, options); });
  py::dict r;
  r["o"] = numpy_of(std::move(a.outputs.o), with(leading, {s.nq, s.dv}));
  r["lse"] = numpy_of(std::move(a.outputs.lse), with(leading, {s.nq}));
  if (in.has_grad()) {
    r["dq"] = numpy_of(std::move(a.outputs.dq), with(leading, {s.nq, s.d}));
    r["dk"] = numpy_of(std::move(a.outputs.dk), with(kv_leading, {s.nk, s.d}));
    r["dv"] = numpy_of(std::move(a.outputs.dv), with(kv_leading, {s.nk, s.dv}));
    r["delta"] = numpy_of(std::move(a.outputs.delta), with(leading, {s.nq}));
  }
  // The parts of the CLI's stats.json, as JSON text (the Python side parses it).
  nlohmann::json stats;
  stats["config"] = attention::to_json(attention::with_sram_tile(config, s.d));
  stats["numerics"] = attention::canonical_numerics(config);
  stats["scale"] = a.scale;
  if (a.metrics) stats["metrics"] = a.metrics->to_json();
  if (!a.outputs.row_sum.empty())
    stats["row_sums"] = attention::to_json(attention::diagnose_row_sums(a.outputs, config));
  if (a.baseline) stats["baseline"] = a.baseline->to_json(*a.metrics);
  if (config.trace) stats["trace"] = a.trace_json();
  if (a.attribution) stats["attribution"] = a.attribution->to_json();
  stats["seconds"] = {{"emulation", a.emulation_seconds}};
  r["stats_json"] = stats.dump();
  r["attribution_table"] = a.attribution ? a.attribution->table() : std::string();
  const Format out_format = config.site(attention::Site::kOOut).format;
  const Format grad_format = config.site(attention::Site::kGradOut).format;
  r["o_format"] = out_format.name();
  r["grad_format"] = grad_format.name();
  r["input_format"] = config.site(attention::Site::kInput).format.name();
  r["nonfinite_inputs"] = nonfinite_counts(in);
  return r;
}

}  // namespace

void bind_attention(py::module_& m) {
  m.def(
      "attention",
      [](const py::object& q, const py::object& k, const py::object& v, const py::object& d_out,
         const std::string& numerics, const std::string& format,
         const std::vector<std::string>& sets, const std::vector<std::string>& mitigations,
         const std::optional<std::pair<int, int>>& tile, bool causal,
         const std::optional<double>& scale, Seed seed, ThreadCount threads,
         const std::optional<std::string>& input_format, bool trace, bool reference, bool baseline,
         bool attribute, const std::string& attribute_target, const py::object& o,
         const py::object& lse, const py::object& max_memory, const py::object& device_functions,
         const py::object& mask, const py::object& bias, const std::string& causal_align,
         const std::optional<std::pair<int64_t, int64_t>>& window, const py::object& alibi_slopes,
         double softcap, const std::optional<std::string>& score_mod,
         const std::optional<std::string>& mask_mod, const py::object& score_tensors) {
        const ConfigChoices choices{numerics, format, sets,       mitigations,   tile,
                                    causal,   scale,  seed.value, threads.value, trace};
        attention::AnalysisOptions options;
        options.reference = reference;
        options.baseline = baseline;
        options.attribute = attribute;
        options.attribute_target = attribute_target;
        options.device_functions = device_functions_argument(device_functions);
        if (attribute && !reference) throw py::value_error("attribute=True needs reference=True");
        const MaskingArguments masking{mask,    bias,      causal_align, window,       alibi_slopes,
                                       softcap, score_mod, mask_mod,     score_tensors};
        return run_attention_call(q, k, v, d_out, choices, input_format, o, lse, options,
                                  max_memory, masking);
      },
      py::arg("q"), py::arg("k"), py::arg("v"), py::arg("do") = py::none(), py::kw_only(),
      py::arg("numerics") = "fa2", py::arg("format") = "bf16",
      py::arg("set") = std::vector<std::string>{},
      py::arg("mitigations") = std::vector<std::string>{}, py::arg("tile") = py::none(),
      py::arg("causal") = false, py::arg("scale") = py::none(), py::arg("seed") = 0,
      py::arg("threads") = 0, py::arg("input_format") = py::none(), py::arg("trace") = false,
      py::arg("reference") = true, py::arg("baseline") = true, py::arg("attribute") = false,
      py::arg("attribute_target") = "o", py::arg("o") = py::none(), py::arg("lse") = py::none(),
      py::arg("max_memory") = py::none(), py::arg("device_functions") = py::none(),
      py::arg("mask") = py::none(), py::arg("bias") = py::none(),
      py::arg("causal_align") = "top-left", py::arg("window") = py::none(),
      py::arg("alibi_slopes") = py::none(), py::arg("softcap") = 0.0,
      py::arg("score_mod") = py::none(), py::arg("mask_mod") = py::none(),
      py::arg("score_tensors") = py::none());
  m.def(
      "generate",
      [](const std::string& kind, const std::vector<int64_t>& shape, Seed seed, bool backward,
         double peak, int prototypes, double concentration) {
        if (shape.size() != 4)
          throw py::value_error("shape: expected (B, H, N, d), got " +
                                std::to_string(shape.size()) + " sizes");
        int64_t elements = 1;
        for (int64_t x : shape) {
          if (x < 1 || x > (int64_t{1} << 31))
            throw py::value_error("shape: sizes must be in 1..2^31, got " + std::to_string(x));
          if (__builtin_mul_overflow(elements, x, &elements) || elements > (int64_t{1} << 36))
            throw py::value_error("shape: more than 2^36 elements per tensor");
        }
        if (prototypes < 1)
          throw py::value_error("prototypes=" + std::to_string(prototypes) + ": expected >= 1");
        const attention::AttentionShape s{shape[0], shape[1], shape[2],
                                          shape[2], shape[3], shape[3]};
        attention::AttentionInputs in;
        {
          py::gil_scoped_release release;
          in = inputs::generate(kind, s, seed.value, backward, {peak, prototypes, concentration});
        }
        py::dict r;
        r["q"] = numpy_of(std::move(in.q), shape);
        r["k"] = numpy_of(std::move(in.k), shape);
        r["v"] = numpy_of(std::move(in.v), shape);
        if (backward) r["do"] = numpy_of(std::move(in.d_out), shape);
        return r;
      },
      py::arg("kind"), py::arg("shape"), py::kw_only(), py::arg("seed") = 0,
      py::arg("backward") = false, py::arg("peak") = 4.0, py::arg("prototypes") = 32,
      py::arg("concentration") = 3.0,
      "Attention inputs from a generator (normal, peaky, repeated-max, low-rank, sinks), as "
      "`simprec attention --generate` makes them.");
  m.def("generator_kinds", &inputs::generator_kinds);
  m.def(
      "attention_config_json",
      [](const std::string& numerics, const std::string& format,
         const std::vector<std::string>& sets, const std::vector<std::string>& mitigations,
         const std::optional<std::pair<int, int>>& tile, bool causal,
         const std::optional<double>& scale, Seed seed) {
        const ConfigChoices choices{numerics, format, sets,       mitigations, tile,
                                    causal,   scale,  seed.value, 0,           false};
        return attention::to_json(attention_config(choices)).dump();
      },
      py::arg("numerics") = "fa2", py::arg("format") = "bf16",
      py::arg("set") = std::vector<std::string>{},
      py::arg("mitigations") = std::vector<std::string>{}, py::arg("tile") = py::none(),
      py::arg("causal") = false, py::arg("scale") = py::none(), py::arg("seed") = 0,
      "The configuration a numerics description gives, as JSON text (stats.json's config).");
}

}  // namespace simprec::python
