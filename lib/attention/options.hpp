// The one table of attention's structural options and the one table of its mitigations. An
// option is a slot (its value names one of the registry's strategies, strategy.hpp) or a
// parameter (a number, a tile, a format). Every reader of an attention configuration goes through
// these rows: `--set KEY=VALUE` and the numerics spec (numerics_spec.hpp), experiment files,
// `validate` (a kernel's parameters and attributes), to_json, reports, the structure checks, and
// the reference tables printed by `simprec numerics --list` (docs/attention.md carries the slot
// and parameter tables; a test keeps them the same).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "lib/attention/config.hpp"

namespace simprec::attention {

// A structural choice of the algorithm: not a rounding site, not a mitigation.
struct StructuralOption {
  std::string_view key;  // in `--set KEY=VALUE`, numerics specs and the JSON
  std::string_view doc;  // one line
  // A slot's: its description and the strategy a configuration holds there (nullptr for a
  // parameter).
  const SlotInfo* slot = nullptr;
  std::function<const Strategy*(const AttentionConfig&)> strategy;
  // The accepted values (a slot's strategies; a parameter's fixed choices); empty for free-form
  // values (described by `value_syntax`).
  std::vector<std::string_view> choices;
  std::string_view value_syntax;  // for free-form values, e.g. "BRxBC"
  // Shown in the JSON even when it has its default value (the keys older results always had).
  bool always_in_json = false;
  std::function<void(AttentionConfig&, std::string_view)> set;  // throws std::invalid_argument
  std::function<std::string(const AttentionConfig&)> get;
};

std::span<const StructuralOption> structural_options();
// nullptr when `key` names no structural option.
const StructuralOption* find_structural_option(std::string_view key);
// The value of a default-constructed configuration (the fa2 model).
std::string default_value(const StructuralOption& option);

// A value passed to a plugin kernel's parameter.
struct KernelParameter {
  std::string name;
  std::variant<bool, int64_t, double> value;
};

// A parameter of a mitigation, written after its name: NAME:ARG1:ARG2.
struct MitigationArgument {
  std::string_view name;
  std::string_view doc;
  // The text used when the argument is absent; empty: the argument is optional and has no
  // default text (its meaning when absent is in doc).
  std::string_view default_text;
};

struct Mitigation {
  std::string_view name;
  std::string_view doc;
  std::vector<MitigationArgument> arguments;
  // Applies the mitigation with its arguments (defaults filled in); throws
  // std::invalid_argument naming the offending argument and what was expected.
  std::function<void(AttentionConfig&, std::span<const std::string>)> apply;
  // The kernel parameters that ask a plugin kernel for the same mitigation (empty function: no
  // kernel parameter expresses it).
  std::function<std::vector<KernelParameter>(std::span<const std::string>)> kernel_parameters;
};

std::span<const Mitigation> mitigations();
// "beta-rowmax[:BETA][:EPS], sr-p[:BITS], ...": every mitigation with its arguments.
std::string mitigation_syntax();
const Mitigation* find_mitigation(std::string_view name);
// "NAME[:ARG...]" with every defaulted argument written out and numbers in their shortest
// round-trip form: the canonical text of one mitigation. Throws std::invalid_argument.
std::string canonical_mitigation(std::string_view text);
// The kernel parameters of one mitigation text; throws std::invalid_argument when no kernel
// parameter expresses it.
std::vector<KernelParameter> mitigation_kernel_parameters(std::string_view text);

// The attention parameters a plugin kernel may declare and `validate` understands, with the
// mitigation each maps back to: causal, scale, beta_rowmax, beta, eps, sr_p_bits, seed.
std::span<const std::string_view> kernel_parameter_names();

// A finite number, the whole text (limits::parse_finite_double); throws std::invalid_argument
// naming `what`.
double parse_finite_number(std::string_view text, std::string_view what);

// Checks every declared requirement of the configuration's strategies (strategy.hpp,
// Requirement), that each parameter with fixed choices holds one of them (slots of flash scope
// and their requirements are skipped for standard attention), and that each tensor-core product
// site's operands are values of its model's input format; and what every run refuses whatever
// its shape: tile=auto without a dispatch that fills it, tiled random bits that do not divide 32,
// and the strategies' own checks (check_run_requirements) of a tile no shape changes (tile_rule
// fixed, no sram). Throws std::invalid_argument naming the strategy or site, what it needs and
// what the configuration has. `simprec numerics`, `attention` and `validate` all read a spec
// through it (make_config), so that they accept and refuse the same specs.
void check_requirements(const AttentionConfig& config);
// The strategies' own checks of a configuration whose tiles are concrete (Strategy::check).
void check_run_requirements(const AttentionConfig& config);

// The Markdown reference tables: the slots and the parameters (docs/attention.md holds both), the
// strategies of every slot with what each computes, needs and draws (`simprec numerics --list`),
// and the mitigations (docs/attention.md).
std::string slots_markdown();
std::string parameters_markdown();
std::string strategies_markdown();
std::string mitigations_markdown();

}  // namespace simprec::attention
