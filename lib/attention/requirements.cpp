// The structure checks of a configuration, read from the registry: what each chosen strategy
// declares it needs of other slots and parameters (strategy.hpp, Requirement), and each
// strategy's own checks once the tiles are concrete.
#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "emulation/tensor_core.hpp"
#include "lib/attention/dispatch.hpp"
#include "lib/attention/options.hpp"

namespace simprec::attention {
namespace {

// Whether every value of format `a` is a value of `b`.
bool fits(const Format& a, const Format& b) {
  return a.has_sign() && b.has_sign() && a.mantissa_bits <= b.mantissa_bits &&
         a.max_finite() <= b.max_finite() && a.min_subnormal() >= b.min_subnormal();
}

// A tensor-core product site's operands must be values of its model's input format: the site,
// and for each operand the site (or quantisation) that rounds it last and its format.
struct Operand {
  std::string_view what;
  std::string_view rounded_at;
  Format format;
};

void check_tensor_core_operands(const AttentionConfig& c) {
  const auto input = [&](std::string_view what, const std::optional<Format>& quantized) {
    return quantized ? Operand{what, "its quantisation", *quantized}
                     : Operand{what, "input", c.site(Site::kInput).format};
  };
  const bool int8 = c.quant.qk_int8;
  const Operand q = input("Q", c.quant.qk), k = input("K", c.quant.qk), v = input("V", c.quant.v),
                d_out = input("dO", std::nullopt);
  const Operand p{"P", "p_cast", c.site(Site::kPCast).format};
  const Operand p_bwd{"P", "p_cast_bwd", c.site(Site::kPCastBwd).format};
  const Operand ds{"dS", "ds_cast", c.site(Site::kDsCast).format};
  const std::pair<Site, std::vector<Operand>> products[] = {
      {Site::kS, int8 ? std::vector<Operand>{} : std::vector<Operand>{q, k}},
      {Site::kPvAcc, {p, v}},
      {Site::kDp, {d_out, v}},
      {Site::kDvAcc, {p_bwd, d_out}},
      {Site::kDqAcc, {ds, k}},
      {Site::kDkAcc, {ds, q}}};
  // Quantised inputs run the forward pass only: the backward products take no operands.
  const bool forward_only = c.quant.active();
  for (const auto& [site, operands] : products) {
    if (forward_only && site != Site::kS && site != Site::kPvAcc) continue;
    const std::string& model = c.site(site).accumulation;
    if (model.rfind("tc:", 0) != 0) continue;
    const TensorCoreModel& tc = tensor_core_model(model);
    for (size_t i = 0; i < operands.size(); ++i) {
      // The product's first operand is the instruction's A, the second its B.
      const Operand& o = operands[i];
      const Format in = i == 0 ? tc.input_a : tc.input_b;
      if (fits(o.format, in)) continue;
      throw std::invalid_argument(
          std::string(site_name(site)) + "=" + c.site(site).format.name() + ":" +
          rounding_name(c.site(site).rounding) + ":" + model + " takes " + in.name() +
          " operands, but " + std::string(o.rounded_at) + " rounds " + std::string(o.what) +
          " to " + o.format.name() + ", whose values " + in.name() +
          " does not hold; round it to " + in.name() + " (or a narrower format), or give " +
          std::string(site_name(site)) + " another accumulation model");
    }
  }
}

// Whether the option is read by this configuration's passes.
bool in_scope(const StructuralOption& o, const AttentionConfig& c) {
  return !(o.slot && o.slot->scope == SlotScope::kFlash && !c.flash());
}

std::string alternatives(const std::vector<std::string_view>& values) {
  std::string text;
  for (size_t i = 0; i < values.size(); ++i) {
    text += (i == 0 ? "" : "|") + std::string(values[i]);
  }
  return text;
}

// The values of `key` that satisfy r: the listed ones, or the slot's strategies with r's tag.
std::vector<std::string_view> accepted(const Requirement& r) {
  if (r.tag.empty()) return r.values;
  std::vector<std::string_view> values;
  for (const Strategy* s : strategy_registry().of_slot(r.key)) {
    if (s->has_tag(r.tag)) values.push_back(s->name());
  }
  return values;
}

void check(const Strategy& s, const Requirement& r, const AttentionConfig& c) {
  const StructuralOption* o = find_structural_option(r.key);
  if (!o) {
    throw std::logic_error("strategy " + std::string(s.slot().key) + "=" + std::string(s.name()) +
                           " requires an unknown option '" + std::string(r.key) + "'");
  }
  const std::string value = o->get(c);
  const std::vector<std::string_view> ok = accepted(r);
  if (std::find(ok.begin(), ok.end(), value) != ok.end()) return;
  throw std::invalid_argument(std::string(s.slot().key) + "=" + std::string(s.name()) + " needs " +
                              std::string(r.key) + "=" + alternatives(ok) + ", not " + value);
}

}  // namespace

void check_requirements(const AttentionConfig& c) {
  for (const StructuralOption& o : structural_options()) {
    if (!in_scope(o, c)) continue;
    if (o.slot) {
      const Strategy& s = *o.strategy(c);
      for (const Requirement& r : s.info().needs) check(s, r, c);
    } else if (!o.choices.empty()) {
      const std::string value = o.get(c);
      if (std::find(o.choices.begin(), o.choices.end(), value) == o.choices.end()) {
        throw std::invalid_argument(std::string(o.key) + " must be one of " +
                                    alternatives(o.choices) + ", not " + value);
      }
    }
  }
  check_tensor_core_operands(c);
  const SiteSpec& p_cast = c.site(Site::kPCast);
  if (c.flash() && c.tiled_random && p_cast.rounding.mode == RoundingMode::kStochastic &&
      32 % p_cast.rounding.sr_bits != 0) {
    throw std::invalid_argument(
        "tiled random bits at p_cast need a bit count that divides 32 (1, 2, 4, 8, 16, 32), "
        "not " +
        std::to_string(p_cast.rounding.sr_bits));
  }
  check_auto_tile(c);
  // A tile no shape changes meets the strategies' own checks here, as every run would check it.
  if (c.sram <= 0 && c.block_rows > 0 && c.block_cols > 0 && c.tile_rule->keeps_tile()) {
    check_run_requirements(c);
  }
}

void check_run_requirements(const AttentionConfig& c) {
  for (const StructuralOption& o : structural_options()) {
    if (!o.slot || !in_scope(o, c)) continue;
    const Strategy& s = *o.strategy(c);
    if (const std::string problem = s.check(c); !problem.empty()) {
      throw std::invalid_argument(std::string(s.slot().key) + "=" + std::string(s.name()) + ": " +
                                  problem);
    }
  }
}

}  // namespace simprec::attention
