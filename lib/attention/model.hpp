// Kernel models: every preset and every real kernel simprec reproduces is one TOML file in
// lib/attention/models/ (NAME.toml), written in the numerics-spec language and commented step by
// step with the kernel's source. The build embeds each file (cmake/attention_registry.cmake), so a
// new model is its file and nothing else. A model file:
//
//   description = "one paragraph"        # what `simprec numerics --list` prints
//   preset = "fa2"                       # optional: the model it builds on
//   only_formats = ["fp16"]              # optional: the formats it models ...
//   only_formats_why = "..."             # ... and why the others are refused
//   [set]                                # slots, parameters and sites (options.hpp, site.hpp)
//   exp_impl = "exp2"
//   all = "A"                            # a site group; F is the model's format parameter, A
//   p_cast = "F"                         #   fp32 or F where F is wider, wider(F,X) the wider of
//                                        #   F and X
//   [if_format.bf16]                     # applied after [set] when F is bf16
//   products = "A:rne:tc:sm90-mma-bf16"
//
// Within a table the site groups (all, then products) apply first, then single sites, then the
// slots and parameters in the options table's order. A numerics file a user names in a spec
// (`--numerics my_kernel.toml`) is the same, with `preset` required and, optionally, `format` and
// `mitigations`.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lib/attention/config.hpp"

namespace simprec::attention {

// A model file embedded by the build: its name (the file's stem), its path in the source tree and
// its text.
struct ModelFile {
  std::string_view name, path, text;
};
std::span<const ModelFile> model_files();

// One assignment of a model: KEY=VALUE as written, with where it stands for messages.
struct ModelAssignment {
  std::string key, value;
  std::string where;  // FILE:LINE:COLUMN
};

struct KernelModel {
  std::string name;  // the preset name; for a user's file, its path
  std::string path;
  std::string description;
  std::string base;  // the model it builds on; empty: the default configuration
  std::vector<std::string> only_formats;
  std::string only_formats_why;
  std::vector<ModelAssignment> assignments;  // [set], in application order
  // [if_format.F] tables, each in application order.
  std::vector<std::pair<std::string, std::vector<ModelAssignment>>> format_assignments;
  // A user's numerics file only: its format and mitigations.
  std::string format;
  std::vector<std::string> mitigations;
};

// Parses a model's TOML text; throws std::invalid_argument with FILE:LINE:COLUMN and what was
// expected.
KernelModel parse_model(std::string_view text, const std::string& path, const std::string& name);
// A user's numerics file (named by its path).
KernelModel read_model_file(const std::string& path);

// The built-in models, in name order.
std::span<const KernelModel> builtin_models();
const KernelModel* find_builtin_model(std::string_view name);

// Model m at format F: its base at F, then its assignments with F, A and wider(F,X) resolved,
// then those of F's [if_format] table. `record` keeps each resolved assignment in the
// configuration's overrides (for a user's file, whose canonical spec is its base plus them).
// Throws std::invalid_argument naming the model, the place and the problem.
AttentionConfig instantiate_model(const KernelModel& m, const Format& f, bool record = false);

}  // namespace simprec::attention
