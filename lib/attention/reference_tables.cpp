// The Markdown reference tables of the numerics registry (options.hpp): what `simprec numerics
// --list` prints and docs/attention.md carries.
#include <string>

#include "lib/attention/options.hpp"

namespace simprec::attention {
namespace {

std::string join(const std::vector<std::string_view>& items, std::string_view sep) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : std::string(sep)) + std::string(item);
  return out;
}

std::string requirement_text(const Requirement& r) {
  if (!r.tag.empty()) {
    std::vector<std::string_view> values;
    for (const Strategy* s : strategy_registry().of_slot(r.key)) {
      if (s->has_tag(r.tag)) values.push_back(s->name());
    }
    return "`" + std::string(r.key) + "=" + join(values, "|") + "`";
  }
  return "`" + std::string(r.key) + "=" + join(r.values, "|") + "`";
}

}  // namespace

std::string slots_markdown() {
  std::string out = "| slot | default | read by | what it chooses |\n| --- | --- | --- | --- |\n";
  for (const StructuralOption& o : structural_options()) {
    if (!o.slot) continue;
    out += "| `" + std::string(o.key) + "` | " + default_value(o) + " | " +
           (o.slot->scope == SlotScope::kFlash ? "flash" : "flash, standard") + " | " +
           std::string(o.doc) + " |\n";
  }
  return out;
}

std::string parameters_markdown() {
  std::string out = "| parameter | values | default | what it sets |\n| --- | --- | --- | --- |\n";
  for (const StructuralOption& o : structural_options()) {
    if (o.slot) continue;
    const std::string values =
        o.value_syntax.empty() ? join(o.choices, ", ") : std::string(o.value_syntax);
    out += "| `" + std::string(o.key) + "` | " + values + " | " + default_value(o) + " | " +
           std::string(o.doc) + " |\n";
  }
  return out;
}

std::string strategies_markdown() {
  std::string out;
  for (const StructuralOption& o : structural_options()) {
    if (!o.slot) continue;
    out += "### `" + std::string(o.key) + "`: " + std::string(o.doc) + "\n\n";
    out += "| strategy | what it computes | needs | random draws |\n| --- | --- | --- | --- |\n";
    for (const Strategy* s : strategy_registry().of_slot(o.key)) {
      const StrategyInfo& info = s->info();
      std::string needs;
      for (const Requirement& r : info.needs) {
        needs += (needs.empty() ? "" : ", ") + requirement_text(r);
      }
      std::string draws;
      for (const Draw& d : info.draws) {
        draws += (draws.empty() ? "" : "; ") + ("`" + std::string(d.site) + "`: ") +
                 std::string(d.events);
      }
      out += "| `" + std::string(s->name()) + "`" +
             (s->name() == o.slot->default_strategy ? " (default)" : "") + " | " +
             std::string(info.doc) + " | " + (needs.empty() ? "-" : needs) + " | " +
             (draws.empty() ? "-" : draws) + " |\n";
    }
    out += "\n";
  }
  return out;
}

}  // namespace simprec::attention
