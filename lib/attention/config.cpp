#include "lib/attention/config.hpp"

#include <cmath>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <utility>

#include "emulation/accumulation.hpp"

namespace simprec::attention {
namespace {

double parse_double(std::string_view text, std::string_view what) {
  try {
    size_t used = 0;
    const double v = std::stod(std::string(text), &used);
    if (used != text.size() || !std::isfinite(v)) throw std::invalid_argument("");
    return v;
  } catch (const std::exception&) {
    throw std::invalid_argument("bad " + std::string(what) + " '" + std::string(text) +
                                "' (expected a finite number)");
  }
}

int parse_bits(std::string_view text) {
  const double v = parse_double(text, "random bit count");
  if (v < 1 || v > 32 || v != static_cast<int>(v)) {
    throw std::invalid_argument("bad random bit count '" + std::string(text) +
                                "' (expected 1..32)");
  }
  return static_cast<int>(v);
}

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t at = text.find(sep, start);
    parts.push_back(text.substr(start, at - start));
    if (at == std::string_view::npos) break;
    start = at + 1;
  }
  return parts;
}

// The value named `text` among `choices` of the structural key `key`.
template <class T>
T parse_choice(std::string_view key, std::string_view text,
               std::initializer_list<std::pair<std::string_view, T>> choices) {
  std::string known;
  for (const auto& [name, value] : choices) {
    if (name == text) return value;
    known += (known.empty() ? "" : ", ") + std::string(name);
  }
  throw std::invalid_argument("unknown " + std::string(key) + " '" + std::string(text) +
                              "' (known: " + known + ")");
}

void check_accumulation(const SiteSpec& spec) {
  (void)make_accumulation(spec.accumulation);  // throws with the known names
}

}  // namespace

std::string_view to_string(Algorithm a) {
  return a == Algorithm::kFlash ? "flash" : "standard";
}
std::string_view to_string(ExpImpl e) {
  switch (e) {
    case ExpImpl::kExact:
      return "exact";
    case ExpImpl::kNatural:
      return "natural";
    case ExpImpl::kExp2Fma:
      return "exp2-fma";
    case ExpImpl::kExp2:
      return "exp2";
  }
  return "?";
}
std::string_view to_string(BetaArithmetic a) {
  return a == BetaArithmetic::kFp32 ? "fp32" : "fp64";
}
std::string_view to_string(PvMode m) {
  return m == PvMode::kFused ? "fused" : "per-block";
}
std::string_view to_string(RescaleImpl r) {
  switch (r) {
    case RescaleImpl::kExact:
      return "exact";
    case RescaleImpl::kExp2Shift:
      return "exp2-shift";
    case RescaleImpl::kExp2Diff:
      return "exp2-diff";
  }
  return "?";
}

ExpImpl parse_exp_impl(std::string_view text) {
  for (ExpImpl e : {ExpImpl::kExact, ExpImpl::kNatural, ExpImpl::kExp2Fma, ExpImpl::kExp2}) {
    if (to_string(e) == text) return e;
  }
  throw std::invalid_argument("unknown exp implementation '" + std::string(text) +
                              "' (known: exact, natural, exp2-fma, exp2)");
}

Algorithm parse_algorithm(std::string_view text) {
  if (text == "flash") return Algorithm::kFlash;
  if (text == "standard") return Algorithm::kStandard;
  throw std::invalid_argument("unknown algorithm '" + std::string(text) +
                              "' (known: flash, standard)");
}

