// An experiment file (TOML), read and validated as a whole before anything runs.
//
//   name = "flash_bias"               # optional, default: the file's stem
//   description = "..."
//   max_cases = 2000                  # refuse sweeps larger than this (default 10000)
//   [inputs.NAME]                     # generated: generator, shape = [B, H, N, d], seed, backward
//   [inputs.NAME]                     # or files: q, k, v, do (paths relative to the file),
//   input_format [implementations.NAME]            # preset, format, tile, causal, set, mitigations
//   [implementations.NAME]            # or plugin, kernel (compared like any implementation)
//   [sweep]                           # axes; their product times inputs times implementations
//   [analysis]                        # backward, attribute, attribute_sites, baseline
//   [studies.NAME]                    # optional: several sub-sweeps, each over chosen inputs and
//                                     # implementations with its own [studies.NAME.sweep]
//
// docs/experiments.md describes every key.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lib/limits/memory_bound.hpp"

namespace simprec::experiments {

struct InputSpec {
  std::string name;
  std::string generator;       // normal, peaky, repeated-max, low-rank, sinks (empty: files)
  std::vector<int64_t> shape;  // B, H, N, d
  uint64_t seed = 0;
  bool backward = true;                   // also draw dO
  std::map<std::string, double> options;  // generator parameters
  int64_t query_rows = 0;                 // > 0: emulate at most this many sampled query rows
  std::string q, k, v, d_out;             // files, absolute paths
  std::string input_format;               // how uint16/uint8 files are read (bf16, fp16, ...)
  nlohmann::json to_json() const;
};

struct ImplementationSpec {
  std::string name;
  std::string preset;    // an emulation preset
  std::string numerics;  // or a numerics spec (lib/attention/numerics_spec.hpp)
  std::string format = "bf16";
  std::string tile;  // "BRxBC"; empty: the preset's default
  bool causal = false;
  // Masking (lib/attention/masking.hpp): "top-left" or "bottom-right"; the window's left and
  // right sizes (-1: unbounded; empty: none); the soft-cap (0: none); ALiBi slopes ("default":
  // 2^(-8(h+1)/H); empty: none).
  std::string causal_align = "top-left";
  std::vector<int64_t> window;
  double softcap = 0.0;
  std::vector<double> alibi;
  bool alibi_default = false;
  std::string score_mod;  // expressions (lib/attention/score_mod.hpp) without tensors
  std::string mask_mod;
  std::vector<std::string> set;
  std::vector<std::string> mitigations;
  std::string plugin, kernel;  // a plugin implementation instead of a preset
  nlohmann::json to_json() const;
};

struct SweepAxis {
  std::string key;
  std::vector<nlohmann::json> values;
  std::string location;  // FILE:LINE:COLUMN, for errors found while expanding the cases
};

struct AnalysisSpec {
  bool backward = true;                      // gradients too, when inputs have dO
  bool attribute = false;                    // rank the sites by the bias they explain
  std::vector<std::string> attribute_sites;  // empty: every site the preset rounds at
  std::string baseline;                      // implementation for flash-vs-baseline ratios
  std::vector<std::string> outputs = {"o", "delta", "dq", "dk", "dv"};  // which to measure
  nlohmann::json to_json() const;
};

// One product of cases: chosen inputs times chosen implementations times the sweep axes.
struct Study {
  std::string name;                 // empty for the file's top-level sweep
  std::vector<std::string> inputs;  // names; all when the study does not choose
  std::vector<std::string> implementations;
  std::vector<SweepAxis> sweep;
  std::optional<bool> attribute;  // overrides analysis.attribute for this study
  nlohmann::json to_json() const;
};

struct ExperimentSpec {
  std::string name, description;
  std::string file;  // absolute path of the TOML file
  int64_t max_cases = 10000;
  std::vector<InputSpec> inputs;
  std::vector<ImplementationSpec> implementations;
  std::vector<Study> studies;  // [studies.*], or one study from the top-level [sweep]
  AnalysisSpec analysis;
  // Every file the cases read, by absolute path, with its contents' digest
  // (limits::file_digest): part of what defines the results.
  std::map<std::string, std::string> files;
  nlohmann::json to_json() const;   // canonical: what defines the results
  std::string fingerprint() const;  // hash of to_json()
};

// A problem with one field, raised by validation hooks; the reader turns it into
// FILE:LINE:COLUMN: message, pointing at the field.
struct FieldError : std::invalid_argument {
  FieldError(std::string field_name, const std::string& message)
      : std::invalid_argument(message), field(std::move(field_name)) {}
  std::string field;  // key within the table; "set" with index for arrays: "set[1]"
};

// What can run cases. The reader asks it to check each input and implementation (names of
// presets, formats, sites, mitigations, generators, plugins) so that every error is reported
// before anything runs.
class CaseBackend {
 public:
  virtual ~CaseBackend() = default;
  virtual void check_input(const InputSpec& input) const = 0;                   // FieldError
  virtual void check_implementation(const ImplementationSpec& impl) const = 0;  // FieldError
  // Runs one case (its parameters as made by expand_cases) and returns its results.
  // `threads` is how many threads the case may use; results must not depend on it.
  virtual nlohmann::json run_case(const nlohmann::json& params, unsigned threads) const = 0;
  // An estimate of the memory run_case needs on one thread (the memory bound); zero when the
  // backend does not estimate. Throws std::invalid_argument when sizes overflow.
  virtual limits::MemoryEstimate estimate_memory(const nlohmann::json& params) const {
    (void)params;
    return {};
  }
};

// Why `name` cannot be the default output folder (empty when it can): 1 to 100 characters from
// A-Z a-z 0-9 . _ + -, not starting with '.' or '-' (so no path separator, no "..", no hidden
// or option-like folder).
std::string folder_name_problem(const std::string& name);

// Reads and validates; throws config::ConfigError with FILE:LINE:COLUMN.
ExperimentSpec load_experiment(const std::string& path, const CaseBackend& backend);

struct Case {
  size_t index = 0;
  std::string id;             // hash of params
  nlohmann::json params;      // {"input": {...}, "implementation": {...}, "analysis": {...}}
  std::string label() const;  // short human-readable description
};

// The product of the sweep axes, inputs and implementations, in a fixed order. Throws
// config::ConfigError when there are more than max_cases (the count is computed with overflow
// checks and compared before anything is expanded).
std::vector<Case> expand_cases(const ExperimentSpec& spec, const CaseBackend& backend);

// 64-bit FNV-1a of a string, as 16 hex digits.
std::string hash_hex(const std::string& text);

}  // namespace simprec::experiments
