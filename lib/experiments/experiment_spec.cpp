#include "lib/experiments/experiment_spec.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <set>
#include <span>

#include "lib/attention/masking.hpp"
#include "lib/attention/score_mod.hpp"
#include "lib/config/toml_reader.hpp"
#include "lib/limits/checked_arithmetic.hpp"
#include "lib/limits/checksums.hpp"
#include "lib/limits/strict_parse.hpp"

namespace simprec::experiments {
namespace {

using config::ConfigError;
using config::TableReader;
namespace fs = std::filesystem;

// Sweep keys and whether they change the implementation (else the input).
struct AxisKind {
  const char* key;
  bool implementation;
};
constexpr AxisKind kAxes[] = {
    {"format", true},    {"preset", true}, {"numerics", true},    {"tile", true},
    {"causal", true},    {"set", true},    {"mitigations", true}, {"seq_len", false},
    {"head_dim", false}, {"draws", false}, {"seed", false},
};

const AxisKind* find_axis(std::string_view key) {
  for (const auto& a : kAxes) {
    if (a.key == key) return &a;
  }
  return nullptr;
}

// Re-raises a FieldError from a backend check at the field's position in `table`.
template <class Fn>
void located(const TableReader& table, Fn&& check) {
  try {
    check();
  } catch (const FieldError& e) {
    std::string key = e.field;
    int index = -1;
    if (const auto open = key.find('['); open != std::string::npos) {
      index = std::stoi(key.substr(open + 1));
      key = key.substr(0, open);
    }
    const toml::node* at = table.node(key);
    if (at && index >= 0 && at->is_array() && static_cast<size_t>(index) < at->as_array()->size()) {
      at = at->as_array()->get(static_cast<size_t>(index));
    }
    table.fail(at, "'" + table.key_path(e.field) + "': " + e.what());
  }
}

// A path relative to the experiment file's folder, absolute and normal.
std::string resolve_path(const std::string& value, const fs::path& base) {
  const fs::path p = fs::path(value).is_absolute() ? fs::path(value) : base / value;
  return fs::absolute(p).lexically_normal().string();
}

// A numerics spec that names a TOML file is read relative to the experiment file, as inputs and
// plugins are; a spec given as text is left as it is.
std::string resolve_numerics_file(const std::string& numerics, const fs::path& base) {
  const std::string_view suffix = ".toml";
  const bool file = numerics.size() > suffix.size() &&
                    numerics.compare(numerics.size() - suffix.size(), suffix.size(), suffix) == 0;
  return file ? resolve_path(numerics, base) : numerics;
}

InputSpec read_input(const TableReader& t, const std::string& name, const fs::path& base,
                     const CaseBackend& backend) {
  t.allow_only({"generator", "shape", "seed", "backward", "options", "query_rows", "q", "k", "v",
                "do", "input_format"});
  InputSpec in;
  in.name = name;
  in.generator = t.string("generator").value_or("");
  const bool files = t.has("q") || t.has("k") || t.has("v");
  if (in.generator.empty() == !files) {
    t.fail(nullptr, "input '" + name +
                        "' needs either 'generator' (with 'shape') or the files 'q', 'k', 'v'");
  }
  if (!in.generator.empty()) {
    auto shape = t.integers("shape", 1, int64_t{1} << 20);
    if (!shape || shape->size() != 4) {
      t.fail(t.node("shape") ? t.node("shape") : nullptr,
             "input '" + name + "' needs 'shape' = [B, H, N, d] (four positive integers)");
    }
    in.shape = *shape;
    in.seed = static_cast<uint64_t>(t.integer("seed", 0, INT64_MAX).value_or(0));
    in.backward = t.boolean("backward").value_or(true);
    in.query_rows = t.integer("query_rows", 1, int64_t{1} << 31).value_or(0);
    if (in.query_rows > 0 && in.backward) {
      t.fail_at("query_rows", "input '" + name +
                                  "': query_rows samples rows for a forward-pass study; set "
                                  "backward = false");
    }
    if (auto options = t.table("options")) {
      for (const auto& key : options->keys()) {
        const double value = *options->number(key);
        if (!std::isfinite(value)) {
          options->fail_at(key, "'" + options->key_path(key) + "' must be a finite number, not " +
                                    std::to_string(value));
        }
        in.options[key] = value;
      }
    }
  } else {
    for (const char* key : {"q", "k", "v"}) {
      if (!t.has(key))
        t.fail(nullptr, "input '" + name + "' has no '" + std::string(key) + "' file");
    }
    const auto resolve = [&](const char* key) -> std::string {
      const auto value = t.string(key);
      if (!value) return "";
      const std::string p = resolve_path(*value, base);
      if (!fs::exists(p)) t.fail_at(key, "file '" + p + "' does not exist");
      return p;
    };
    in.q = resolve("q");
    in.k = resolve("k");
    in.v = resolve("v");
    in.d_out = resolve("do");
    in.input_format = t.string("input_format").value_or("");
    in.backward = !in.d_out.empty();
  }
  located(t, [&] { backend.check_input(in); });
  return in;
}

ImplementationSpec read_implementation(const TableReader& t, const std::string& name,
                                       const fs::path& base, const CaseBackend& backend) {
  t.allow_only({"preset", "numerics", "format", "tile", "causal", "causal_align", "window",
                "softcap", "alibi", "score_mod", "mask_mod", "set", "mitigations", "plugin",
                "kernel"});
  ImplementationSpec impl;
  impl.name = name;
  impl.preset = t.string("preset").value_or("");
  impl.numerics = t.string("numerics").value_or("");
  impl.plugin = t.string("plugin").value_or("");
  impl.numerics = resolve_numerics_file(impl.numerics, base);
  if (impl.preset.empty() + impl.numerics.empty() + impl.plugin.empty() != 2) {
    t.fail(nullptr,
           "implementation '" + name + "' needs exactly one of 'preset', 'numerics' or 'plugin'");
  }
  if (!impl.plugin.empty()) {
    impl.plugin = resolve_path(impl.plugin, base);
    impl.kernel = t.string("kernel").value_or("");
    if (impl.kernel.empty())
      t.fail(nullptr, "implementation '" + name + "' names a plugin but no 'kernel'");
  }
  impl.format = t.string("format").value_or("bf16");
  impl.tile = t.string("tile").value_or("");
  impl.causal = t.boolean("causal").value_or(false);
  impl.causal_align = t.string("causal_align").value_or("top-left");
  try {
    attention::parse_causal_align(impl.causal_align, "causal_align");
  } catch (const std::invalid_argument& e) {
    t.fail(nullptr, e.what());
  }
  impl.window = t.integers("window", -1, int64_t{1} << 40).value_or(std::vector<int64_t>{});
  if (!impl.window.empty() && impl.window.size() != 2)
    t.fail(nullptr, "window: expected [LEFT, RIGHT] (-1: unbounded on that side)");
  impl.softcap = t.number("softcap").value_or(0.0);
  if (!(impl.softcap >= 0) || std::isinf(impl.softcap))
    t.fail(nullptr, "softcap: expected a finite cap > 0");
  if (const auto alibi = t.string("alibi")) {
    if (*alibi != "default")
      t.fail(nullptr, "alibi: expected \"default\" (per-head slopes: see docs)");
    impl.alibi_default = true;
  }
  impl.score_mod = t.string("score_mod").value_or("");
  if (!impl.score_mod.empty()) {
    if (impl.softcap > 0 || impl.alibi_default)
      t.fail(nullptr, "score_mod with softcap or alibi: write them into the score_mod");
    try {
      attention::ScoreMod(impl.score_mod, {});
    } catch (const std::invalid_argument& e) {
      t.fail(nullptr, e.what());
    }
  }
  impl.mask_mod = t.string("mask_mod").value_or("");
  if (!impl.mask_mod.empty()) {
    try {
      attention::MaskMod(impl.mask_mod, {});
    } catch (const std::invalid_argument& e) {
      t.fail(nullptr, e.what());
    }
  }
  impl.set = t.strings("set").value_or(std::vector<std::string>{});
  impl.mitigations = t.strings("mitigations").value_or(std::vector<std::string>{});
  located(t, [&] { backend.check_implementation(impl); });
  return impl;
}

SweepAxis read_axis(const TableReader& sweep, const std::string& key, const fs::path& base) {
  const AxisKind* kind = find_axis(key);
  if (!kind) {
    std::vector<std::string> names;
    for (const auto& a : kAxes) names.emplace_back(a.key);
    std::string message = "unknown sweep axis '" + key + "'";
    if (auto guess = config::did_you_mean(key, names))
      message += "; did you mean '" + *guess + "'?";
    sweep.fail_at(key, message);
  }
  const toml::node* n = sweep.node(key);
  const toml::array* values = n->as_array();
  if (!values || values->empty())
    sweep.fail(n, "sweep axis '" + key + "' must be a non-empty array of values");
  SweepAxis axis;
  axis.key = key;
  for (const auto& v : *values) {
    const std::string k = key;
    if (k == "format" || k == "preset" || k == "tile" || k == "numerics") {
      if (!v.is_string())
        sweep.fail(&v, "sweep." + k + " values must be strings, not " + config::type_name(v));
      const std::string text = *v.value<std::string>();
      axis.values.emplace_back(k == "numerics" ? resolve_numerics_file(text, base) : text);
    } else if (k == "causal") {
      if (!v.is_boolean()) sweep.fail(&v, "sweep.causal values must be true or false");
      axis.values.emplace_back(*v.value<bool>());
    } else if (k == "set" || k == "mitigations") {
      nlohmann::json list = nlohmann::json::array();
      if (v.is_string()) {
        list.push_back(*v.value<std::string>());
      } else if (const toml::array* a = v.as_array()) {
        for (const auto& e : *a) {
          if (!e.is_string()) sweep.fail(&e, "sweep." + k + " entries must be strings");
          list.push_back(*e.value<std::string>());
        }
      } else {
        sweep.fail(&v, "sweep." + k + " values must be strings or arrays of strings");
      }
      axis.values.push_back(list);
    } else {  // seq_len, head_dim, draws, seed
      if (!v.is_integer())
        sweep.fail(&v, "sweep." + k + " values must be integers, not " + config::type_name(v));
      const int64_t x = *v.value<int64_t>();
      const int64_t min = k == "seed" ? 0 : 1;
      if (x < min || x > (int64_t{1} << 20)) {
        sweep.fail(&v, "sweep." + k + " value " + std::to_string(x) + " is out of range [" +
                           std::to_string(min) + ", 1048576]");
      }
      axis.values.emplace_back(x);
    }
  }
  return axis;
}

// Every file the cases read (inputs, numerics files, plugins) and its contents' digest: the
// fingerprint changes when any of them does, so that a resume never mixes records computed from
// other contents with new ones.
void record_file_digests(ExperimentSpec& spec) {
  const auto add = [&](const std::string& file, const char* what) {
    if (file.empty() || spec.files.count(file)) return;
    try {
      spec.files[file] = limits::file_digest(file, what);
    } catch (const std::runtime_error& e) {
      throw ConfigError(spec.file + ": " + e.what());
    }
  };
  for (const auto& in : spec.inputs) {
    for (const std::string* file : {&in.q, &in.k, &in.v, &in.d_out}) add(*file, "a .npy file");
  }
  const auto add_numerics = [&](const std::string& numerics) {
    if (numerics.size() > 5 && numerics.ends_with(".toml")) add(numerics, "a numerics file (TOML)");
  };
  for (const auto& impl : spec.implementations) {
    add_numerics(impl.numerics);
    add(impl.plugin, "a plugin (shared library)");
  }
  for (const auto& study : spec.studies) {
    for (const auto& axis : study.sweep) {
      if (axis.key != "numerics") continue;
      for (const auto& value : axis.values) add_numerics(value.get<std::string>());
    }
  }
}

}  // namespace

nlohmann::json InputSpec::to_json() const {
  nlohmann::json j = {{"name", name}};
  if (!generator.empty()) {
    j["generator"] = generator;
    j["shape"] = shape;
    j["seed"] = seed;
    j["backward"] = backward;
    if (!options.empty()) j["options"] = options;
    if (query_rows > 0) j["query_rows"] = query_rows;
  } else {
    j["q"] = q;
    j["k"] = k;
    j["v"] = v;
    if (!d_out.empty()) j["do"] = d_out;
    if (!input_format.empty()) j["input_format"] = input_format;
  }
  return j;
}

nlohmann::json ImplementationSpec::to_json() const {
  nlohmann::json j = {{"name", name}};
  if (!plugin.empty()) {
    j["plugin"] = plugin;
    j["kernel"] = kernel;
  } else if (!numerics.empty()) {
    j["numerics"] = numerics;
  } else {
    j["preset"] = preset;
  }
  j["format"] = format;
  j["tile"] = tile;
  j["causal"] = causal;
  // Masking only where set, so that records of unmasked studies read as they always did.
  if (causal_align != "top-left") j["causal_align"] = causal_align;
  if (!window.empty()) j["window"] = window;
  if (softcap > 0) j["softcap"] = softcap;
  if (alibi_default) j["alibi"] = "default";
  if (!score_mod.empty()) j["score_mod"] = score_mod;
  if (!mask_mod.empty()) j["mask_mod"] = mask_mod;
  j["set"] = set;
  j["mitigations"] = mitigations;
  return j;
}

nlohmann::json Study::to_json() const {
  nlohmann::json j = {{"name", name}, {"inputs", inputs}, {"implementations", implementations}};
  j["sweep"] = nlohmann::json::array();
  for (const auto& axis : sweep) j["sweep"].push_back({{"key", axis.key}, {"values", axis.values}});
  if (attribute) j["attribute"] = *attribute;
  return j;
}

nlohmann::json AnalysisSpec::to_json() const {
  return {{"backward", backward},
          {"attribute", attribute},
          {"attribute_sites", attribute_sites},
          {"baseline", baseline},
          {"outputs", outputs}};
}

nlohmann::json ExperimentSpec::to_json() const {
  nlohmann::json j = {{"name", name}, {"description", description}, {"max_cases", max_cases}};
  for (const auto& in : inputs) j["inputs"].push_back(in.to_json());
  for (const auto& impl : implementations) j["implementations"].push_back(impl.to_json());
  for (const auto& study : studies) j["studies"].push_back(study.to_json());
  j["analysis"] = analysis.to_json();
  // Only where there are files, so that the fingerprint of an experiment of generated inputs is
  // the one it always had (its results folders resume as before).
  if (!files.empty()) j["files"] = files;
  return j;
}

std::string hash_hex(const std::string& text) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (const unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  char buffer[17];
  std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(h));
  return buffer;
}

