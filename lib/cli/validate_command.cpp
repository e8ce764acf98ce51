// simprec validate --plugin P --kernel K: run a plugin kernel (out of process by default) and
// the emulation it claims to match on the same inputs; report bitwise agreement, the ulp
// histogram and the mean signed difference. Exits 1 when a kernel claimed bit-exact is not.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "emulation/did_you_mean.hpp"
#include "emulation/excerpt.hpp"
#include "lib/cli/command.hpp"
#include "lib/cli/output_option.hpp"
#include "lib/cli/plugin_timeouts.hpp"
#include "lib/cli/seed_option.hpp"
#include "lib/inputs/generators.hpp"
#include "lib/limits/strict_parse.hpp"
#include "lib/npy/npy.hpp"
#include "lib/progress/terminal_progress.hpp"
#include "lib/validate/validation.hpp"
#include "lib/validate/validation_inputs.hpp"
#include "plugins/host/plugin.hpp"
#include "plugins/host/plugin_search.hpp"

namespace simprec::cli {
namespace {

struct ValidateOptions {
  std::string plugin;
  std::string kernel;
  bool in_process = false;
  double timeout_seconds = 60;
  uint64_t seed = 1;
  double low = -1, high = 1;
  std::vector<std::string> dimensions, formats, inputs, parameters, omitted;
  std::string model;
  bool require_bit_exact = false;
  bool locate = false;
  std::string generate;  // attention input generator
  std::string save;      // directory for every tensor as .npy
  std::string max_memory;
  bool quiet = false;
};

// "NAME=VALUE" pairs of a repeatable option.
std::map<std::string, std::string> pairs(const std::vector<std::string>& items,
                                         const char* option) {
  std::map<std::string, std::string> out;
  for (const auto& item : items) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw UsageError(std::string(option) + " expects NAME=VALUE, got '" + item + "'");
    }
    if (!out.emplace(item.substr(0, eq), item.substr(eq + 1)).second) {
      throw UsageError(std::string(option) + " gives '" + item.substr(0, eq) + "' twice");
    }
  }
  return out;
}

