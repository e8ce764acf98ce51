// A numerics spec: one line of text that says everything an attention configuration computes,
//
//   PRESET[,format=F][,SITE=FORMAT:ROUNDING[:ACCUMULATION]...][,OPTION=VALUE...][,MITIGATION...]
//
// e.g. "torch-math,p_cast=bf16:rne" or "cuda-fa2,format=fp16,tile=128x64,beta-rowmax:2", or the
// path of a TOML file (ending in .toml) holding a kernel model that builds on a preset (model.hpp:
// the same language as lib/attention/models/, with F, A and [if_format] tables):
//
//   preset = "torch-math"
//   format = "bf16"              # optional
//   mitigations = ["sr-p:8"]     # optional
//   [set]                        # optional: sites and structural options
//   p_cast = "F:rne"
//
// Sites and options are those of options.hpp and site.hpp; items may come in any order, and
// assignments are applied before mitigations. `simprec attention --numerics`, experiment files
// (`numerics = "..."`), `simprec validate --model` and a plugin kernel's declared emulation model
// all accept it, and every result carries the canonical form, from which it can be re-run.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lib/attention/config.hpp"
#include "lib/attention/model.hpp"

namespace simprec::attention {

struct NumericsSpec {
  std::string preset;
  std::string format;                    // empty: the caller's default
  std::vector<std::string> assignments;  // SITE=... and OPTION=..., in order
  std::vector<std::string> mitigations;  // in order
  // A numerics file's model, applied at the format before `assignments` (its own assignments
  // recorded as overrides of `preset`, its base); null for a spec given as text.
  std::shared_ptr<const KernelModel> file_model;
};

// Parses the text form, or reads the TOML file the text names. Throws std::invalid_argument
// naming the offending item (and FILE:LINE for files) and what was expected.
NumericsSpec parse_numerics_spec(std::string_view text);

// The configuration: the preset at the spec's format (or `default_format`), the assignments,
// then the mitigations. Throws std::invalid_argument as the parts do.
AttentionConfig make_config(const NumericsSpec& spec, const Format& default_format);
AttentionConfig parse_numerics(std::string_view text, const Format& default_format);

// The canonical text of a configuration built from a preset with apply_override and
// apply_mitigation: the preset, its format, each site and option that differs from the preset
// (sites and options in table order), then the mitigations with their arguments written out.
// Throws std::logic_error when the configuration's numerics were changed by other means (the
// text would not reproduce them).
std::string canonical_numerics(const AttentionConfig& config);

}  // namespace simprec::attention