std::string ExperimentSpec::fingerprint() const {
  return hash_hex(to_json().dump());
}

ExperimentSpec load_experiment(const std::string& path, const CaseBackend& backend) {
  if (!fs::exists(path)) throw ConfigError(path + ": no such experiment file");
  const toml::table root_table = config::parse_toml_file(path);
  const TableReader root(root_table, path, "");
  root.allow_only({"name", "description", "max_cases", "inputs", "implementations", "sweep",
                   "analysis", "studies"});
  const fs::path base = fs::absolute(path).parent_path();
  ExperimentSpec spec;
  spec.file = fs::absolute(path).lexically_normal().string();
  spec.name = root.string("name").value_or(fs::path(path).stem().string());
  if (root.has("name")) {
    if (const std::string problem = folder_name_problem(spec.name); !problem.empty())
      root.fail_at("name", "'name' = \"" + limits::excerpt(spec.name) + "\": " + problem);
  }
  spec.description = root.string("description").value_or("");
  spec.max_cases = root.integer("max_cases", 1, int64_t{1} << 40).value_or(10000);

  const auto inputs = root.table("inputs");
  if (!inputs || inputs->keys().empty())
    root.fail(nullptr, "the experiment has no [inputs.NAME] table");
  for (const auto& name : inputs->keys()) {
    const auto t = inputs->table(name);
    spec.inputs.push_back(read_input(*t, name, base, backend));
  }
  const auto impls = root.table("implementations");
  if (!impls || impls->keys().empty()) {
    root.fail(nullptr, "the experiment has no [implementations.NAME] table");
  }
  for (const auto& name : impls->keys()) {
    const auto t = impls->table(name);
    spec.implementations.push_back(read_implementation(*t, name, base, backend));
  }
  const auto read_sweep = [&](const TableReader& sweep, std::vector<SweepAxis>& axes) {
    for (const auto& key : sweep.keys()) {
      axes.push_back(read_axis(sweep, key, base));
      axes.back().location = config::location(path, *sweep.node(key));
    }
  };
  if (const auto studies = root.table("studies")) {
    if (root.has("sweep"))
      root.fail_at("sweep", "a file with [studies] gives each study its own sweep");
    std::vector<std::string> input_names, impl_names;
    for (const auto& in : spec.inputs) input_names.push_back(in.name);
    for (const auto& impl : spec.implementations) impl_names.push_back(impl.name);
    const auto check_names = [](const TableReader& t, const char* key,
                                const std::vector<std::string>& known, const char* what) {
      std::vector<std::string> names = t.strings(key).value_or(known);
      const toml::array* list = t.node(key) ? t.node(key)->as_array() : nullptr;
      for (size_t i = 0; i < names.size(); ++i) {
        if (std::find(known.begin(), known.end(), names[i]) != known.end()) continue;
        std::string message = "no " + std::string(what) + " named '" + names[i] + "'";
        if (auto guess = config::did_you_mean(names[i], known))
          message += "; did you mean '" + *guess + "'?";
        t.fail(list && i < list->size() ? list->get(i) : t.node(key), message);
      }
      return names;
    };
    for (const auto& name : studies->keys()) {
      const auto t = studies->table(name);
      t->allow_only({"inputs", "implementations", "sweep", "attribute"});
      Study study;
      study.name = name;
      study.inputs = check_names(*t, "inputs", input_names, "input");
      study.implementations = check_names(*t, "implementations", impl_names, "implementation");
      study.attribute = t->boolean("attribute");
      if (const auto sweep = t->table("sweep")) read_sweep(*sweep, study.sweep);
      spec.studies.push_back(std::move(study));
    }
  } else {
    Study study;
    for (const auto& in : spec.inputs) study.inputs.push_back(in.name);
    for (const auto& impl : spec.implementations) study.implementations.push_back(impl.name);
    if (const auto sweep = root.table("sweep")) read_sweep(*sweep, study.sweep);
    spec.studies.push_back(std::move(study));
  }
  if (const auto analysis = root.table("analysis")) {
    analysis->allow_only({"backward", "attribute", "attribute_sites", "baseline", "outputs"});
    spec.analysis.backward = analysis->boolean("backward").value_or(true);
    spec.analysis.attribute = analysis->boolean("attribute").value_or(false);
    spec.analysis.attribute_sites =
        analysis->strings("attribute_sites").value_or(std::vector<std::string>{});
    spec.analysis.baseline = analysis->string("baseline").value_or("");
    const std::vector<std::string> known_outputs = {"o", "delta", "dq", "dk", "dv"};
    spec.analysis.outputs = analysis->strings("outputs").value_or(known_outputs);
    for (size_t i = 0; i < spec.analysis.outputs.size(); ++i) {
      const std::string& name = spec.analysis.outputs[i];
      if (std::find(known_outputs.begin(), known_outputs.end(), name) != known_outputs.end())
        continue;
      std::string message =
          "analysis.outputs: unknown output '" + name + "' (known: o, delta, dq, dk, dv)";
      if (auto guess = config::did_you_mean(name, known_outputs))
        message += "; did you mean '" + *guess + "'?";
      const toml::node* list = analysis->node("outputs");
      analysis->fail(list->is_array() ? list->as_array()->get(i) : list, message);
    }
    if (!spec.analysis.baseline.empty()) {
      std::vector<std::string> names;
      for (const auto& impl : spec.implementations) names.push_back(impl.name);
      if (std::find(names.begin(), names.end(), spec.analysis.baseline) == names.end()) {
        std::string message =
            "analysis.baseline '" + spec.analysis.baseline + "' is not an implementation";
        if (auto guess = config::did_you_mean(spec.analysis.baseline, names)) {
          message += "; did you mean '" + *guess + "'?";
        }
        analysis->fail_at("baseline", message);
      }
    }
  }
  record_file_digests(spec);
  return spec;
}

