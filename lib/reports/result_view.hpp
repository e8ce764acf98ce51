// Read-only accessors over the case records of results.jsonl, shared by the CSV, the report
// and the plots (the record layout is documented in docs/experiments.md).
#pragma once

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace simprec::reports {

inline constexpr const char* kOutputs[] = {"o", "delta", "dq", "dk", "dv"};

// The number `key` of `object`; NaN when it is absent or not a number (null: a statistic that
// was not finite).
inline double number_in(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_number() ? it->get<double>()
                                               : std::numeric_limits<double>::quiet_NaN();
}

struct CaseView {
  const nlohmann::json& record;

  const nlohmann::json& params() const { return record.at("params"); }
  const nlohmann::json& implementation() const { return params().at("implementation"); }
  const nlohmann::json& input() const { return params().at("input"); }
  bool failed() const { return record.contains("error"); }
  std::string impl_name() const { return implementation().value("name", ""); }
  // The preset, the numerics spec of an implementation given by one, or "plugin".
  std::string preset() const {
    return implementation().value("preset", implementation().value("numerics", "plugin"));
  }
  // A plugin's format is the one its kernel takes its inputs in.
  std::string format() const {
    if (!failed() && record.contains("results") && record["results"].contains("plugin")) {
      return record["results"]["plugin"].value("input_format", "");
    }
    return implementation().value("format", "");
  }
  // The implementation's tile; where none was given and the run took its tile from the sram
  // rule, that tile and M ("64x64 (sram 16384)").
  std::string tile() const {
    const std::string t = implementation().value("tile", "");
    if (!t.empty()) return t;
    const auto [rows, cols] = run_tile();
    const std::string sram = config_value("sram");
    if (cols > 0 && !sram.empty() && sram != "0")
      return std::to_string(rows) + "x" + std::to_string(cols) + " (sram " + sram + ")";
    return "default";
  }
  // The tile (Br, Bc) the case ran with, from its recorded configuration; (0, 0) when unknown.
  std::pair<long long, long long> run_tile() const {
    if (failed() || !record.contains("results")) return {0, 0};
    const auto& config = record["results"].value("config", nlohmann::json::object());
    if (!config.contains("tile") || !config["tile"].is_array() || config["tile"].size() != 2)
      return {0, 0};
    return {config["tile"][0].get<long long>(), config["tile"][1].get<long long>()};
  }
  // A structural option of the recorded configuration as text ("" when absent).
  std::string config_value(const char* key) const {
    if (failed() || !record.contains("results")) return "";
    const auto& config = record["results"].value("config", nlohmann::json::object());
    if (!config.contains(key)) return "";
    return config[key].is_string() ? config[key].get<std::string>() : config[key].dump();
  }
  std::string mitigations() const {
    return join(implementation().value("mitigations", nlohmann::json::array()));
  }
  std::string overrides() const {
    return join(implementation().value("set", nlohmann::json::array()));
  }
  std::string input_name() const { return input().value("name", ""); }
  std::string generator() const { return input().value("generator", "file"); }
  long long dim(int i) const {
    return input().contains("shape") ? input()["shape"][i].get<long long>() : -1;
  }
  long long seq_len() const { return dim(2); }
  long long seed() const { return input().value("seed", 0LL); }
  bool causal() const { return implementation().value("causal", false); }

  // A metric of one output ("o", "dq", ...), NaN when absent.
  double metric(const std::string& output, const std::string& name) const {
    if (failed() || !record.contains("results")) return nan();
    const auto& outputs = record["results"].value("outputs", nlohmann::json::object());
    if (!outputs.contains(output)) return nan();
    const auto& m = outputs[output];
    if (!m.contains(name) || !m[name].is_number()) return nan();
    return m[name].get<double>();
  }
  // "inf (4096 NaN, 0 inf)" where the output has values the NaN rule counts as differences,
  // the value of max|err| otherwise.
  std::string max_abs_text(const std::string& output) const;
  // Elements of the output that disagree with the reference under the NaN rule (0 if absent).
  int64_t nonfinite_mismatch(const std::string& output) const {
    const double n = metric(output, "nonfinite_mismatch");
    return std::isnan(n) ? 0 : static_cast<int64_t>(n);
  }
  bool has_output(const std::string& output) const {
    return !failed() && record.contains("results") &&
           record["results"].value("outputs", nlohmann::json::object()).contains(output);
  }
  // Why O holds NaN or infinite values, from the forward pass's row sums (empty: no cause
  // recorded, or none).
  std::string nonfinite_cause() const {
    if (failed() || !record.contains("results")) return "";
    const auto& r = record["results"];
    return r.contains("row_sums") ? r["row_sums"].value("cause", "") : "";
  }
  // The share of the output's values that are NaN or infinite (NaN when absent).
  double nonfinite_share(const std::string& output) const {
    return (metric(output, "nan_count") + metric(output, "inf_count")) / metric(output, "count");
  }
  const nlohmann::json* attribution() const {
    if (failed() || !record.contains("results") || !record["results"].contains("attribution"))
      return nullptr;
    return &record["results"]["attribution"];
  }

  // Everything that identifies the case except the named implementation fields, as a key for
  // grouping cases that differ only in those fields.
  std::string key_without(std::initializer_list<const char*> fields) const {
    nlohmann::json p = params();
    for (const char* f : fields) p["implementation"].erase(f);
    // What was analysed, and in which study, does not change the case's numbers.
    p.erase("analysis");
    p.erase("study");
    return p.dump();
  }

  static double nan() { return std::numeric_limits<double>::quiet_NaN(); }
  static std::string join(const nlohmann::json& list) {
    std::string out;
    for (const auto& e : list) out += (out.empty() ? "" : " ") + e.get<std::string>();
    return out.empty() ? "-" : out;
  }
};

// "1.23e-04", "nan" as "-".
std::string fmt(double x, int digits = 3);

inline std::string CaseView::max_abs_text(const std::string& output) const {
  if (nonfinite_mismatch(output) == 0) return fmt(metric(output, "max_abs"));
  return "inf (" + fmt(metric(output, "nan_count"), 12) + " NaN, " +
         fmt(metric(output, "inf_count"), 12) + " inf)";
}

}  // namespace simprec::reports
