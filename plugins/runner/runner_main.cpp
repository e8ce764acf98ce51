// simprec-plugin-runner: loads one plugin and does one thing with it, in a process of its own,
// so that a plugin that crashes or hangs cannot take the host down (the host kills us on
// timeout). Protocol: plugins/host/runner_protocol.hpp.
//     simprec-plugin-runner describe PLUGIN DIR
//     simprec-plugin-runner run PLUGIN DIR
#include <cstdio>
#include <exception>
#include <string>

#include "plugins/host/exit_guard.hpp"
#include "plugins/host/guard_faults.hpp"
#include "plugins/host/plugin_error.hpp"
#include "plugins/host/plugin_json.hpp"
#include "plugins/host/runner_protocol.hpp"
#include "plugins/host/shared_library.hpp"

namespace {

using namespace simprec::plugins;
namespace fs = std::filesystem;

nlohmann::json run_command(const std::string& command, const fs::path& plugin_path,
                           const fs::path& dir) {
  // A kernel that runs into the guard page after an output, or that ends the process, ends the
  // runner at once; the report becomes the response the host reads.
  report_guard_faults_to_response_file(dir / runner_protocol::kResponseFile);
  report_plugin_exits_to_response_file(dir / runner_protocol::kResponseFile);
  SharedLibraryPlugin plugin(plugin_path);
  if (command == "describe") return {{"ok", true}, {"plugin", to_json(plugin.info())}};
  std::vector<HostTensor> outputs;
  const KernelRequest request = runner_protocol::read_request(dir, outputs);
  // The host checked the request already; checking again costs little and keeps a hand-made
  // request from reaching the plugin with shapes it did not declare.
  const auto expected = prepare_outputs(plugin.info().kernel(request.kernel), request);
  if (expected.size() != outputs.size())
    throw PluginError("request outputs do not match the kernel");
  plugin.run_into(request, outputs);
  runner_protocol::write_outputs(dir, outputs);
  return {{"ok", true}};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4 || (std::string(argv[1]) != "describe" && std::string(argv[1]) != "run")) {
    std::fprintf(stderr, "usage: simprec-plugin-runner describe|run PLUGIN DIR\n");
    return 2;
  }
  const fs::path dir = argv[3];
  nlohmann::json response;
  try {
    response = run_command(argv[1], argv[2], dir);
  } catch (const std::exception& e) {
    response = {{"ok", false}, {"error", e.what()}};
  }
  try {
    runner_protocol::write_json(dir / runner_protocol::kResponseFile, response);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "simprec-plugin-runner: %s\n", e.what());
    return 2;
  }
  return response["ok"].get<bool>() ? 0 : 1;
}
