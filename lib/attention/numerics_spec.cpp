#include "lib/attention/numerics_spec.hpp"

#include <map>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "emulation/excerpt.hpp"
#include "lib/attention/input_quantization.hpp"
#include "lib/attention/options.hpp"
#include "lib/attention/preset.hpp"
#include "lib/config/spec_items.hpp"
#include "lib/config/toml_reader.hpp"

namespace simprec::attention {
namespace {

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

NumericsSpec read_toml_spec(const std::string& path) {
  auto model = std::make_shared<KernelModel>(read_model_file(path));
  if (model->base.empty()) {
    std::string known;
    for (const auto& p : preset_names()) known += (known.empty() ? "" : ", ") + p;
    throw std::invalid_argument(path +
                                ": a numerics file needs 'preset', the model it builds on "
                                "(known: " +
                                known + ")");
  }
  NumericsSpec spec;
  spec.preset = model->base;
  spec.format = model->format;
  spec.mitigations = model->mitigations;
  for (const std::string& m : spec.mitigations) {
    try {
      (void)canonical_mitigation(m);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(path + ": mitigations: " + e.what());
    }
  }
  spec.file_model = std::move(model);
  // The file's assignments checked where they stand, at its own format or bf16.
  (void)instantiate_model(*spec.file_model,
                          spec.format.empty() ? formats::bf16 : parse_format(spec.format), true);
  return spec;
}

// The numerics of a configuration, without what belongs to one call (causal, scale, seed,
// threads, tracing, the supplied device functions) or how it was written.
nlohmann::json numerics_of(const AttentionConfig& c) {
  nlohmann::json j = to_json(c);
  for (const char* key : {"overrides", "mitigations", "causal", "masking", "scale", "seed",
                          "numerics", "device_math_library"}) {
    j.erase(key);
  }
  for (const DeviceFn fn : kDeviceFns) j.erase(std::string(device_fn_name(fn)) + "_table_size");
  j["beta_arithmetic"] = to_string(c.beta_rowmax.arithmetic);
  return j;
}

}  // namespace

NumericsSpec parse_numerics_spec(std::string_view text) {
  if (ends_with(text, ".toml")) return read_toml_spec(std::string(text));
  NumericsSpec spec;
  config::read_spec_items(
      text, "numerics spec",
      "PRESET[,SITE=FORMAT:ROUNDING[:ACCUMULATION]...][,OPTION=VALUE...][,MITIGATION...]",
      [](std::string_view item) {
        if (item.find('=') != std::string_view::npos)
          return std::string(item.substr(0, item.find('=')));
        // hp takes a site: hp:p_cast and hp:o_out are two mitigations.
        const size_t colon = item.find(':');
        const std::string_view name = item.substr(0, colon);
        return std::string(name == "hp" ? item.substr(0, item.find(':', colon + 1)) : name);
      },
      [&](std::string_view item) {
        if (item.find('=') != std::string_view::npos || item.find(':') != std::string_view::npos) {
          throw std::invalid_argument("numerics spec '" + excerpt(text) +
                                      "' must start with a preset, not '" + excerpt(item) + "'");
        }
        spec.preset = item;
      },
      [&](std::string_view item) {
        if (item.rfind("format=", 0) == 0) {
          spec.format = item.substr(7);
        } else if (item.find('=') != std::string_view::npos) {
          spec.assignments.emplace_back(item);
        } else {
          spec.mitigations.emplace_back(item);
        }
      });
  return spec;
}

AttentionConfig make_config(const NumericsSpec& spec, const Format& default_format) {
  const Format format = spec.format.empty() ? default_format : parse_format(spec.format);
  AttentionConfig config = spec.file_model ? instantiate_model(*spec.file_model, format, true)
                                           : make_preset(spec.preset, format);
  for (const auto& a : spec.assignments) apply_override(config, a);
  for (const auto& m : spec.mitigations) apply_mitigation(config, m);
  // What a run of any shape would refuse, refused here (Engine::check_structure adds the checks
  // that need the run's tiles).
  check_requirements(config);
  check_quantization(config, false);
  return config;
}

AttentionConfig parse_numerics(std::string_view text, const Format& default_format) {
  return make_config(parse_numerics_spec(text), default_format);
}

std::string canonical_numerics(const AttentionConfig& config) {
  const AttentionConfig base = make_preset(config.preset, config.low_precision);
  AttentionConfig assigned = base;
  for (const auto& a : config.overrides) apply_override(assigned, a);

  std::string text = config.preset + ",format=" + config.low_precision.name();
  for (const StructuralOption& o : structural_options()) {
    const std::string value = o.get(assigned);
    if (value != o.get(base)) text += "," + std::string(o.key) + "=" + value;
  }
  for (int i = 0; i < kSiteCount; ++i) {
    const Site s = static_cast<Site>(i);
    const SiteSpec& spec = assigned.site(s);
    if (spec == base.site(s)) continue;
    text += "," + std::string(site_name(s)) + "=" + spec.format.name() + ":" +
            rounding_name(spec.rounding);
    if (site_accumulates(s)) text += ":" + spec.accumulation;
  }
  for (const auto& m : config.mitigations) text += "," + canonical_mitigation(m);

  if (numerics_of(parse_numerics(text, config.low_precision)) != numerics_of(config)) {
    throw std::logic_error("the numerics of this '" + config.preset +
                           "' configuration were changed other than through the numerics spec, "
                           "so no spec reproduces them");
  }
  return text;
}

}  // namespace simprec::attention
