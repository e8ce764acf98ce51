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
#include "lib/attention/kv_heads.hpp"
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

namespace {

// Grouped-query attention (kv_heads.hpp). dK and dV of the expanded run summed over each group
// (kv_heads.hpp): in fp32 for formats of 16 bits or fewer (at::sum's accumulator), else in the
// output format, each addition rounded, and the sum rounded at grad_out.
AttentionOutputs sum_group_gradients(const AttentionInputs& inputs, const AttentionConfig& config,
                                     AttentionOutputs out) {
  const SiteSpec& grad_out = config.site(Site::kGradOut);
  const SiteSpec sum_spec{grad_out.format.width() <= 16 ? formats::fp32 : grad_out.format};
  const SiteRounder sum(sum_spec, config.seed, Site::kGradOut);
  const SiteRounder cast(SiteSpec{grad_out.format}, config.seed, Site::kGradOut);
  const auto add = [&](double a, double b) {
    double hi, lo;
    two_sum(a, b, hi, lo);
    return sum.round_exact(hi, lo);
  };
  const auto finish = [&](double x) { return cast(x); };
  const AttentionShape& s = inputs.shape;
  out.dk = combined_over_groups(out.dk, s, s.nk, s.d, add, finish);
  out.dv = combined_over_groups(out.dv, s, s.nk, s.dv, add, finish);
  return out;
}

AttentionOutputs run_problems(const AttentionInputs& raw_inputs, const AttentionConfig& given,
                              const RunOptions& options, int64_t chain);

// The last query head's dK and dV of each group (kv_group_sum=chained: it holds the group's).
AttentionOutputs last_of_groups(const AttentionShape& s, AttentionOutputs out) {
  const auto last = [](double, double b) { return b; };
  const auto same = [](double x) { return x; };
  out.dk = combined_over_groups(out.dk, s, s.nk, s.d, last, same);
  out.dv = combined_over_groups(out.dv, s, s.nk, s.dv, last, same);
  return out;
}

AttentionOutputs run_grouped(const AttentionInputs& inputs, const AttentionConfig& config,
                             const RunOptions& options) {
  const AttentionShape& s = inputs.shape;
  // One query against grouped heads: FlashAttention-2's forward runs each group's query heads as
  // the rows of its key/value head's problem (flash_api.cpp: seqlen_q == 1, no window, a head
  // dimension that 8 divides); the backward pass then takes that O and LSE.
  if (s.nq == 1 && !inputs.has_forward() && config.dispatch->swaps_query_groups() &&
      !config.masking.active() && s.d % 8 == 0 && !options.probe && !options.only_problem) {
    AttentionInputs swapped;
    swapped.shape = s;
    swapped.shape.heads = s.kv_heads();
    swapped.shape.heads_kv = 0;
    swapped.shape.nq = s.heads / s.kv_heads();
    swapped.q = inputs.q;  // [B, H, 1, d] is [B, Hkv, G, d]
    swapped.k = inputs.k;
    swapped.v = inputs.v;
    // The whole problem's batch x heads as the dispatch weighs it: the key/value heads.
    AttentionConfig swapped_config = config;
    swapped_config.batch_heads = config.batch_heads / static_cast<int>(swapped.shape.nq);
    AttentionOutputs forward = run_attention(swapped, swapped_config, options);
    if (!inputs.has_grad()) return forward;
    AttentionInputs expanded = with_kv_heads_expanded(inputs);
    expanded.o = forward.o;
    expanded.lse = forward.lse;
    AttentionOutputs out = run_attention(expanded, config, options);
    out.row_sum = forward.row_sum;
    out.traces = forward.traces;
    return sum_group_gradients(inputs, config, std::move(out));
  }
  const AttentionInputs expanded = with_kv_heads_expanded(inputs);
  // Standard attention has no accumulators to carry (its baseline runs sum cast gradients).
  if (inputs.has_grad() && config.kv_group_sum->chained() && config.flash()) {
    if (options.only_problem) {
      throw std::invalid_argument(
          "kv_group_sum=chained computes a group's heads together: one problem alone is not "
          "computed");
    }
    return last_of_groups(s, run_problems(expanded, config, options, s.heads / s.kv_heads()));
  }
  AttentionOutputs out = run_attention(expanded, config, options);
  if (!inputs.has_grad()) return out;
  return sum_group_gradients(inputs, config, std::move(out));
}

// The problems of an ungrouped run; with chain > 1, each `chain` consecutive problems (the query
// heads of a key/value head) continue one another's dK and dV accumulators (kv_group_sum=
// chained) and the last of them holds the result.
AttentionOutputs run_problems(const AttentionInputs& raw_inputs, const AttentionConfig& given,
                              const RunOptions& options, int64_t chain) {
  given.masking.check(raw_inputs.shape);
  // The tiles and splits made concrete for this shape (dispatch.hpp).
  const AttentionConfig config = resolve_for_shape(given, raw_inputs.shape);
  if (config.block_rows < 1 || config.block_cols < 1) {
    throw std::invalid_argument("tile sizes must be positive");
  }
  check_quantization(config, raw_inputs.has_grad());
  AttentionInputs inputs = round_inputs(raw_inputs, config);
  const AttentionShape& s = inputs.shape;
  if (config.softmax_scale->prescales_q()) {
    if (inputs.has_grad()) {
      throw std::invalid_argument(
          "softmax_scale=" + std::string(config.softmax_scale.name()) +
          " folds the scale into Q, a forward-only model: give no dO (the backward pass of such "
          "kernels is not modelled)");
    }
    config.softmax_scale->prescale_q(inputs.q, softmax_scale(config, s), config.site(Site::kInput));
  }
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
  std::vector<DeviceMisses> misses(s.problems());
  const bool float_flash = options.fast_path == FastPath::kAllowed && !quantized && chain == 1 &&
                           float_flash_applies(config);
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
  parallel_for(s.problems() / chain, config.threads, [&](int64_t unit) {
    std::vector<double> dk_chain, dv_chain;
    for (int64_t p = unit * chain; p < (unit + 1) * chain; ++p) {
      if (options.only_problem && p != *options.only_problem) continue;
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
                       finite(slice(out.dk, p, s.nk * s.d)) &&
                       finite(slice(out.dv, p, s.nk * s.dv));
        }
        if (all_finite) continue;
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
      Head head(own ? *own : engine, inputs, out, p, config.trace ? &traces[p] : nullptr,
                &misses[p], probed);
      if (chain > 1) head.chain_gradients(&dk_chain, &dv_chain, p + 1 == (unit + 1) * chain);
      if (!inputs.has_forward()) head.forward();
      if (inputs.has_grad()) head.backward();
      for (auto& m : misses[p]) {
        std::sort(m.begin(), m.end());
        m.erase(std::unique(m.begin(), m.end()), m.end());
      }
    }
  });
  // Merged in problem order, so the sums do not depend on the thread count.
  for (const auto& t : traces) {
    for (int i = 0; i < kSiteCount; ++i) out.traces[i].merge(t[i]);
  }
  for (int f = 0; f < kDeviceFnCount; ++f) {
    std::vector<uint64_t>& all = out.device_misses[f];
    for (const auto& m : misses) all.insert(all.end(), m[f].begin(), m[f].end());
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end()), all.end());
  }
  return out;
}

}  // namespace

