#include "lib/experiments/record_layout.hpp"

#include <initializer_list>
#include <string_view>

namespace simprec::experiments {
namespace {

using json = nlohmann::json;

enum class Kind { kString, kBoolean, kCount, kInteger, kNumberOrNull, kObject, kArray, kAny };

const char* expected_text(Kind kind) {
  switch (kind) {
    case Kind::kString:
      return "a string";
    case Kind::kBoolean:
      return "true or false";
    case Kind::kCount:
      return "a non-negative integer";
    case Kind::kInteger:
      return "an integer";
    case Kind::kNumberOrNull:
      return "a number or null";
    case Kind::kObject:
      return "an object";
    case Kind::kArray:
      return "an array";
    case Kind::kAny:
      return "anything";
  }
  return "?";
}

bool has_kind(const json& value, Kind kind) {
  switch (kind) {
    case Kind::kString:
      return value.is_string();
    case Kind::kBoolean:
      return value.is_boolean();
    case Kind::kCount:
      return value.is_number_unsigned();
    case Kind::kInteger:
      return value.is_number_integer();
    case Kind::kNumberOrNull:
      return value.is_number() || value.is_null();
    case Kind::kObject:
      return value.is_object();
    case Kind::kArray:
      return value.is_array();
    case Kind::kAny:
      return true;
  }
  return false;
}

std::string type_text(const json& value) {
  if (value.is_number_integer() && !value.is_number_unsigned()) return "a negative integer";
  if (value.is_number_float()) return "a float";
  return std::string(value.is_object() ? "an " : "a ") + value.type_name();
}

struct Member {
  const char* name;
  Kind kind;
  bool required = false;
};

// The first problem of `members` in `object` (reached by `path`); unknown members are allowed
// except at the top level, where the layout is fixed.
std::string check_members(const json& object, const std::string& path,
                          std::initializer_list<Member> members) {
  if (!object.is_object()) return (path.empty() ? "the record" : path) + " is not an object";
  for (const Member& m : members) {
    const auto it = object.find(m.name);
    const std::string where = path.empty() ? m.name : path + "." + m.name;
    if (it == object.end()) {
      if (m.required) return "no " + where;
      continue;
    }
    if (!has_kind(*it, m.kind))
      return where + " is " + type_text(*it) + ", expected " + expected_text(m.kind);
  }
  return "";
}

// Every element of `array` has `kind`.
std::string check_elements(const json& object, const char* name, const std::string& path,
                           Kind kind) {
  const auto it = object.find(name);
  if (it == object.end()) return "";
  for (size_t i = 0; i < it->size(); ++i) {
    if (!has_kind((*it)[i], kind)) {
      return path + "." + name + "[" + std::to_string(i) + "] is " + type_text((*it)[i]) +
             ", expected " + expected_text(kind);
    }
  }
  return "";
}

// Every member of the object `name` has `kind`.
std::string check_values(const json& object, const char* name, const std::string& path, Kind kind) {
  const auto it = object.find(name);
  if (it == object.end()) return "";
  for (const auto& [key, value] : it->items()) {
    if (!has_kind(value, kind)) {
      return path + "." + name + "." + key + " is " + type_text(value) + ", expected " +
             expected_text(kind);
    }
  }
  return "";
}

std::string first_of(std::initializer_list<std::string> problems) {
  for (const auto& p : problems) {
    if (!p.empty()) return p;
  }
  return "";
}

std::string check_implementation(const json& impl) {
  const std::string at = "params.implementation";
  return first_of({check_members(impl, at,
                                 {{"name", Kind::kString},
                                  {"preset", Kind::kString},
                                  {"numerics", Kind::kString},
                                  {"format", Kind::kString},
                                  {"tile", Kind::kString},
                                  {"causal", Kind::kBoolean},
                                  {"causal_align", Kind::kString},
                                  {"window", Kind::kArray},
                                  {"softcap", Kind::kNumberOrNull},
                                  {"alibi", Kind::kString},
                                  {"score_mod", Kind::kString},
                                  {"mask_mod", Kind::kString},
                                  {"set", Kind::kArray},
                                  {"mitigations", Kind::kArray},
                                  {"plugin", Kind::kString},
                                  {"kernel", Kind::kString}}),
                   check_elements(impl, "set", at, Kind::kString),
                   check_elements(impl, "mitigations", at, Kind::kString)});
}

std::string check_input(const json& input) {
  const std::string at = "params.input";
  std::string problem = first_of({check_members(input, at,
                                                {{"name", Kind::kString},
                                                 {"generator", Kind::kString},
                                                 {"shape", Kind::kArray},
                                                 {"seed", Kind::kCount},
                                                 {"backward", Kind::kBoolean},
                                                 {"query_rows", Kind::kInteger},
                                                 {"options", Kind::kObject},
                                                 {"input_format", Kind::kString}}),
                                  check_elements(input, "shape", at, Kind::kInteger),
                                  check_values(input, "options", at, Kind::kNumberOrNull)});
  if (problem.empty() && input.contains("shape") && input["shape"].size() != 4)
    problem = at + ".shape has " + std::to_string(input["shape"].size()) + " entries, expected 4";
  return problem;
}

std::string check_results(const json& results) {
  const std::string at = "results";
  std::string problem = check_members(results, at,
                                      {{"outputs", Kind::kObject},
                                       {"traces", Kind::kObject},
                                       {"attribution", Kind::kObject},
                                       {"row_sums", Kind::kObject},
                                       {"config", Kind::kObject},
                                       {"plugin", Kind::kObject},
                                       {"numerics", Kind::kString}});
  if (!problem.empty()) return problem;
  if (results.contains("outputs")) {
    for (const auto& [name, metrics] : results["outputs"].items()) {
      const std::string where = at + ".outputs." + name;
      if (!metrics.is_object()) return where + " is " + type_text(metrics) + ", expected an object";
      for (const auto& [key, value] : metrics.items()) {
        const Kind kind = key == "ulp_histogram" ? Kind::kObject : Kind::kNumberOrNull;
        if (!has_kind(value, kind))
          return where + "." + key + " is " + type_text(value) + ", expected " +
                 expected_text(kind);
      }
      if (problem = check_values(metrics, "ulp_histogram", where, Kind::kNumberOrNull);
          !problem.empty())
        return problem;
    }
  }
  if (results.contains("attribution")) {
    const json& a = results["attribution"];
    const std::string where = at + ".attribution";
    problem = first_of({check_members(a, where,
                                      {{"output", Kind::kString},
                                       {"bias", Kind::kNumberOrNull},
                                       {"bias_se", Kind::kNumberOrNull},
                                       {"bias_z", Kind::kNumberOrNull},
                                       {"sites", Kind::kArray}}),
                        check_elements(a, "sites", where, Kind::kObject)});
    if (!problem.empty()) return problem;
    if (a.contains("sites")) {
      for (size_t i = 0; i < a["sites"].size(); ++i) {
        problem = check_members(a["sites"][i], where + ".sites[" + std::to_string(i) + "]",
                                {{"site", Kind::kString},
                                 {"bias_exact", Kind::kNumberOrNull},
                                 {"bias_z_exact", Kind::kNumberOrNull},
                                 {"explained_exact", Kind::kNumberOrNull},
                                 {"bias_sr", Kind::kNumberOrNull},
                                 {"bias_z_sr", Kind::kNumberOrNull},
                                 {"explained_sr", Kind::kNumberOrNull}});
        if (!problem.empty()) return problem;
      }
    }
  }
  problem = first_of(
      {results.contains("row_sums")
           ? check_members(results["row_sums"], at + ".row_sums", {{"cause", Kind::kString}})
           : "",
       results.contains("plugin")
           ? check_members(results["plugin"], at + ".plugin", {{"input_format", Kind::kString}})
           : "",
       results.contains("config")
           ? check_members(results["config"], at + ".config", {{"tile", Kind::kArray}})
           : ""});
  if (!problem.empty()) return problem;
  if (results.contains("config") && results["config"].contains("tile")) {
    const json& tile = results["config"]["tile"];
    if (tile.size() != 2 || !tile[0].is_number_integer() || !tile[1].is_number_integer())
      return at + ".config.tile is not two integers";
  }
  return "";
}

}  // namespace

std::string record_layout_problem(const json& record) {
  if (!record.is_object()) return "not a JSON object";
  static const std::initializer_list<std::string_view> kTopLevel = {
      "case_id", "case_index", "label", "experiment", "simprec_version",
      "params",  "results",    "error", "elapsed_s"};
  for (const auto& [key, value] : record.items()) {
    bool known = false;
    for (const std::string_view k : kTopLevel) known = known || k == key;
    if (!known) return "an unknown member '" + key.substr(0, 40) + "'";
  }
  std::string problem = check_members(record, "",
                                      {{"case_id", Kind::kString, true},
                                       {"case_index", Kind::kCount},
                                       {"label", Kind::kString},
                                       {"experiment", Kind::kString},
                                       {"simprec_version", Kind::kString},
                                       {"params", Kind::kObject, true},
                                       {"results", Kind::kObject},
                                       {"error", Kind::kString},
                                       {"elapsed_s", Kind::kNumberOrNull}});
  if (!problem.empty()) return problem;
  const json& params = record["params"];
  problem = check_members(params, "params",
                          {{"implementation", Kind::kObject, true},
                           {"input", Kind::kObject, true},
                           {"analysis", Kind::kObject, true},
                           {"study", Kind::kString}});
  if (!problem.empty()) return problem;
  problem = first_of({check_implementation(params["implementation"]), check_input(params["input"]),
                      check_members(params["analysis"], "params.analysis",
                                    {{"baseline", Kind::kString},
                                     {"backward", Kind::kBoolean},
                                     {"attribute", Kind::kBoolean},
                                     {"attribute_sites", Kind::kArray},
                                     {"outputs", Kind::kArray}})});
  if (!problem.empty()) return problem;
  if (record.contains("results")) return check_results(record["results"]);
  return "";
}

}  // namespace simprec::experiments
