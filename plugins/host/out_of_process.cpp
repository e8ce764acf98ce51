#include "plugins/host/out_of_process.hpp"

#include <stdlib.h>

#include <cstring>
#include <sstream>

#include "lib/limits/input_file.hpp"
#include "plugins/host/child_process.hpp"
#include "plugins/host/plugin_error.hpp"
#include "plugins/host/plugin_json.hpp"
#include "plugins/host/runner_protocol.hpp"

namespace simprec::plugins {
namespace fs = std::filesystem;
namespace {

// A fresh directory for one runner call, removed afterwards.
class WorkDirectory {
 public:
  WorkDirectory() {
    std::string pattern = (fs::temp_directory_path() / "simprec-plugin-XXXXXX").string();
    if (!mkdtemp(pattern.data())) {
      throw PluginError("cannot create a directory under " + fs::temp_directory_path().string() +
                        ": " + std::strerror(errno));
    }
    path_ = pattern;
  }
  ~WorkDirectory() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  WorkDirectory(const WorkDirectory&) = delete;
  WorkDirectory& operator=(const WorkDirectory&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// The last lines the runner printed, to show with a crash.
std::string log_tail(const fs::path& file) {
  constexpr size_t kMaxBytes = 2000;
  std::string s;
  try {
    const limits::InputFile in(file, "the plugin runner's log");
    const uint64_t from = in.size() > kMaxBytes ? in.size() - kMaxBytes : 0;
    s.resize(static_cast<size_t>(in.size() - from));
    in.read_at(from, s.data(), s.size());
    if (from > 0) s = "..." + s;
  } catch (const std::runtime_error&) {
    return "";  // no log: nothing to add to the message about the crash
  }
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s.empty() ? "" : "; its output:\n" + s;
}

// Runs the runner and turns every way it can end into a response or a PluginError.
nlohmann::json call_runner(const OpenOptions& options, const std::string& command,
                           const fs::path& plugin, const WorkDirectory& dir,
                           const std::string& doing) {
  const fs::path log = dir.path() / runner_protocol::kLogFile;
  const ChildOutcome outcome = run_child(
      options.runner, {command, plugin.string(), dir.path().string()}, log, options.timeout);
  if (outcome.timed_out) {
    throw PluginError("plugin " + plugin.string() + " did not finish " + doing + " within " +
                      seconds_text(options.timeout) + " and was killed" + log_tail(log));
  }
  if (outcome.signal != 0) {
    throw PluginError("plugin " + plugin.string() + " crashed with " + signal_text(outcome.signal) +
                      " while " + doing + log_tail(log));
  }
  const fs::path response_file = dir.path() / runner_protocol::kResponseFile;
  if (outcome.exit_code > 1 || !fs::exists(response_file)) {
    throw PluginError("plugin runner " + options.runner.string() + " exited with code " +
                      std::to_string(outcome.exit_code) + " while " + doing + " of " +
                      plugin.string() + log_tail(log));
  }
  nlohmann::json response = runner_protocol::read_json(response_file);
  if (!response.value("ok", false))
    throw PluginError(response.value("error", std::string("(no message)")));
  return response;
}

}  // namespace

OutOfProcessPlugin::OutOfProcessPlugin(const fs::path& path, const OpenOptions& options)
    : path_(path), options_(options) {
  if (options_.runner.empty()) options_.runner = find_runner();
  WorkDirectory dir;
  const auto response = call_runner(options_, "describe", path_, dir, "describing itself");
  if (!response.contains("plugin"))
    throw PluginError("plugin runner sent no description of " + path_.string());
  info_ = plugin_info_from_json(response.at("plugin"));
}

std::vector<HostTensor> OutOfProcessPlugin::run(const KernelRequest& request) {
  std::vector<HostTensor> outputs = prepare_outputs(info_.kernel(request.kernel), request);
  WorkDirectory dir;
  runner_protocol::write_request(dir.path(), request, outputs);
  call_runner(options_, "run", path_, dir, "running kernel '" + request.kernel + "'");
  runner_protocol::read_outputs(dir.path(), outputs);
  return outputs;
}

}  // namespace simprec::plugins