std::string Case::label() const {
  const auto& impl = params["implementation"];
  const auto& in = params["input"];
  std::string text = impl["name"].get<std::string>();
  if (impl.contains("preset"))
    text +=
        " (" + impl["preset"].get<std::string>() + " " + impl["format"].get<std::string>() + ")";
  if (impl.contains("numerics")) text += " (" + impl["numerics"].get<std::string>() + ")";
  text += " on " + in["name"].get<std::string>();
  if (in.contains("shape")) {
    const auto& s = in["shape"];
    text += " N=" + std::to_string(s[2].get<int64_t>()) +
            " seed=" + std::to_string(in["seed"].get<uint64_t>());
  }
  if (!impl["tile"].get<std::string>().empty()) text += " tile=" + impl["tile"].get<std::string>();
  for (const auto& m : impl["mitigations"]) text += " +" + m.get<std::string>();
  for (const auto& s : impl["set"]) text += " " + s.get<std::string>();
  return text;
}

std::string folder_name_problem(const std::string& name) {
  if (name.empty() || name.size() > 100) return "a folder name needs 1 to 100 characters";
  for (const char c : name) {
    const bool allowed = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                         (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '+' || c == '-';
    if (!allowed) {
      return "'" + limits::excerpt(std::string(1, c)) +
             "' cannot be in the name of the default output folder (allowed: A-Z a-z 0-9 . _ + -)";
    }
  }
  if (name.front() == '.' || name.front() == '-')
    return "the default output folder's name cannot start with '.' or '-'";
  return "";
}

std::vector<Case> expand_cases(const ExperimentSpec& spec, const CaseBackend& backend) {
  // Counted in unsigned 64 bits with every product and sum checked: a sweep too large to count
  // is refused like any other above max_cases, before anything is expanded.
  std::optional<uint64_t> total = 0;
  std::string factors;
  for (const auto& study : spec.studies) {
    std::vector<uint64_t> sizes = {study.inputs.size(), study.implementations.size()};
    for (const auto& axis : study.sweep) sizes.push_back(axis.values.size());
    std::optional<uint64_t> combinations = 1;
    for (const uint64_t n : sizes) {
      if (combinations) combinations = limits::checked_mul(*combinations, n);
    }
    if (total && combinations) total = limits::checked_add(*total, *combinations);
    if (!combinations) total.reset();
    factors +=
        (factors.empty() ? "" : " + ") + limits::product_text(std::span<const uint64_t>(sizes));
  }
  if (!total || *total > static_cast<uint64_t>(spec.max_cases)) {
    throw ConfigError(spec.file + ": the sweep gives " +
                      (total ? std::to_string(*total)
                             : "2^64 or more (" + factors + " does not fit in 64 bits)") +
                      " cases, more than max_cases = " + std::to_string(spec.max_cases) +
                      " (raise max_cases in the file or pass --max-cases)");
  }
  const auto find_input = [&](const std::string& name) -> const InputSpec& {
    return *std::find_if(spec.inputs.begin(), spec.inputs.end(),
                         [&](const auto& i) { return i.name == name; });
  };
  const auto find_impl = [&](const std::string& name) -> const ImplementationSpec& {
    return *std::find_if(spec.implementations.begin(), spec.implementations.end(),
                         [&](const auto& i) { return i.name == name; });
  };
  std::vector<Case> cases;
  std::set<std::string> seen;
  for (const auto& study : spec.studies) {
    size_t combinations = 1;
    for (const auto& axis : study.sweep) combinations *= axis.values.size();
    nlohmann::json analysis = spec.analysis.to_json();
    if (study.attribute) analysis["attribute"] = *study.attribute;
    for (const auto& input_name : study.inputs) {
      for (const auto& impl_name : study.implementations) {
        for (size_t c = 0; c < combinations; ++c) {
          InputSpec in = find_input(input_name);
          ImplementationSpec impl = find_impl(impl_name);
          size_t rest = c;
          // Mixed-radix counter over the axes, the last one varying fastest.
          for (auto axis = study.sweep.rbegin(); axis != study.sweep.rend(); ++axis) {
            const nlohmann::json& value = axis->values[rest % axis->values.size()];
            rest /= axis->values.size();
            const std::string& k = axis->key;
            const bool is_plugin = !impl.plugin.empty();
            if (k == "format" && !is_plugin)
              impl.format = value;
            else if (k == "preset" && !is_plugin)
              impl.preset = value, impl.numerics.clear();
            else if (k == "numerics" && !is_plugin)
              impl.numerics = value, impl.preset.clear();
            else if (k == "tile" && !is_plugin)
              impl.tile = value;
            else if (k == "causal")
              impl.causal = value;
            else if (k == "set" && !is_plugin)
              impl.set = value.get<std::vector<std::string>>();
            else if (k == "mitigations")
              impl.mitigations = value.get<std::vector<std::string>>();
            else if (!in.shape.empty() && k == "seq_len")
              in.shape[2] = value;
            else if (!in.shape.empty() && k == "head_dim")
              in.shape[3] = value;
            else if (!in.shape.empty() && k == "draws")
              in.shape[0] = value;
            else if (!in.shape.empty() && k == "seed")
              in.seed = value;
          }
          try {
            backend.check_input(in);
            backend.check_implementation(impl);
          } catch (const FieldError& e) {
            std::string where = spec.file;
            for (const auto& axis : study.sweep) {
              if (e.field.rfind(axis.key, 0) == 0) where = axis.location;
            }
            throw ConfigError(where + ": case '" + impl.name + "' on '" + in.name + "': '" +
                              e.field + "': " + e.what());
          }
          Case k;
          k.params = {
              {"input", in.to_json()}, {"implementation", impl.to_json()}, {"analysis", analysis}};
          if (!study.name.empty()) k.params["study"] = study.name;
          k.id = hash_hex(k.params.dump());
          if (!seen.insert(k.id).second) continue;  // a plugin ignores implementation axes
          k.index = cases.size();
          cases.push_back(std::move(k));
        }
      }
    }
  }
  return cases;
}

}  // namespace simprec::experiments
