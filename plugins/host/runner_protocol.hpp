// The files through which the host and simprec-plugin-runner talk. The host makes a fresh
// directory per call and starts
//     simprec-plugin-runner describe PLUGIN DIR      or      simprec-plugin-runner run PLUGIN DIR
// For `run` it first writes DIR/request.json and one raw little-endian file per input
// (input_<i>.bin, storage type of the tensor's format); the runner writes output_<i>.bin. The
// runner always ends by writing DIR/response.json: {"ok": true, ["plugin": description]} or
// {"ok": false, "error": message}, and exits 0 or 1 accordingly (2: bad command line).
#pragma once

#include <filesystem>
#include <vector>

#include <nlohmann/json.hpp>

#include "plugins/host/host_tensor.hpp"
#include "plugins/host/kernel_request.hpp"

namespace simprec::plugins::runner_protocol {

inline constexpr const char* kRequestFile = "request.json";
inline constexpr const char* kResponseFile = "response.json";
inline constexpr const char* kLogFile = "runner.log";

// Writes request.json and the input files.
void write_request(const std::filesystem::path& dir, const KernelRequest& request,
                   const std::vector<HostTensor>& outputs);
// Reads them back; the returned outputs are zero-filled, to be passed to the plugin.
KernelRequest read_request(const std::filesystem::path& dir, std::vector<HostTensor>& outputs);

void write_outputs(const std::filesystem::path& dir, const std::vector<HostTensor>& outputs);
// Fills the outputs (shapes and formats already set) from the files; throws PluginError when a
// file is missing or has the wrong size.
void read_outputs(const std::filesystem::path& dir, std::vector<HostTensor>& outputs);

void write_json(const std::filesystem::path& file, const nlohmann::json& json);
nlohmann::json read_json(const std::filesystem::path& file);

}  // namespace simprec::plugins::runner_protocol
