// Read-only accessors over the case records of results.jsonl, shared by the CSV, the report
// and the plots (the record layout is documented in docs/experiments.md).
#pragma once

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace simprec::reports {

inline constexpr const char* kOutputs[] = {"o", "delta", "dq", "dk", "dv"};

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
  std::string tile() const {
    const std::string t = implementation().value("tile", "");
    return t.empty() ? "default" : t;
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
  bool has_output(const std::string& output) const {
    return !failed() && record.contains("results") &&
           record["results"].value("outputs", nlohmann::json::object()).contains(output);
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

}  // namespace simprec::reports
