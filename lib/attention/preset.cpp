#include "lib/attention/preset.hpp"

#include <stdexcept>

#include "emulation/did_you_mean.hpp"
#include "lib/attention/model.hpp"
#include "lib/limits/strict_parse.hpp"

namespace simprec::attention {

std::vector<std::string> preset_names() {
  std::vector<std::string> names;
  for (const KernelModel& m : builtin_models()) names.push_back(m.name);
  return names;
}

std::string_view preset_description(std::string_view name) {
  const KernelModel* m = find_builtin_model(name);
  return m ? std::string_view(m->description) : std::string_view();
}

AttentionConfig make_preset(std::string_view name, const Format& f) {
  const KernelModel* m = find_builtin_model(name);
  if (!m) {
    std::string known;
    for (const auto& p : preset_names()) known += (known.empty() ? "" : ", ") + p;
    throw std::invalid_argument("unknown preset '" + limits::excerpt(name) + "'" +
                                did_you_mean(name, preset_names()) + " (known: " + known + ")");
  }
  return instantiate_model(*m, f);
}

}  // namespace simprec::attention
