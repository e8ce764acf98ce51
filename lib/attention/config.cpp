#include "lib/attention/config.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "emulation/accumulation.hpp"
#include "emulation/did_you_mean.hpp"
#include "lib/attention/options.hpp"
#include "lib/limits/strict_parse.hpp"

namespace simprec::attention {
namespace {

void check_accumulation(const SiteSpec& spec) {
  (void)make_accumulation(spec.accumulation);  // throws with the known names
}

}  // namespace

std::string_view to_string(BetaArithmetic a) {
  return a == BetaArithmetic::kFp32 ? "fp32" : "fp64";
}

void apply_override(AttentionConfig& config, std::string_view assignment) {
  apply_assignment(config, assignment);
  config.overrides.emplace_back(assignment);
}

void apply_assignment(AttentionConfig& config, std::string_view assignment) {
  const size_t eq = assignment.find('=');
  if (eq == std::string_view::npos) {
    throw std::invalid_argument("bad --set '" + limits::excerpt(assignment) +
                                "' (expected SITE=FORMAT:ROUNDING[:ACCUMULATION] or OPTION=VALUE)");
  }
  const std::string_view key = assignment.substr(0, eq);
  const std::string_view value = assignment.substr(eq + 1);
  if (const StructuralOption* option = find_structural_option(key)) {
    option->set(config, value);
  } else {
    std::vector<Site> sites = site_group(key);
    if (sites.empty()) {
      try {
        sites.push_back(parse_site(key));
      } catch (const std::invalid_argument&) {
        std::string options;
        std::vector<std::string> names;
        for (int i = 0; i < kSiteCount; ++i) names.emplace_back(site_name(static_cast<Site>(i)));
        for (const char* group : {"all", "products"}) names.emplace_back(group);
        for (const StructuralOption& o : structural_options()) {
          options += (options.empty() ? "" : ", ") + std::string(o.key);
          names.emplace_back(o.key);
        }
        throw std::invalid_argument("unknown site or option '" + limits::excerpt(key) + "'" +
                                    did_you_mean(key, names) + " (sites: " + site_names() +
                                    "; site groups: " + site_group_names() +
                                    "; options: " + options + ")");
      }
    }
    SiteSpec spec = parse_site_spec(value);
    check_accumulation(spec);
    for (const Site site : sites) config.site(site) = spec;
  }
}

void make_site_exact(AttentionConfig& config, Site site) {
  config.site(site) = SiteSpec{formats::fp64, Rounding{}, "sequential"};
}

void make_site_stochastic(AttentionConfig& config, Site site, int bits) {
  config.site(site).rounding = Rounding{RoundingMode::kStochastic, bits};
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
      {"delta", config.delta->from_output() && config.flash() ? "rowsum(dO*O)" : "rowsum(dP*P)"},
      {"tile", {config.block_rows, config.block_cols}},
      {"causal", config.causal},
      {"seed", config.seed},
      {"overrides", config.overrides},
      {"mitigations", config.mitigations},
      {"sites", sites}};
  // The structural options: the keys results always had, the others where they differ from
  // the default (so that older configurations read the same). delta, tile and beta_arithmetic
  // have their own keys.
  for (const StructuralOption& o : structural_options()) {
    if (o.key == "delta" || o.key == "tile" || o.key == "beta_arithmetic") continue;
    const std::string value = o.get(config);
    if (!o.always_in_json && value == default_value(o)) continue;
    if (o.key == "rowsum_lanes") {
      j[std::string(o.key)] = config.rowsum_lanes;
    } else {
      j[std::string(o.key)] = value;
    }
  }
  if (config.scale) j["scale"] = *config.scale;
  if (config.masking.active()) j["masking"] = config.masking.describe(config.causal);
  if (config.tiled_random) j["tiled_random"] = true;
  if (const std::string library = config.device_math->library(); !library.empty())
    j["device_math_library"] = library;
  for (const DeviceFn fn : kDeviceFns) {
    if (const auto& table = config.device_tables[static_cast<int>(fn)])
      j[std::string(device_fn_name(fn)) + "_table_size"] = table->size();
  }
  if (config.beta_rowmax.enabled) {
    j["beta_rowmax"] = {{"beta", config.beta_rowmax.beta}, {"eps", config.beta_rowmax.eps}};
    if (config.beta_rowmax.arithmetic != BetaArithmetic::kFp64)
      j["beta_rowmax"]["arithmetic"] = to_string(config.beta_rowmax.arithmetic);
  }
  return j;
}

AttentionConfig with_sram_tile(const AttentionConfig& config, int64_t d) {
  if (config.sram <= 0) return config;
  if (d < 1)
    throw std::invalid_argument("head dimension " + std::to_string(d) + " is not positive");
  const int64_t wide = (config.sram + 4 * d - 1) / (4 * d);  // ceil(M / 4d); M <= 2^40
  const int64_t narrow = std::min(wide, d);
  if (wide > 65536) {
    throw std::invalid_argument(
        "sram=" + std::to_string(config.sram) + " with head dimension " + std::to_string(d) +
        " gives a tile of ceil(M/4d) = " + std::to_string(wide) + ", more than 65536");
  }
  AttentionConfig c = config;
  const auto [rows, cols] = config.block_order->tile(wide, narrow);
  c.block_rows = static_cast<int>(rows);
  c.block_cols = static_cast<int>(cols);
  return c;
}

}  // namespace simprec::attention
