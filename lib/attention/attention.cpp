#include "lib/attention/attention.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "emulation/parallel.hpp"
#include "lib/attention/dispatch.hpp"
#include "lib/attention/engine.hpp"
#include "lib/attention/float_flash.hpp"
#include "lib/attention/head.hpp"
#include "lib/attention/input_quantization.hpp"
#include "lib/attention/row_probe.hpp"
#include "lib/limits/strict_parse.hpp"

namespace simprec::attention {

AttentionInputs round_inputs(const AttentionInputs& inputs, const AttentionConfig& config) {
  AttentionInputs rounded = inputs;
  const SiteRounder r(config.site(Site::kInput), config.seed, Site::kInput);
  uint64_t base = 0;
  for (std::vector<double>* x : {&rounded.q, &rounded.k, &rounded.v, &rounded.d_out}) {
    for (size_t i = 0; i < x->size(); ++i) (*x)[i] = r((*x)[i], base + i);
    base += x->size();
  }
  return rounded;
}

AttentionInputs round_inputs_for_reference(const AttentionInputs& inputs,
                                           const AttentionConfig& config) {
  AttentionInputs rounded = round_inputs(inputs, config);
  const std::tuple<const std::vector<double>*, const std::vector<double>*, const char*> tensors[] =
      {{&inputs.q, &rounded.q, "Q"},
       {&inputs.k, &rounded.k, "K"},
       {&inputs.v, &rounded.v, "V"},
       {&inputs.d_out, &rounded.d_out, "dO"}};
  for (const auto& [raw, x, name] : tensors) {
    for (size_t i = 0; i < x->size(); ++i) {
      if (std::isfinite((*x)[i]) || !std::isfinite((*raw)[i])) continue;
      // A finite input the input site takes out of its format's range: the rounding overflowed,
      // not the input.
      const Format& f = config.site(Site::kInput).format;
      throw std::invalid_argument(
          std::string("the input site rounds ") + name + " to " + f.name() + " (" +
          rounding_name(config.site(Site::kInput).rounding) + "), whose largest finite value is " +
          limits::shortest_text(f.max_finite()) + ": " + name + " at flat index " +
          std::to_string(i) + " is " + limits::shortest_text((*raw)[i]) + ", which overflows to " +
          limits::shortest_text((*x)[i]) +
          ", and the fp64 reference needs finite values; give a wider format (format= or "
          "input=) or smaller inputs");
    }
  }
  return rounded;
}

AttentionOutputs run_attention(const AttentionInputs& raw_inputs, const AttentionConfig& given,
                               const RunOptions& options) {
  raw_inputs.validate();
  // The tiles and splits made concrete for this shape (dispatch.hpp).
  const AttentionConfig config = resolve_for_shape(given, raw_inputs.shape);
  if (config.block_rows < 1 || config.block_cols < 1) {
    throw std::invalid_argument("tile sizes must be positive");
  }
  check_quantization(config, raw_inputs.has_grad());
  AttentionInputs inputs = round_inputs(raw_inputs, config);
  const AttentionShape& s = inputs.shape;
  const Engine engine(config, s);
  const bool quantized = config.quant.active();
  const InputScales scales =
      quantized ? quantize_inputs(inputs, config, engine.scale_log2) : InputScales{};
  AttentionOutputs out;
  out.o.assign(s.problems() * s.nq * s.dv, 0.0);
  out.lse.assign(s.problems() * s.nq, 0.0);
  if (!inputs.has_forward()) out.row_sum.assign(s.problems() * s.nq, 0.0);
  if (inputs.has_grad()) {
    out.dq.assign(s.problems() * s.nq * s.d, 0.0);
    out.dk.assign(s.problems() * s.nk * s.d, 0.0);
    out.dv.assign(s.problems() * s.nk * s.dv, 0.0);
    out.delta.assign(s.problems() * s.nq, 0.0);
  }
  if (inputs.has_forward()) {
    out.o = inputs.o;
    out.lse = inputs.lse;
  }
  std::vector<std::array<tracing::SiteTrace, kSiteCount>> traces(config.trace ? s.problems() : 0);
  std::vector<std::vector<uint32_t>> misses(s.problems());
  const bool float_flash =
      options.fast_path == FastPath::kAllowed && !quantized && float_flash_applies(config);
  if (options.only_problem &&
      (*options.only_problem < 0 || *options.only_problem >= s.problems())) {
    throw std::invalid_argument("problem " + std::to_string(*options.only_problem) +
                                " of a run of " + std::to_string(s.problems()));
  }
  RowProbe* const probe = options.probe;
  if (probe && (probe->problem < 0 || probe->problem >= s.problems() || probe->row < 0 ||
                probe->row >= s.nq)) {
    throw std::invalid_argument("probed row " + std::to_string(probe->row) + " of problem " +
                                std::to_string(probe->problem) + ": the run has " +
                                std::to_string(s.problems()) + " problems of " +
                                std::to_string(s.nq) + " query rows");
  }
  // Problem p's slice of an output laid out [problem][n].
  const auto slice = [](std::vector<double>& v, int64_t p, int64_t n) {
    return std::span<double>(v.data() + p * n, static_cast<size_t>(n));
  };
  parallel_for(s.problems(), config.threads, [&](int64_t p) {
    if (options.only_problem && p != *options.only_problem) return;
    RowProbe* const probed = probe && probe->problem == p ? probe : nullptr;
    if (float_flash && !probed && run_float_flash(config, inputs, out, p)) {
      // The site-by-site engine is the reference for special values: a problem whose outputs
      // hold a NaN or an infinity is computed again there, from the state it started in. The
      // fast path gives the engine's bits on the special values tested
      // (tests/attention_float_flash_special_test.cpp); this keeps the engine the reference
      // for those not tested, at a cost only to problems whose outputs are not finite.
      const auto finite = [](std::span<double> x) {
        return std::all_of(x.begin(), x.end(), [](double v) { return std::isfinite(v); });
      };
      bool all_finite = finite(slice(out.o, p, s.nq * s.dv));
      if (inputs.has_grad()) {
        all_finite = all_finite && finite(slice(out.dq, p, s.nq * s.d)) &&
                     finite(slice(out.dk, p, s.nk * s.d)) && finite(slice(out.dv, p, s.nk * s.dv));
      }
      if (all_finite) return;
      if (inputs.has_forward()) {
        std::copy_n(inputs.o.begin() + p * s.nq * s.dv, s.nq * s.dv,
                    out.o.begin() + p * s.nq * s.dv);
        std::copy_n(inputs.lse.begin() + p * s.nq, s.nq, out.lse.begin() + p * s.nq);
      } else {
        std::ranges::fill(slice(out.o, p, s.nq * s.dv), 0.0);
        std::ranges::fill(slice(out.lse, p, s.nq), 0.0);
      }
      if (inputs.has_grad()) {
        for (auto [v, n] : {std::pair{&out.dq, s.nq * s.d}, std::pair{&out.dk, s.nk * s.d},
                            std::pair{&out.dv, s.nk * s.dv}, std::pair{&out.delta, s.nq}}) {
          std::ranges::fill(slice(*v, p, n), 0.0);
        }
      }
    }
    // Quantised inputs: an engine of the problem's own scales (Engine::for_quantized_problem).
    std::optional<Engine> own;
    if (quantized) own.emplace(config, s).for_quantized_problem(scales, p);
    Head head(own ? *own : engine, inputs, out, p, config.trace ? &traces[p] : nullptr, &misses[p],
              probed);
    if (!inputs.has_forward()) head.forward();
    if (inputs.has_grad()) head.backward();
    std::sort(misses[p].begin(), misses[p].end());
    misses[p].erase(std::unique(misses[p].begin(), misses[p].end()), misses[p].end());
  });
  // Merged in problem order, so the sums do not depend on the thread count.
  for (const auto& t : traces) {
    for (int i = 0; i < kSiteCount; ++i) out.traces[i].merge(t[i]);
  }
  for (const auto& m : misses) out.exp2_misses.insert(out.exp2_misses.end(), m.begin(), m.end());
  std::sort(out.exp2_misses.begin(), out.exp2_misses.end());
  out.exp2_misses.erase(std::unique(out.exp2_misses.begin(), out.exp2_misses.end()),
                        out.exp2_misses.end());
  return out;
}

AttentionOutputs run_attention_with_device_function(const AttentionInputs& inputs,
                                                    const AttentionConfig& config,
                                                    const DeviceFunction& exp2, int max_runs,
                                                    const RunOptions& options) {
  auto table = config.exp2_table ? std::make_shared<DeviceFunctionTable>(*config.exp2_table)
                                 : std::make_shared<DeviceFunctionTable>();
  AttentionConfig c = config;
  c.exp2_table = table;
  size_t missing = 0;
  for (int run = 0; run < max_runs; ++run) {
    AttentionOutputs out = run_attention(inputs, c, options);
    if (out.exp2_misses.empty()) return out;
    const std::vector<uint32_t> values = exp2(out.exp2_misses);
    if (values.size() != out.exp2_misses.size()) {
      throw std::runtime_error("the device exp2 returned " + std::to_string(values.size()) +
                               " values for " + std::to_string(out.exp2_misses.size()) +
                               " arguments");
    }
    for (size_t i = 0; i < values.size(); ++i) table->insert(out.exp2_misses[i], values[i]);
    missing = values.size();
  }
  throw std::runtime_error("the device exp2 table still lacked " + std::to_string(missing) +
                           " arguments after " + std::to_string(max_runs) + " runs");
}

}  // namespace simprec::attention
