#include "plugins/host/plugin_json.hpp"

#include "plugins/host/plugin_error.hpp"

namespace simprec::plugins {

nlohmann::json to_json(const NamedValue& value) {
  return {{"name", value.name},
          {"type", value_type_name(type_of(value.value))},
          {"value", value_text(value.value)}};
}

NamedValue named_value_from_json(const nlohmann::json& json) {
  const auto type = value_type_from_name(json.at("type").get<std::string>());
  if (!type) throw PluginError("unknown value type in " + json.dump());
  return {json.at("name").get<std::string>(),
          parse_value(*type, json.at("value").get<std::string>())};
}

nlohmann::json to_json(const PluginInfo& info) {
  nlohmann::json kernels = nlohmann::json::array();
  for (const auto& k : info.kernels) {
    nlohmann::json operands = nlohmann::json::array();
    for (const auto& o : k.operands) {
      operands.push_back({{"name", o.name},
                          {"direction", o.is_output ? "output" : "input"},
                          {"optional", o.optional},
                          {"formats", o.formats},
                          {"shape", o.shape}});
    }
    nlohmann::json dimensions = nlohmann::json::array();
    for (const auto& d : k.dimensions) {
      dimensions.push_back(
          {{"symbol", d.symbol}, {"min", d.min}, {"max", d.max}, {"multiple_of", d.multiple_of}});
    }
    nlohmann::json parameters = nlohmann::json::array();
    for (const auto& p : k.parameters) {
      parameters.push_back({{"name", p.name},
                            {"type", value_type_name(p.type)},
                            {"required", p.required},
                            {"default", p.default_value},
                            {"description", p.description}});
    }
    nlohmann::json attributes = nlohmann::json::array();
    for (const auto& a : k.attributes) attributes.push_back(to_json(a));
    kernels.push_back({{"name", k.name},
                       {"kind", kernel_kind_name(k.kind)},
                       {"bit_exact", k.bit_exact},
                       {"description", k.description},
                       {"emulation_model", k.emulation_model},
                       {"operands", operands},
                       {"dimensions", dimensions},
                       {"parameters", parameters},
                       {"attributes", attributes}});
  }
  return {{"path", info.path},
          {"name", info.name},
          {"version", info.version},
          {"description", info.description},
          {"abi_version", std::to_string(info.abi_major) + "." + std::to_string(info.abi_minor)},
          {"kernels", kernels}};
}

PluginInfo plugin_info_from_json(const nlohmann::json& json) try {
  PluginInfo info;
  info.path = json.at("path").get<std::string>();
  info.name = json.at("name").get<std::string>();
  info.version = json.at("version").get<std::string>();
  info.description = json.at("description").get<std::string>();
  const auto abi = json.at("abi_version").get<std::string>();
  const auto dot = abi.find('.');
  info.abi_major = static_cast<uint32_t>(std::stoul(abi.substr(0, dot)));
  info.abi_minor = static_cast<uint32_t>(std::stoul(abi.substr(dot + 1)));
  for (const auto& kj : json.at("kernels")) {
    KernelInfo k;
    k.name = kj.at("name").get<std::string>();
    const auto kind = kernel_kind_from_name(kj.at("kind").get<std::string>());
    if (!kind) throw PluginError("unknown kernel kind in " + kj.dump());
    k.kind = *kind;
    k.bit_exact = kj.at("bit_exact").get<bool>();
    k.description = kj.at("description").get<std::string>();
    k.emulation_model = kj.at("emulation_model").get<std::string>();
    for (const auto& oj : kj.at("operands")) {
      k.operands.push_back(
          {oj.at("name").get<std::string>(), oj.at("direction").get<std::string>() == "output",
           oj.at("optional").get<bool>(), oj.at("formats").get<std::vector<std::string>>(),
           oj.at("shape").get<std::vector<std::string>>()});
    }
    for (const auto& dj : kj.at("dimensions")) {
      k.dimensions.push_back({dj.at("symbol").get<std::string>(), dj.at("min").get<int64_t>(),
                              dj.at("max").get<int64_t>(), dj.at("multiple_of").get<int64_t>()});
    }
    for (const auto& pj : kj.at("parameters")) {
      const auto type = value_type_from_name(pj.at("type").get<std::string>());
      if (!type) throw PluginError("unknown parameter type in " + pj.dump());
      k.parameters.push_back({pj.at("name").get<std::string>(), *type,
                              pj.at("required").get<bool>(), pj.at("default").get<std::string>(),
                              pj.at("description").get<std::string>()});
    }
    for (const auto& aj : kj.at("attributes")) k.attributes.push_back(named_value_from_json(aj));
    info.kernels.push_back(std::move(k));
  }
  return info;
} catch (const nlohmann::json::exception& e) {
  throw PluginError(std::string("malformed plugin description from the runner: ") + e.what());
}

}  // namespace simprec::plugins
