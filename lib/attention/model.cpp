#include "lib/attention/model.hpp"

#include <algorithm>
#include <stdexcept>

#include "emulation/did_you_mean.hpp"
#include "lib/attention/options.hpp"
#include "lib/config/toml_reader.hpp"
#include "lib/limits/strict_parse.hpp"

namespace simprec::attention {
namespace {

// Models may build on models this deep (a chain, not a cycle).
constexpr int kMaxModelDepth = 8;

// A value as its text: strings as they are, numbers as written.
std::string value_text(const config::TableReader& t, const std::string& key) {
  const toml::node* n = t.node(key);
  if (const auto* i = n->as_integer()) return std::to_string(i->get());
  if (const auto* d = n->as_floating_point()) return limits::shortest_text(d->get());
  if (const auto* s = n->as_string()) return s->get();
  t.fail(n, "'" + t.key_path(key) + "' must be a string or a number, not " + config::type_name(*n));
}

// The order of application: site groups (all before products), single sites in the sites'
// order, then slots and parameters in the options table's order.
int rank_of(const std::string& key) {
  if (key == "all") return 0;
  if (key == "products") return 1;
  for (int i = 0; i < kSiteCount; ++i) {
    if (site_name(static_cast<Site>(i)) == key) return 2 + i;
  }
  const auto options = structural_options();
  for (size_t i = 0; i < options.size(); ++i) {
    if (options[i].key == key) return 2 + kSiteCount + static_cast<int>(i);
  }
  return -1;
}

std::vector<ModelAssignment> read_assignments(const config::TableReader& t) {
  std::vector<std::pair<int, ModelAssignment>> ranked;
  for (const std::string& key : t.keys()) {
    const int rank = rank_of(key);
    if (rank < 0) {
      std::vector<std::string> known;
      for (int i = 0; i < kSiteCount; ++i) known.emplace_back(site_name(static_cast<Site>(i)));
      for (const StructuralOption& o : structural_options()) known.emplace_back(o.key);
      const auto close = config::did_you_mean(key, known);
      t.fail_at(key, "unknown site or option '" + limits::excerpt(key) + "'" +
                         (close ? " (did you mean '" + *close + "'?)" : "") +
                         "; `simprec numerics --list` lists them");
    }
    ranked.push_back({rank, {key, value_text(t, key), config::location(t.file(), *t.node(key))}});
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<ModelAssignment> out;
  for (auto& [rank, a] : ranked) out.push_back(std::move(a));
  return out;
}

Format wider(const Format& a, const Format& b) {
  return a.precision() >= b.precision() ? a : b;
}

// A format word of a model: F, A (wider(F,fp32)), wider(F,X), or a format's own name.
std::string resolve_format_word(const std::string& word, const Format& f) {
  if (word == "F") return f.name();
  if (word == "A") return wider(f, formats::fp32).name();
  const std::string prefix = "wider(F,";
  if (word.rfind(prefix, 0) == 0 && word.back() == ')') {
    const std::string other = word.substr(prefix.size(), word.size() - prefix.size() - 1);
    return wider(f, parse_format(other)).name();
  }
  return word;
}

// KEY=VALUE with a site value's format word resolved for F.
std::string resolved(const ModelAssignment& a, const Format& f) {
  const bool site = !site_group(a.key).empty() || rank_of(a.key) < 2 + kSiteCount;
  if (!site) return a.key + "=" + a.value;
  const size_t colon = a.value.find(':');
  const std::string word = a.value.substr(0, colon);
  const std::string rest = colon == std::string::npos ? "" : a.value.substr(colon);
  return a.key + "=" + resolve_format_word(word, f) + rest;
}

void apply(AttentionConfig& c, const std::vector<ModelAssignment>& assignments, const Format& f,
           bool record) {
  for (const ModelAssignment& a : assignments) {
    const std::string text = resolved(a, f);
    try {
      if (record) {
        apply_override(c, text);
      } else {
        apply_assignment(c, text);
      }
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(a.where + ": " + e.what());
    }
  }
}

AttentionConfig instantiate(const KernelModel& m, const Format& f, bool record, int depth) {
  if (!m.only_formats.empty() &&
      std::find(m.only_formats.begin(), m.only_formats.end(), f.name()) == m.only_formats.end()) {
    std::string allowed;
    for (const auto& name : m.only_formats) allowed += (allowed.empty() ? "" : " or ") + name;
    throw std::invalid_argument(m.name + ": " +
                                (m.only_formats_why.empty() ? "" : m.only_formats_why + ": ") +
                                "format must be " + allowed + ", not " + f.name());
  }
  AttentionConfig c;
  if (!m.base.empty()) {
    const KernelModel* base = find_builtin_model(m.base);
    if (!base) {
      std::string known;
      std::vector<std::string> names;
      for (const KernelModel& b : builtin_models()) {
        known += (known.empty() ? "" : ", ") + b.name;
        names.push_back(b.name);
      }
      throw std::invalid_argument(m.path + ": unknown preset '" + limits::excerpt(m.base) + "'" +
                                  did_you_mean(m.base, names) + " (known: " + known + ")");
    }
    if (depth >= kMaxModelDepth) {
      throw std::invalid_argument(m.path + ": models build on each other more than " +
                                  std::to_string(kMaxModelDepth) + " deep (a cycle?)");
    }
    c = instantiate(*base, f, false, depth + 1);
  }
  if (!record) c.preset = m.name;
  c.low_precision = f;
  apply(c, m.assignments, f, record);
  for (const auto& [format, assignments] : m.format_assignments) {
    if (parse_format(format) == f) apply(c, assignments, f, record);
  }
  return c;
}

}  // namespace

namespace {

KernelModel read_model(const toml::table& root, const std::string& path, const std::string& name) {
  try {
    const config::TableReader t(root, path, "");
    t.allow_only({"description", "preset", "only_formats", "only_formats_why", "set", "if_format",
                  "format", "mitigations"});
    KernelModel m;
    m.name = name;
    m.path = path;
    m.description = t.string("description").value_or("");
    m.base = t.string("preset").value_or("");
    m.only_formats = t.strings("only_formats").value_or(std::vector<std::string>{});
    m.only_formats_why = t.string("only_formats_why").value_or("");
    m.format = t.string("format").value_or("");
    m.mitigations = t.strings("mitigations").value_or(std::vector<std::string>{});
    if (const auto set = t.table("set")) m.assignments = read_assignments(*set);
    if (const auto formats = t.table("if_format")) {
      for (const std::string& format : formats->keys()) {
        const auto table = formats->table(format);
        if (!table) formats->fail_at(format, "'" + formats->key_path(format) + "' must be a table");
        try {
          (void)parse_format(format);
        } catch (const std::invalid_argument& e) {
          formats->fail_at(format, e.what());
        }
        m.format_assignments.emplace_back(format, read_assignments(*table));
      }
    }
    return m;
  } catch (const config::ConfigError& e) {
    throw std::invalid_argument(e.what());
  }
}

}  // namespace

KernelModel parse_model(std::string_view text, const std::string& path, const std::string& name) {
  try {
    return read_model(config::parse_toml_text(text, path), path, name);
  } catch (const config::ConfigError& e) {
    throw std::invalid_argument(e.what());
  }
}

KernelModel read_model_file(const std::string& path) {
  try {
    return read_model(config::parse_toml_file(path), path, path);
  } catch (const config::ConfigError& e) {
    throw std::invalid_argument(e.what());
  }
}

std::span<const KernelModel> builtin_models() {
  static const std::vector<KernelModel> models = [] {
    std::vector<KernelModel> out;
    for (const ModelFile& file : model_files()) {
      out.push_back(parse_model(file.text, std::string(file.path), std::string(file.name)));
    }
    return out;
  }();
  return models;
}

const KernelModel* find_builtin_model(std::string_view name) {
  for (const KernelModel& m : builtin_models()) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

AttentionConfig instantiate_model(const KernelModel& m, const Format& f, bool record) {
  if (const std::string problem = f.validate(); !problem.empty()) {
    throw std::invalid_argument("preset format: " + problem);
  }
  require_sign(f, "attention's values");
  return instantiate(m, f, record, 0);
}

}  // namespace simprec::attention
