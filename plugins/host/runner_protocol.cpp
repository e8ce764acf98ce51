#include "plugins/host/runner_protocol.hpp"

#include <fstream>

#include "lib/limits/input_file.hpp"

#include "plugins/host/plugin_error.hpp"
#include "plugins/host/plugin_json.hpp"

namespace simprec::plugins::runner_protocol {
namespace fs = std::filesystem;
namespace {

std::string tensor_file(const char* role, size_t index) {
  return std::string(role) + "_" + std::to_string(index) + ".bin";
}

void write_bytes(const fs::path& file, const std::vector<uint8_t>& bytes) {
  std::ofstream out(file, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  if (!out) throw PluginError("cannot write " + file.string());
}

void read_bytes(const fs::path& file, std::vector<uint8_t>& bytes) {
  try {
    const limits::InputFile in(file, "a tensor the plugin runner wrote");
    if (in.size() != bytes.size()) {
      throw PluginError(file.string() + " has " + std::to_string(in.size()) + " bytes, expected " +
                        std::to_string(bytes.size()));
    }
    in.read_at(0, bytes.data(), bytes.size());
  } catch (const PluginError&) {
    throw;
  } catch (const std::runtime_error& e) {
    throw PluginError(e.what());
  }
}

nlohmann::json tensor_json(const HostTensor& t, const std::string& file) {
  return {{"name", t.name}, {"format", t.format}, {"shape", t.shape}, {"file", file}};
}

HostTensor tensor_from_json(const nlohmann::json& j) {
  return HostTensor::zeros(j.at("name").get<std::string>(), j.at("format").get<std::string>(),
                           j.at("shape").get<std::vector<int64_t>>());
}

}  // namespace

void write_json(const fs::path& file, const nlohmann::json& json) {
  std::ofstream out(file);
  // Text from a plugin is made valid UTF-8 where it enters (plugin_text.hpp); should any other
  // slip through, a replacement character is better than a response lost to the error.
  out << json.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  if (!out) throw PluginError("cannot write " + file.string());
}

nlohmann::json read_json(const fs::path& file) {
  std::string text;
  try {
    text = limits::read_text_file(file, limits::kMaxJsonBytes, "a message of the plugin runner");
  } catch (const std::runtime_error& e) {
    throw PluginError(e.what());
  }
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw PluginError("malformed " + file.string() + ": " + e.what());
  }
}

void write_request(const fs::path& dir, const KernelRequest& request,
                   const std::vector<HostTensor>& outputs) {
  nlohmann::json inputs = nlohmann::json::array();
  for (size_t i = 0; i < request.inputs.size(); ++i) {
    inputs.push_back(tensor_json(request.inputs[i], tensor_file("input", i)));
    write_bytes(dir / tensor_file("input", i), request.inputs[i].bytes);
  }
  nlohmann::json output_list = nlohmann::json::array();
  for (size_t i = 0; i < outputs.size(); ++i)
    output_list.push_back(tensor_json(outputs[i], tensor_file("output", i)));
  nlohmann::json parameters = nlohmann::json::array();
  for (const auto& p : request.parameters) parameters.push_back(to_json(p));
  write_json(dir / kRequestFile, {{"kernel", request.kernel},
                                  {"inputs", inputs},
                                  {"outputs", output_list},
                                  {"parameters", parameters}});
}

KernelRequest read_request(const fs::path& dir, std::vector<HostTensor>& outputs) try {
  const auto json = read_json(dir / kRequestFile);
  KernelRequest request;
  request.kernel = json.at("kernel").get<std::string>();
  for (const auto& j : json.at("inputs")) {
    request.inputs.push_back(tensor_from_json(j));
    read_bytes(dir / j.at("file").get<std::string>(), request.inputs.back().bytes);
  }
  outputs.clear();
  for (const auto& j : json.at("outputs")) {
    outputs.push_back(tensor_from_json(j));
    request.output_formats[outputs.back().name] = outputs.back().format;
  }
  for (const auto& j : json.at("parameters"))
    request.parameters.push_back(named_value_from_json(j));
  return request;
} catch (const nlohmann::json::exception& e) {
  throw PluginError("malformed request in " + dir.string() + ": " + e.what());
}

void write_outputs(const fs::path& dir, const std::vector<HostTensor>& outputs) {
  for (size_t i = 0; i < outputs.size(); ++i)
    write_bytes(dir / tensor_file("output", i), outputs[i].bytes);
}

void read_outputs(const fs::path& dir, std::vector<HostTensor>& outputs) {
  for (size_t i = 0; i < outputs.size(); ++i)
    read_bytes(dir / tensor_file("output", i), outputs[i].bytes);
}

}  // namespace simprec::plugins::runner_protocol