void apply_override(AttentionConfig& config, std::string_view assignment) {
  const size_t eq = assignment.find('=');
  if (eq == std::string_view::npos) {
    throw std::invalid_argument("bad --set '" + std::string(assignment) +
                                "' (expected SITE=FORMAT:ROUNDING[:ACCUMULATION])");
  }
  const std::string_view key = assignment.substr(0, eq);
  const std::string_view value = assignment.substr(eq + 1);
  // Structural choices share the syntax: exp_impl=, algorithm=, pv_mode=, norm=, rescale=,
  // rowsum_lanes=, and the flash backward pass's keys (config.hpp).
  if (key == "exp_impl") {
    config.exp_impl = parse_exp_impl(value);
  } else if (key == "algorithm") {
    config.algorithm = parse_algorithm(value);
  } else if (key == "pv_mode") {
    config.pv_mode = parse_choice<PvMode>(
        key, value, {{"fused", PvMode::kFused}, {"per-block", PvMode::kPerBlock}});
  } else if (key == "norm") {
    config.norm_mode = parse_choice<NormMode>(
        key, value, {{"reciprocal", NormMode::kReciprocal}, {"divide", NormMode::kDivide}});
  } else if (key == "rescale") {
    config.rescale = parse_choice<RescaleImpl>(key, value,
                                               {{"exact", RescaleImpl::kExact},
                                                {"exp2-shift", RescaleImpl::kExp2Shift},
                                                {"exp2-diff", RescaleImpl::kExp2Diff}});
  } else if (key == "rowsum_lanes") {
    config.rowsum_lanes = parse_choice<int>(key, value, {{"1", 1}, {"4", 4}});
  } else if (key == "rowsum_block") {
    config.rowsum_block = parse_choice<RowsumBlock>(
        key, value,
        {{"running", RowsumBlock::kRunning}, {"warp-groups", RowsumBlock::kWarpGroups}});
  } else if (key == "lse_impl") {
    config.lse_impl = parse_choice<LseImpl>(key, value,
                                            {{"exact", LseImpl::kExact},
                                             {"fma-log", LseImpl::kFmaLog},
                                             {"shift-div-log2e", LseImpl::kShiftDivLog2e}});
  } else if (key == "bwd_exp_impl") {
    config.bwd_exp_impl = value == "same" ? std::nullopt : std::optional(parse_exp_impl(value));
  } else if (key == "delta_sum") {
    config.delta_sum = parse_choice<DeltaSum>(key, value,
                                              {{"sequential", DeltaSum::kSequential},
                                               {"fa2", DeltaSum::kFa2},
                                               {"mem-eff", DeltaSum::kMemEff}});
  } else if (key == "query_order") {
    config.query_order = parse_choice<QueryOrder>(key, value,
                                                  {{"ascending", QueryOrder::kAscending},
                                                   {"descending", QueryOrder::kDescending},
                                                   {"split-keys", QueryOrder::kSplitKeys}});
  } else if (key == "dq") {
    config.dq_mode = parse_choice<DqMode>(
        key, value, {{"chained", DqMode::kChained}, {"block-partials", DqMode::kBlockPartials}});
  } else if (key == "grad_scale") {
    config.grad_scale = parse_choice<GradScale>(key, value,
                                                {{"exact", GradScale::kExactProduct},
                                                 {"fp32-then-cast", GradScale::kFp32ThenCast},
                                                 {"ds", GradScale::kScaleDs}});
  } else if (key == "ds_p") {
    config.ds_p =
        parse_choice<DsProb>(key, value, {{"exp", DsProb::kExp}, {"cast", DsProb::kCast}});
  } else if (key == "lse_log2e") {
    config.lse_log2e = parse_choice<LseLog2e>(
        key, value, {{"exact", LseLog2e::kExact}, {"fp32", LseLog2e::kFp32Log2e}});
  } else {
    const Site site = parse_site(key);
    SiteSpec spec = parse_site_spec(value);
    check_accumulation(spec);
    config.site(site) = spec;
  }
  config.overrides.emplace_back(assignment);
}

void make_site_exact(AttentionConfig& config, Site site) {
  config.site(site) = SiteSpec{formats::fp64, Rounding{}, "sequential"};
}

void make_site_stochastic(AttentionConfig& config, Site site, int bits) {
  config.site(site).rounding = Rounding{RoundingMode::kStochastic, bits};
}

void apply_mitigation(AttentionConfig& config, std::string_view text) {
  const auto parts = split(text, ':');
  const std::string_view name = parts[0];
  if (name == "beta-rowmax") {
    if (parts.size() > 3)
      throw std::invalid_argument("beta-rowmax takes beta and eps: beta-rowmax[:BETA[:EPS]]");
    config.beta_rowmax.enabled = true;
    if (parts.size() > 1) config.beta_rowmax.beta = parse_double(parts[1], "beta");
    if (parts.size() > 2) config.beta_rowmax.eps = parse_double(parts[2], "eps");
    if (config.beta_rowmax.beta <= 1)
      throw std::invalid_argument("beta-rowmax: beta must exceed 1");
  } else if (name == "sr-p" || name == "sr-p-tiled" || name == "sr-o") {
    const int bits = parts.size() > 1 ? parse_bits(parts[1]) : 32;
    if (name == "sr-p-tiled") {
      if (32 % bits != 0) {
        throw std::invalid_argument(
            "sr-p-tiled: the bit count must divide 32 (1, 2, 4, 8, 16, 32)");
      }
      make_site_stochastic(config, Site::kPCast, bits);
      config.tiled_random = true;
    } else if (name == "sr-p") {
      make_site_stochastic(config, Site::kPCast, bits);
    } else {
      // Every O rounding in a format narrower than fp32 (the low-precision O roundings).
      for (Site s : {Site::kPvAcc, Site::kOUpdate, Site::kORescale, Site::kONorm, Site::kOOut}) {
        if (config.site(s).format.precision() < formats::fp32.precision()) {
          make_site_stochastic(config, s, bits);
        }
      }
    }
  } else if (name == "hp") {
    if (parts.size() < 2 || parts.size() > 3)
      throw std::invalid_argument("hp takes a site: hp:SITE[:FORMAT]");
    const Site site = parse_site(parts[1]);
    SiteSpec& spec = config.site(site);
    if (parts.size() == 3) {
      spec.format = parse_format(parts[2]);
    } else {
      spec.format =
          spec.format.precision() < formats::fp32.precision() ? formats::fp32 : formats::fp64;
    }
  } else if (name == "delta-dpp") {
    config.delta_mode = DeltaMode::kFromDpP;
  } else {
    throw std::invalid_argument(
        "unknown mitigation '" + std::string(text) +
        "' (known: beta-rowmax[:BETA[:EPS]], sr-p[:BITS], sr-p-tiled[:BITS], sr-o[:BITS], "
        "hp:SITE[:FORMAT], delta-dpp)");
  }
  config.mitigations.emplace_back(text);
}

