#include "lib/attention/attribution.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace simprec::attention {
namespace {

bool forward_site(Site s) {
  return static_cast<int>(s) <= static_cast<int>(Site::kLse);
}

// A site whose values feed a tensor-core product: made exact, it would hand the model operands
// its instruction cannot take (a bf16 MMA multiplies bf16 values and accumulates onto an fp32
// C), so only its stochastic rerun is meaningful. The casts feed A and B; the rescale of O
// feeds the C of the next P.V product.
bool feeds_tensor_core(const AttentionConfig& config, Site site) {
  const auto tc = [&](Site product) {
    return config.site(product).accumulation.rfind("tc:", 0) == 0;
  };
  switch (site) {
    case Site::kPCast:
    case Site::kORescale:
      return tc(Site::kPvAcc);
    case Site::kPCastBwd:
      return tc(Site::kDvAcc);
    case Site::kDsCast:
      return tc(Site::kDqAcc) || tc(Site::kDkAcc);
    default:
      return false;
  }
}

double target_bias(const AttentionInputs& inputs, const AttentionConfig& config,
                   const AttentionOutputs& reference, std::string_view target, double& se) {
  const AttentionOutputs out = run_attention(inputs, config);
  const auto m =
      metrics::compute_metrics(output_tensor(out, target), output_tensor(reference, target),
                               inputs.shape.batch, formats::fp64);
  se = m.bias_se;
  return m.bias;
}

void rank(std::vector<SiteAttribution>& v) {
  std::stable_sort(v.begin(), v.end(), [](const SiteAttribution& a, const SiteAttribution& b) {
    return a.fraction > b.fraction;
  });
}

nlohmann::json rows_json(const std::vector<SiteAttribution>& rows) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& r : rows) {
    j.push_back(
        {{"site", site_name(r.site)},
         {"bias_without", r.bias_without},
         {"bias_without_se",
          std::isfinite(r.bias_without_se) ? nlohmann::json(r.bias_without_se) : nlohmann::json()},
         {"explained", r.explained},
         {"fraction", std::isfinite(r.fraction) ? nlohmann::json(r.fraction) : nlohmann::json()}});
  }
  return j;
}

}  // namespace

const std::vector<double>& output_tensor(const AttentionOutputs& o, std::string_view target) {
  if (target == "o") return o.o;
  if (target == "dq") return o.dq;
  if (target == "dk") return o.dk;
  if (target == "dv") return o.dv;
  if (target == "delta") return o.delta;
  throw std::invalid_argument("unknown attribution target '" + std::string(target) +
                              "' (known: o, dq, dk, dv, delta)");
}

AttributionResult attribute_sites(const AttentionInputs& inputs, const AttentionConfig& config,
                                  const AttentionOutputs& reference, std::string_view target,
                                  bool with_stochastic) {
  if (target != "o" && !inputs.has_grad()) {
    throw std::invalid_argument("attribution target '" + std::string(target) + "' needs dO");
  }
  (void)output_tensor(reference, target);
  AttributionResult result;
  result.target = std::string(target);
  AttentionConfig base = config;
  base.trace = false;
  result.bias_full = target_bias(inputs, base, reference, target, result.bias_full_se);
  const SiteSpec exact_spec{formats::fp64, Rounding{}, "sequential"};
  for (int i = 0; i < kSiteCount; ++i) {
    const Site site = static_cast<Site>(i);
    if (site == Site::kInput || (target == "o" && !forward_site(site))) continue;
    if (config.site(site) == exact_spec) continue;
    if (!feeds_tensor_core(config, site)) {
      AttentionConfig changed = base;
      make_site_exact(changed, site);
      SiteAttribution a{site};
      a.bias_without = target_bias(inputs, changed, reference, target, a.bias_without_se);
      a.explained = result.bias_full - a.bias_without;
      a.fraction = a.explained / result.bias_full;
      result.exact.push_back(a);
    }
    if (with_stochastic && config.site(site).format != formats::fp64 &&
        config.site(site).rounding.mode != RoundingMode::kStochastic) {
      AttentionConfig sr = base;
      make_site_stochastic(sr, site, 32);
      SiteAttribution b{site};
      b.bias_without = target_bias(inputs, sr, reference, target, b.bias_without_se);
      b.explained = result.bias_full - b.bias_without;
      b.fraction = b.explained / result.bias_full;
      result.stochastic.push_back(b);
    }
  }
  rank(result.exact);
  rank(result.stochastic);
  return result;
}

nlohmann::json AttributionResult::to_json() const {
  return {{"target", target},
          {"bias_full", bias_full},
          {"bias_full_se",
           std::isfinite(bias_full_se) ? nlohmann::json(bias_full_se) : nlohmann::json()},
          {"site_exact", rows_json(exact)},
          {"site_stochastic", rows_json(stochastic)}};
}

std::string AttributionResult::table() const {
  std::string t;
  char line[256];
  std::snprintf(line, sizeof line, "attribution of the bias of %s: %.4g (se %.2g)\n",
                target.c_str(), bias_full, bias_full_se);
  t += line;
  const auto block = [&](const char* title, const std::vector<SiteAttribution>& rows) {
    if (rows.empty()) return;
    std::snprintf(line, sizeof line, "  %-22s %12s %12s %10s\n", title, "bias without", "explained",
                  "fraction");
    t += line;
    for (const auto& r : rows) {
      std::snprintf(line, sizeof line, "  %-22s %12.4g %12.4g %9.1f%%\n",
                    std::string(site_name(r.site)).c_str(), r.bias_without, r.explained,
                    100 * r.fraction);
      t += line;
    }
  };
  block("site made exact", exact);
  block("site made stochastic", stochastic);
  return t;
}

}  // namespace simprec::attention