AttentionOutputs run_attention(const AttentionInputs& raw_inputs, const AttentionConfig& given,
                               const RunOptions& options) {
  raw_inputs.validate();
  if (raw_inputs.shape.grouped()) return run_grouped(raw_inputs, given, options);
  return run_problems(raw_inputs, given, options, 1);
}

namespace {

// The supplied function's values at `keys`, in one call: the argument bits (div: x's and y's).
std::vector<uint32_t> evaluate(const DeviceFunctions& functions, DeviceFn fn,
                               const std::vector<uint64_t>& keys) {
  std::vector<uint32_t> x(keys.size()), y;
  for (size_t i = 0; i < keys.size(); ++i) x[i] = static_cast<uint32_t>(keys[i]);
  switch (fn) {
    case DeviceFn::kExp2:
      return functions.exp2(x);
    case DeviceFn::kExp:
      return functions.exp(x);
    case DeviceFn::kLog:
      return functions.log(x);
    case DeviceFn::kLog2:
      return functions.log2(x);
    case DeviceFn::kRcp:
      return functions.rcp(x);
    case DeviceFn::kDiv:
      y = x;
      for (size_t i = 0; i < keys.size(); ++i) x[i] = static_cast<uint32_t>(keys[i] >> 32);
      return functions.div(x, y);
  }
  return {};
}

}  // namespace

AttentionOutputs run_attention_with_device_functions(const AttentionInputs& inputs,
                                                     const AttentionConfig& config,
                                                     const DeviceFunctions& functions, int max_runs,
                                                     const RunOptions& options) {
  AttentionConfig c = config;
  std::array<std::shared_ptr<DeviceFunctionTable>, kDeviceFnCount> tables{};
  for (const DeviceFn fn : kDeviceFns) {
    if (!functions.has(fn)) continue;
    const auto& given = config.device_tables[static_cast<int>(fn)];
    tables[static_cast<int>(fn)] = given ? std::make_shared<DeviceFunctionTable>(*given)
                                         : std::make_shared<DeviceFunctionTable>();
    c.device_tables[static_cast<int>(fn)] = tables[static_cast<int>(fn)];
  }
  std::string missing;
  for (int run = 0; run < max_runs; ++run) {
    AttentionOutputs out = run_attention(inputs, c, options);
    missing.clear();
    for (const DeviceFn fn : kDeviceFns) {
      const std::vector<uint64_t>& keys = out.device_misses[static_cast<int>(fn)];
      if (keys.empty()) continue;
      const std::vector<uint32_t> values = evaluate(functions, fn, keys);
      if (values.size() != keys.size()) {
        throw std::runtime_error("the supplied " + std::string(device_fn_name(fn)) + " returned " +
                                 std::to_string(values.size()) + " values for " +
                                 std::to_string(keys.size()) + " arguments");
      }
      for (size_t i = 0; i < keys.size(); ++i)
        tables[static_cast<int>(fn)]->insert(keys[i], values[i]);
      missing += (missing.empty() ? "" : ", ") + std::to_string(keys.size()) + " " +
                 std::string(device_fn_name(fn));
    }
    if (missing.empty()) return out;
  }
  throw std::runtime_error("the tables of the supplied device functions still lacked arguments (" +
                           missing + ") after " + std::to_string(max_runs) + " runs");
}

}  // namespace simprec::attention