nlohmann::json to_json(const AttentionConfig& config) {
  nlohmann::json sites = nlohmann::json::object();
  for (int i = 0; i < kSiteCount; ++i) {
    const Site s = static_cast<Site>(i);
    const SiteSpec& spec = config.site(s);
    nlohmann::json j{{"format", spec.format.name()}, {"rounding", rounding_name(spec.rounding)}};
    if (site_accumulates(s)) j["accumulation"] = spec.accumulation;
    sites[std::string(site_name(s))] = j;
  }
  nlohmann::json j{
      {"preset", config.preset},
      {"format", config.low_precision.name()},
      {"algorithm", to_string(config.algorithm)},
      {"exp_impl", to_string(config.exp_impl)},
      {"pv_mode", to_string(config.pv_mode)},
      {"norm", config.norm_mode == NormMode::kReciprocal ? "reciprocal" : "divide"},
      {"delta", config.delta_mode == DeltaMode::kFromOutput && config.algorithm == Algorithm::kFlash
                    ? "rowsum(dO*O)"
                    : "rowsum(dP*P)"},
      {"tile", {config.block_rows, config.block_cols}},
      {"causal", config.causal},
      {"seed", config.seed},
      {"overrides", config.overrides},
      {"mitigations", config.mitigations},
      {"sites", sites}};
  if (config.scale) j["scale"] = *config.scale;
  // Shown only when they differ from the defaults, so that older configurations read the same.
  if (config.rescale != RescaleImpl::kExact) j["rescale"] = to_string(config.rescale);
  if (config.rowsum_lanes != 1) j["rowsum_lanes"] = config.rowsum_lanes;
  if (config.tiled_random) j["tiled_random"] = true;
  if (config.rowsum_block != RowsumBlock::kRunning) j["rowsum_block"] = "warp-groups";
  if (config.lse_impl != LseImpl::kExact) {
    j["lse_impl"] = config.lse_impl == LseImpl::kFmaLog ? "fma-log" : "shift-div-log2e";
  }
  if (config.bwd_exp_impl) j["bwd_exp_impl"] = to_string(*config.bwd_exp_impl);
  if (config.delta_sum != DeltaSum::kSequential) {
    j["delta_sum"] = config.delta_sum == DeltaSum::kFa2 ? "fa2" : "mem-eff";
  }
  if (config.query_order != QueryOrder::kAscending) {
    j["query_order"] = config.query_order == QueryOrder::kDescending ? "descending" : "split-keys";
  }
  if (config.dq_mode != DqMode::kChained) j["dq"] = "block-partials";
  if (config.grad_scale != GradScale::kExactProduct) {
    j["grad_scale"] = config.grad_scale == GradScale::kFp32ThenCast ? "fp32-then-cast" : "ds";
  }
  if (config.ds_p != DsProb::kExp) j["ds_p"] = "cast";
  if (config.lse_log2e != LseLog2e::kExact) j["lse_log2e"] = "fp32";
  if (config.exp2_table) j["exp2_table_size"] = config.exp2_table->size();
  if (config.beta_rowmax.enabled) {
    j["beta_rowmax"] = {{"beta", config.beta_rowmax.beta}, {"eps", config.beta_rowmax.eps}};
    if (config.beta_rowmax.arithmetic != BetaArithmetic::kFp64)
      j["beta_rowmax"]["arithmetic"] = to_string(config.beta_rowmax.arithmetic);
  }
  return j;
}

}  // namespace simprec::attention
