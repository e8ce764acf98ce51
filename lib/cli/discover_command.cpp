// simprec discover: find a numerics spec that reproduces a kernel bit for bit, calling a plugin
// kernel on probes of its own or searching recorded inputs and outputs (lib/discover); with
// --gemm, the GEMM numerics spec of a recorded GEMM (lib/discover/gemm_discovery.hpp). Prints
// the report of docs/discover.md, ending with `spec SPEC`; exits 0 only when that spec is
// bit-exact on everything searched.
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lib/cli/command.hpp"
#include "lib/cli/plugin_timeouts.hpp"
#include "lib/cli/threads_option.hpp"
#include "lib/discover/discovery.hpp"
#include "lib/discover/gemm_discovery.hpp"
#include "lib/discover/plugin_kernel.hpp"
#include "lib/discover/recorded_case.hpp"
#include "lib/discover/search_space.hpp"
#include "lib/npy/npy.hpp"
#include "plugins/host/plugin.hpp"
#include "plugins/host/plugin_search.hpp"

namespace simprec::cli {
namespace {

struct DiscoverCommandOptions {
  std::string plugin, kernel;
  bool in_process = false;
  double timeout_seconds = 60;
  std::map<std::string, std::string> files;  // q, k, v, do, o, lse, dq, dk, dv, rows, key-rows
  std::string input_format, output_format;
  bool causal = false;
  std::optional<double> scale;
  std::vector<std::string> given, families;
  std::optional<double> time_limit;
  unsigned threads = 0;
  size_t max_probes = 32;
  bool list_space = false;
  bool gemm = false;
  std::map<std::string, std::string> gemm_files;  // a, b, d, scale-a, scale-b, bias
};

constexpr const char* kFileOptions[][2] = {
    {"q", "Q the kernel was called with (.npy)"},
    {"k", "K"},
    {"v", "V"},
    {"do", "dO, for recorded gradients"},
    {"o", "O the kernel returned"},
    {"lse", "its LSE (natural log)"},
    {"dq", "dQ"},
    {"dk", "dK"},
    {"dv", "dV"},
    {"rows", "int64 query rows O, LSE and dQ hold (default: all)"},
    {"key-rows", "int64 key rows dK and dV hold (default: all)"},
};

constexpr const char* kGemmFileOptions[][2] = {
    {"a",
     "--gemm: A.npy (M, K), as simprec gemm takes it (uint8/uint16 encodings or float32 "
     "values)"},
    {"b", "--gemm: B.npy (K, N)"},
    {"d", "--gemm: D.npy (M, N), float32 values of the output format the GEMM returned"},
    {"scale-a", "--gemm: scale_a.npy, float32: 1 value (tensor) or M (row)"},
    {"scale-b", "--gemm: scale_b.npy, float32: 1 value (tensor) or N (row)"},
    {"bias", "--gemm: bias.npy, float32: N values"},
};

void run_discover_gemm(const DiscoverCommandOptions& o) {
  if (!o.plugin.empty() || !o.kernel.empty() || !o.files.empty() || !o.input_format.empty() ||
      !o.output_format.empty() || o.causal || o.scale || !o.given.empty() || o.list_space) {
    throw UsageError(
        "--gemm searches a recorded GEMM: give --a, --b and --d (and --scale-a, --scale-b, "
        "--bias, --family, --time-limit), not an attention kernel's options");
  }
  for (const char* required : {"a", "b", "d"}) {
    if (!o.gemm_files.count(required)) throw UsageError(std::string("--gemm needs --") + required);
  }
  std::map<std::string, NpyArray> arrays;
  for (const auto& [key, path] : o.gemm_files) arrays[key] = read_npy(path);
  const auto get = [&](const std::string& key) -> const NpyArray* {
    const auto it = arrays.find(key);
    return it == arrays.end() ? nullptr : &it->second;
  };
  discover::GemmRecording r{get("a"),       get("b"),       get("d"),
                            get("scale-a"), get("scale-b"), get("bias")};
  discover::GemmDiscoverOptions options;
  options.families = o.families;
  options.time_limit = o.time_limit;
  options.threads = o.threads;
  options.log = [](const std::string& line) {
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  };
  discover::GemmDiscoveryResult result;
  try {
    result = discover::discover_gemm(r, options);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  if (!result.bit_exact) throw ExitStatus{1};
}

discover::Case recorded(const DiscoverCommandOptions& o, std::map<std::string, NpyArray>& arrays) {
  for (const auto& [key, path] : o.files) arrays[key] = read_npy(path);
  const auto get = [&](const std::string& key) -> const NpyArray* {
    const auto it = arrays.find(key);
    return it == arrays.end() ? nullptr : &it->second;
  };
  discover::RecordedArrays r;
  r.label = o.files.at("o");
  r.q = get("q");
  r.k = get("k");
  r.v = get("v");
  r.d_out = get("do");
  for (const auto& [key, name] :
       {std::pair{"o", "O"}, std::pair{"lse", "LSE"}, std::pair{"dq", "dQ"}, std::pair{"dk", "dK"},
        std::pair{"dv", "dV"}}) {
    if (const NpyArray* a = get(key)) r.outputs[name] = a;
  }
  r.rows = get("rows");
  r.key_rows = get("key-rows");
  r.input_format = o.input_format;
  r.output_format = o.output_format;
  r.causal = o.causal;
  r.scale = o.scale;
  r.given = o.given;
  return discover::recorded_case(r);
}

void run_discover(const DiscoverCommandOptions& o) {
  if (o.gemm) {
    run_discover_gemm(o);
    return;
  }
  if (!o.gemm_files.empty()) {
    throw UsageError("--" + o.gemm_files.begin()->first +
                     " describes a recorded GEMM: give --gemm with --a, --b and --d");
  }
  if (o.list_space) {
    std::fputs(discover::describe_space().c_str(), stdout);
    return;
  }
  const bool with_plugin = !o.plugin.empty() || !o.kernel.empty();
  const bool with_files = !o.files.empty();
  if (with_plugin == with_files) {
    throw UsageError(
        "give a kernel to call (--plugin LIB --kernel NAME) or what a kernel was "
        "given and returned (--q --k --v --o ... --input-format F), one of them");
  }
  if (with_plugin && (o.plugin.empty() || o.kernel.empty()))
    throw UsageError("--plugin and --kernel go together");
  if (with_plugin && (o.causal || o.scale || !o.given.empty() || !o.output_format.empty()))
    throw UsageError(
        "--causal, --scale, --given and --output-format describe recorded files; a "
        "plugin kernel is probed with and without its causal parameter");
  discover::DiscoverOptions options;
  options.families = o.families;
  options.time_limit = o.time_limit;
  options.threads = o.threads;
  options.max_probes = o.max_probes;
  options.log = [](const std::string& line) {
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  };
  discover::DiscoveryResult result;
  if (with_files) {
    for (const char* required : {"q", "k", "v", "o"}) {
      if (!o.files.count(required))
        throw UsageError(std::string("recorded files need --") + required);
    }
    if (o.input_format.empty()) throw UsageError("recorded files need --input-format");
    std::map<std::string, NpyArray> arrays;
    std::vector<discover::Case> cases;
    try {
      cases.push_back(recorded(o, arrays));
      result = discover::discover(std::move(cases), nullptr, options);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
  } else {
    const auto plugin =
        open_named_plugin(o.plugin, plugin_open_options(o.in_process, o.timeout_seconds));
    std::optional<discover::PluginKernel> kernel;
    try {
      kernel.emplace(*plugin, o.kernel, o.input_format);
      result = discover::discover({}, &*kernel, options);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
  }
  if (!result.bit_exact) throw ExitStatus{1};
}

const RegisterCommand registration{[](CLI::App& app) {
  auto o = std::make_shared<DiscoverCommandOptions>();
  auto* cmd = app.add_subcommand(
      "discover", "find a numerics spec that reproduces a kernel bit for bit (docs/discover.md)");
  cmd->add_option("--plugin", o->plugin, "plugin file, or its name on SIMPREC_PLUGIN_PATH");
  cmd->add_option("--kernel", o->kernel, "attention forward kernel of the plugin to call");
  cmd->add_flag("--in-process", o->in_process,
                "load the plugin into this process instead of a runner");
  cmd->add_option("--timeout", o->timeout_seconds, "seconds each kernel call may take")
      ->check(CLI::PositiveNumber);
  for (const auto& [name, doc] : kFileOptions) {
    cmd->add_option_function<std::string>(
        std::string("--") + name,
        [o, key = std::string(name)](const std::string& path) { o->files[key] = path; }, doc);
  }
  cmd->add_flag("--gemm", o->gemm,
                "search the GEMM numerics spec (docs/gemm.md) of a recorded GEMM: --a --b --d");
  for (const auto& [name, doc] : kGemmFileOptions) {
    cmd->add_option_function<std::string>(
        std::string("--") + name,
        [o, key = std::string(name)](const std::string& path) { o->gemm_files[key] = path; }, doc);
  }
  cmd->add_option("--input-format", o->input_format,
                  "format of Q, K, V (and dO): float arrays hold its values, uint16/uint8 ones "
                  "its encodings; for a plugin, one of Q's formats (default: its first)");
  cmd->add_option("--output-format", o->output_format,
                  "format of uint16/uint8 output encodings (default: the input format)");
  cmd->add_flag("--causal", o->causal, "the recorded call had a causal mask (top-left aligned)");
  cmd->add_option("--scale", o->scale, "the recorded call's softmax scale (default 1/sqrt(D))");
  cmd->add_option("--given", o->given,
                  "KEY=VALUE the recorded call fixed and the search never moves (batch_heads=, "
                  "sms=, compiled_for=): added to every spec that accepts it");
  cmd->add_option("--family", o->families,
                  "a preset or numerics file the search may start from (repeatable; default: "
                  "fa2, fp32 and torch-math, the best of them); with --gemm, a GEMM preset or "
                  "spec whose instruction model the search keeps to");
  cmd->add_option("--time-limit", o->time_limit,
                  "seconds after which the search stops with its best spec so far")
      ->check(CLI::PositiveNumber);
  add_threads_option(*cmd, o->threads, "--threads,-j",
                     "candidate specs tried at once (0, the default: every core); with --gemm, "
                     "the threads of each GEMM run");
  cmd->add_option("--max-probes", o->max_probes,
                  "kernel calls the confirmation may add to the first probes (default 32)");
  cmd->add_flag("--list-space", o->list_space, "print the moves the search tries and exit");
  cmd->callback([o] { ending_after_abandoned_calls([&] { run_discover(*o); }); });
}};

}  // namespace
}  // namespace simprec::cli