validate::InputChoices input_choices(const ValidateOptions& o) {
  validate::InputChoices choices;
  for (const auto& [symbol, text] : pairs(o.dimensions, "--dim")) {
    try {
      choices.dimensions[symbol] =
          limits::parse_integer(text, 1, int64_t{1} << 31, "--dim " + symbol);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
  }
  choices.formats = pairs(o.formats, "--format");
  for (const auto& [name, file] : pairs(o.inputs, "--input")) choices.files[name] = file;
  choices.parameters = pairs(o.parameters, "--param");
  choices.omitted.insert(o.omitted.begin(), o.omitted.end());
  choices.seed = o.seed;
  choices.low = o.low;
  choices.high = o.high;
  if (!(o.low < o.high)) throw UsageError("--low must be below --high");
  if (!o.generate.empty()) {
    const auto kinds = inputs::generator_kinds();
    if (std::find(kinds.begin(), kinds.end(), o.generate) == kinds.end()) {
      std::string known;
      for (const auto& k : kinds) known += (known.empty() ? "" : ", ") + k;
      throw UsageError("unknown --generate '" + excerpt(o.generate) + "'" +
                       did_you_mean(o.generate, kinds) + " (known: " + known + ")");
    }
  }
  choices.generator = o.generate;
  choices.max_memory = o.max_memory;
  choices.model = o.model;
  return choices;
}

// NAME.npy for every input, NAME.kernel.npy and NAME.emulated.npy for every output.
void save_tensors(const std::filesystem::path& dir, const validate::ValidationResult& r) {
  const limits::OutputFolder folder(dir);
  for (const auto& t : r.inputs) write_npy(folder, t.name + ".npy", validate::npy_of(t));
  for (const auto& t : r.kernel_outputs)
    write_npy(folder, t.name + ".kernel.npy", validate::npy_of(t));
  for (const auto& t : r.emulated_outputs)
    write_npy(folder, t.name + ".emulated.npy", validate::npy_of(t));
}

void run_validate(const ValidateOptions& o) {
  const plugins::OpenOptions open_options = plugin_open_options(o.in_process, o.timeout_seconds);
  const auto plugin = open_named_plugin(o.plugin, open_options);
  const plugins::KernelInfo& kernel = plugin->info().kernel(o.kernel);
  plugins::KernelRequest request;
  try {
    validate::check_can_validate(kernel, o.model, o.locate);
    request = validate::make_validation_request(kernel, input_choices(o));
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  validate::ValidationResult result;
  try {
    ProgressMeter meter;
    const ProgressScope counted(&meter);
    const TerminalProgress shown("simprec validate", meter, !o.quiet);
    result = validate::validate_kernel(
        *plugin, request, {o.model, o.require_bit_exact, open_options.timeout, o.locate});
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  if (!o.save.empty()) save_tensors(o.save, result);
  validate::print_validation(stdout, result);
  if (!result.passed()) {
    std::fflush(stdout);
    if (result.nan_mismatches() > 0) {
      throw std::runtime_error("kernel '" + result.kernel + "' of plugin '" + result.plugin +
                               "' and model '" + result.model + "' disagree on NaN in " +
                               std::to_string(result.nan_mismatches()) + " values");
    }
    throw std::runtime_error("kernel '" + result.kernel + "' of plugin '" + result.plugin +
                             "' is not bit-exact with model '" + result.model + "'" +
                             (result.claims_bit_exact ? " as it claims" : ""));
  }
}

const RegisterCommand registration{[](CLI::App& app) {
  auto o = std::make_shared<ValidateOptions>();
  auto* cmd = app.add_subcommand(
      "validate", "compare a plugin kernel with the emulation that claims to reproduce it");
  cmd->add_option("--plugin", o->plugin, "plugin file, or its name on SIMPREC_PLUGIN_PATH")
      ->required();
  cmd->add_option("--kernel", o->kernel, "kernel name (see `simprec plugins list`)")->required();
  cmd->add_flag("--in-process", o->in_process,
                "load the plugin into this process instead of a runner");
  cmd->add_option("--timeout", o->timeout_seconds,
                  "seconds each step may take: loading the plugin and each kernel call (killed "
                  "past it) and simprec's own emulation of the kernel (stopped past it)")
      ->check(CLI::PositiveNumber);
  add_seed_option(*cmd, o->seed, "seed of generated inputs");
  cmd->add_option(
      "--dim", o->dimensions,
      "SYMBOL=SIZE of a shape symbol (default 64; 32 or 16 in tensors of rank 3 or more)");
  cmd->add_option("--format", o->formats,
                  "OPERAND=FORMAT (default: the operand's first accepted format)");
  cmd->add_option("--input", o->inputs, "INPUT=FILE.npy instead of generated values");
  cmd->add_option("--omit", o->omitted, "leave out an optional input");
  cmd->add_option("--param", o->parameters, "PARAMETER=VALUE passed to the kernel");
  cmd->add_option("--low", o->low, "generated values are uniform in [low, high) (default -1)");
  cmd->add_option("--high", o->high, "(default 1)");
  cmd->add_option("--model", o->model,
                  "compare with this emulation model instead of the declared one");
  cmd->add_flag("--require-bit-exact", o->require_bit_exact,
                "fail on any difference, whatever the kernel claims");
  cmd->add_flag("--locate", o->locate,
                "attention kernels: the first differing element of each output, the emulation's "
                "intermediate values of its row, and which other strategy of each slot (or key "
                "block, or rounding at a site) makes the row agree");
  cmd->add_option(
      "--generate", o->generate,
      "attention kernels: Q, K, V (and dO) from an input generator: normal, peaky, "
      "repeated-max, low-rank, sinks, outliers (shape from --dim B=,H=,Sq=,D=; Sk = Sq)");
  cmd->add_option("--save", o->save,
                  "write every input (NAME.npy) and every kernel and emulated output "
                  "(NAME.kernel.npy, NAME.emulated.npy) to this directory")
      ->check(output_path());
  cmd->add_option("--max-memory", o->max_memory,
                  "refuse a validation whose estimated memory exceeds SIZE (e.g. 4G; default: "
                  "the machine's physical memory)");
  cmd->add_flag("--quiet", o->quiet,
                "no progress line on a terminal (shown on stderr after 2 s otherwise)");
  cmd->callback([o] { ending_after_abandoned_calls([&] { run_validate(*o); }); });
}};

}  // namespace
}  // namespace simprec::cli
