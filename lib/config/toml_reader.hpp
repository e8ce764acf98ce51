// Reading TOML configuration with errors that point at the file, line and column: unknown keys
// (with a did-you-mean), wrong types and impossible values are reported where they stand.
#pragma once

#define TOML_EXCEPTIONS 1
#include <toml++/toml.h>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace simprec::config {

// "FILE:LINE:COLUMN: MESSAGE".
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The closest of `candidates` to `word`, if it is close enough to be a likely typo.
std::optional<std::string> did_you_mean(std::string_view word,
                                        const std::vector<std::string>& candidates);

// Parses a TOML file read through limits::InputFile (a regular file of at most
// limits::kMaxTomlBytes); that refusal, and syntax errors with their position, are ConfigError.
toml::table parse_toml_file(const std::string& path);
// Parses TOML text that came from `path` (a file embedded in the program, say).
toml::table parse_toml_text(std::string_view text, const std::string& path);

// One table of a configuration file, with the dotted path that leads to it for messages.
class TableReader {
 public:
  TableReader(const toml::table& table, std::string file, std::string path);

  // Every key not in `allowed` is an error, with a suggestion where one is close.
  void allow_only(std::initializer_list<std::string_view> allowed) const;
  bool has(std::string_view key) const { return table_.contains(key); }
  std::vector<std::string> keys() const;

  std::optional<std::string> string(std::string_view key) const;
  std::optional<int64_t> integer(std::string_view key, int64_t min, int64_t max) const;
  std::optional<double> number(std::string_view key) const;
  std::optional<bool> boolean(std::string_view key) const;
  std::optional<std::vector<std::string>> strings(std::string_view key) const;
  std::optional<std::vector<int64_t>> integers(std::string_view key, int64_t min,
                                               int64_t max) const;
  // A nested table (error if the key holds something else).
  std::optional<TableReader> table(std::string_view key) const;

  const toml::node* node(std::string_view key) const { return table_.get(key); }
  const toml::table& raw() const { return table_; }
  const std::string& file() const { return file_; }
  std::string key_path(std::string_view key) const;

  // Throws ConfigError located at `where` (or at the table when null).
  [[noreturn]] void fail(const toml::node* where, const std::string& message) const;
  [[noreturn]] void fail_at(std::string_view key, const std::string& message) const {
    fail(node(key), message);
  }

 private:
  const toml::table& table_;
  std::string file_;
  std::string path_;
};

// "FILE:LINE:COLUMN" of a node.
std::string location(const std::string& file, const toml::node& node);
// A node's TOML type in words ("string", "integer", "array", ...).
std::string type_name(const toml::node& node);

}  // namespace simprec::config
