#include "lib/reports/comparisons.hpp"

#include <cmath>

namespace simprec::reports {

std::string describe(const CaseView& c) {
  std::string s = "`" + c.impl_name() + "` (" + c.preset() + ", " + c.format();
  if (c.tile() != "default") s += ", tile " + c.tile();
  return s + ")";
}

std::string baseline_name(const std::vector<nlohmann::json>& records) {
  for (const auto& r : records) {
    const std::string b = r["params"]["analysis"].value("baseline", "");
    if (!b.empty()) return b;
  }
  return "";
}

std::vector<BaselinePair> baseline_pairs(const std::vector<nlohmann::json>& records) {
  const std::string baseline = baseline_name(records);
  std::vector<BaselinePair> pairs;
  if (baseline.empty()) return pairs;
  const auto key = [](const CaseView& c) {
    return c.input().dump() + "|" + c.format() + "|" + (c.causal() ? "c" : "n");
  };
  std::map<std::string, const nlohmann::json*> baselines;
  for (const auto& r : records) {
    const CaseView c{r};
    if (c.impl_name() == baseline && c.mitigations() == "-" && c.overrides() == "-" &&
        c.has_output("o")) {
      baselines[key(c)] = &r;
    }
  }
  for (const auto& r : records) {
    const CaseView c{r};
    if (c.impl_name() == baseline || c.mitigations() != "-" || c.overrides() != "-" ||
        !c.has_output("o"))
      continue;
    if (auto it = baselines.find(key(c)); it != baselines.end()) pairs.push_back({&r, it->second});
  }
  return pairs;
}

std::vector<MitigationPair> mitigation_pairs(const std::vector<nlohmann::json>& records) {
  std::map<std::string, const nlohmann::json*> unmitigated;
  for (const auto& r : records) {
    const CaseView c{r};
    if (c.mitigations() == "-" && c.has_output("o"))
      unmitigated[c.key_without({"mitigations", "name"})] = &r;
  }
  std::vector<MitigationPair> pairs;
  for (const auto& r : records) {
    const CaseView c{r};
    if (c.mitigations() == "-" || !c.has_output("o")) continue;
    const auto it = unmitigated.find(c.key_without({"mitigations", "name"}));
    if (it != unmitigated.end()) pairs.push_back({&r, it->second});
  }
  return pairs;
}

std::map<std::string, std::vector<BaselineRatio>> baseline_ratios(
    const std::vector<nlohmann::json>& records) {
  std::map<std::string, std::map<long long, BaselineRatio>> sums;
  for (const auto& p : baseline_pairs(records)) {
    const CaseView t{*p.test}, b{*p.baseline};
    const double rms = t.metric("o", "rms") / b.metric("o", "rms");
    if (!std::isfinite(rms)) continue;
    BaselineRatio& r = sums[describe(t) + " on " + t.input_name()][t.seq_len()];
    const long long bc = t.run_tile().second;
    r.seq_len = t.seq_len();
    if (r.cases == 0 && bc > 0) r.key_tiles = (t.seq_len() + bc - 1) / bc;
    r.rms += rms;
    r.max_abs += t.metric("o", "max_abs") / b.metric("o", "max_abs");
    ++r.cases;
  }
  std::map<std::string, std::vector<BaselineRatio>> series;
  for (auto& [name, by_n] : sums) {
    for (auto& [n, r] : by_n) {
      r.rms /= r.cases;
      r.max_abs /= r.cases;
      series[name].push_back(r);
    }
  }
  return series;
}

}  // namespace simprec::reports
