#include "lib/config/toml_reader.hpp"

#include <algorithm>

#include "emulation/did_you_mean.hpp"
#include "lib/limits/input_file.hpp"

namespace simprec::config {

std::optional<std::string> did_you_mean(std::string_view word,
                                        const std::vector<std::string>& candidates) {
  const std::vector<std::string> close = closest_names(word, candidates);
  if (close.empty()) return std::nullopt;
  return close.front();
}

std::string location(const std::string& file, const toml::node& node) {
  const auto& begin = node.source().begin;
  return file + ":" + std::to_string(begin.line) + ":" + std::to_string(begin.column);
}

std::string type_name(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::table:
      return "table";
    case toml::node_type::array:
      return "array";
    case toml::node_type::string:
      return "string";
    case toml::node_type::integer:
      return "integer";
    case toml::node_type::floating_point:
      return "float";
    case toml::node_type::boolean:
      return "boolean";
    case toml::node_type::date:
      return "date";
    case toml::node_type::time:
      return "time";
    case toml::node_type::date_time:
      return "date-time";
    default:
      return "nothing";
  }
}

namespace {

ConfigError parse_failure(const std::string& path, const toml::parse_error& e) {
  const auto& begin = e.source().begin;
  if (begin.line == 0) return ConfigError(path + ": " + std::string(e.description()));
  return ConfigError(path + ":" + std::to_string(begin.line) + ":" + std::to_string(begin.column) +
                     ": " + std::string(e.description()));
}

}  // namespace

toml::table parse_toml_file(const std::string& path) {
  std::string text;
  try {
    text = limits::read_text_file(path, limits::kMaxTomlBytes, "a TOML file");
  } catch (const std::runtime_error& e) {
    throw ConfigError(e.what());
  }
  return parse_toml_text(text, path);
}

toml::table parse_toml_text(std::string_view text, const std::string& path) {
  try {
    return toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    throw parse_failure(path, e);
  }
}

TableReader::TableReader(const toml::table& table, std::string file, std::string path)
    : table_(table), file_(std::move(file)), path_(std::move(path)) {}

std::string TableReader::key_path(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

void TableReader::fail(const toml::node* where, const std::string& message) const {
  const toml::node& at = where ? *where : static_cast<const toml::node&>(table_);
  if (at.source().begin.line == 0) throw ConfigError(file_ + ": " + message);
  throw ConfigError(location(file_, at) + ": " + message);
}

std::vector<std::string> TableReader::keys() const {
  std::vector<std::string> out;
  for (const auto& [k, _] : table_) out.emplace_back(k.str());
  return out;
}

void TableReader::allow_only(std::initializer_list<std::string_view> allowed) const {
  std::vector<std::string> names(allowed.begin(), allowed.end());
  for (const auto& [k, v] : table_) {
    if (std::find(names.begin(), names.end(), k.str()) != names.end()) continue;
    std::string message = "unknown key '" + key_path(k.str()) + "'";
    if (auto guess = did_you_mean(k.str(), names)) message += "; did you mean '" + *guess + "'?";
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    message += " (allowed here: " + list + ")";
    // Keys carry their own position in toml++ 3; fall back to the value's.
    const auto& begin = k.source().begin;
    if (begin.line != 0) {
      throw ConfigError(file_ + ":" + std::to_string(begin.line) + ":" +
                        std::to_string(begin.column) + ": " + message);
    }
    fail(&v, message);
  }
}

std::optional<std::string> TableReader::string(std::string_view key) const {
  const toml::node* n = node(key);
  if (!n) return std::nullopt;
  if (!n->is_string()) fail(n, "'" + key_path(key) + "' must be a string, not " + type_name(*n));
  return n->value<std::string>();
}

std::optional<int64_t> TableReader::integer(std::string_view key, int64_t min, int64_t max) const {
  const toml::node* n = node(key);
  if (!n) return std::nullopt;
  if (!n->is_integer()) fail(n, "'" + key_path(key) + "' must be an integer, not " + type_name(*n));
  const int64_t v = *n->value<int64_t>();
  if (v < min || v > max) {
    fail(n, "'" + key_path(key) + "' = " + std::to_string(v) + " is out of range [" +
                std::to_string(min) + ", " + std::to_string(max) + "]");
  }
  return v;
}

std::optional<double> TableReader::number(std::string_view key) const {
  const toml::node* n = node(key);
  if (!n) return std::nullopt;
  if (!n->is_number()) fail(n, "'" + key_path(key) + "' must be a number, not " + type_name(*n));
  return n->value<double>();
}

std::optional<bool> TableReader::boolean(std::string_view key) const {
  const toml::node* n = node(key);
  if (!n) return std::nullopt;
  if (!n->is_boolean())
    fail(n, "'" + key_path(key) + "' must be true or false, not " + type_name(*n));
  return n->value<bool>();
}

std::optional<std::vector<std::string>> TableReader::strings(std::string_view key) const {
  const toml::node* n = node(key);
  if (!n) return std::nullopt;
  if (n->is_string()) return std::vector<std::string>{*n->value<std::string>()};
  const toml::array* a = n->as_array();
  if (!a)
    fail(n,
         "'" + key_path(key) + "' must be a string or an array of strings, not " + type_name(*n));
  std::vector<std::string> out;
  for (const auto& e : *a) {
    if (!e.is_string())
      fail(&e, "'" + key_path(key) + "' holds " + type_name(e) + ", expected strings");
    out.push_back(*e.value<std::string>());
  }
  return out;
}

std::optional<std::vector<int64_t>> TableReader::integers(std::string_view key, int64_t min,
                                                          int64_t max) const {
  const toml::node* n = node(key);
  if (!n) return std::nullopt;
  const toml::array* a = n->as_array();
  if (!a) fail(n, "'" + key_path(key) + "' must be an array of integers, not " + type_name(*n));
  std::vector<int64_t> out;
  for (const auto& e : *a) {
    if (!e.is_integer())
      fail(&e, "'" + key_path(key) + "' holds " + type_name(e) + ", expected integers");
    const int64_t v = *e.value<int64_t>();
    if (v < min || v > max) {
      fail(&e, "'" + key_path(key) + "' holds " + std::to_string(v) + ", out of range [" +
                   std::to_string(min) + ", " + std::to_string(max) + "]");
    }
    out.push_back(v);
  }
  return out;
}

std::optional<TableReader> TableReader::table(std::string_view key) const {
  const toml::node* n = node(key);
  if (!n) return std::nullopt;
  const toml::table* t = n->as_table();
  if (!t) fail(n, "'" + key_path(key) + "' must be a table, not " + type_name(*n));
  return TableReader(*t, file_, key_path(key));
}

}  // namespace simprec::config
