#include "lib/attention/strategy.hpp"

#include <algorithm>

#include "emulation/did_you_mean.hpp"
#include "lib/limits/strict_parse.hpp"

namespace simprec::attention {

// The generated index (lib/CMakeLists.txt): every strategy file's registration.
void register_all_strategies(StrategyRegistry& registry);

bool Strategy::has_tag(std::string_view tag) const {
  return std::find(info_.tags.begin(), info_.tags.end(), tag) != info_.tags.end();
}

void StrategyRegistry::add(std::unique_ptr<Strategy> strategy) {
  if (find(strategy->slot().key, strategy->name())) {
    throw std::logic_error("two strategies named '" + std::string(strategy->name()) + "' in slot " +
                           std::string(strategy->slot().key));
  }
  strategies_.push_back(std::move(strategy));
}

std::vector<const Strategy*> StrategyRegistry::of_slot(std::string_view key) const {
  std::vector<const Strategy*> out;
  for (const auto& s : strategies_) {
    if (s->slot().key == key) out.push_back(s.get());
  }
  std::sort(out.begin(), out.end(), [](const Strategy* a, const Strategy* b) {
    const bool a_default = a->name() == a->slot().default_strategy;
    const bool b_default = b->name() == b->slot().default_strategy;
    if (a_default != b_default) return a_default;
    return a->name() < b->name();
  });
  return out;
}

const Strategy* StrategyRegistry::find(std::string_view slot_key, std::string_view name) const {
  for (const auto& s : strategies_) {
    if (s->slot().key == slot_key && s->name() == name) return s.get();
  }
  return nullptr;
}

const StrategyRegistry& strategy_registry() {
  static const StrategyRegistry registry = [] {
    StrategyRegistry r;
    register_all_strategies(r);
    return r;
  }();
  return registry;
}

std::string unknown_strategy_message(const SlotInfo& slot, std::string_view name) {
  std::string known;
  std::vector<std::string> names;
  for (const Strategy* s : strategy_registry().of_slot(slot.key)) {
    known += (known.empty() ? "" : ", ") + std::string(s->name());
    names.emplace_back(s->name());
  }
  return "unknown " + std::string(slot.key) + " '" + limits::excerpt(name) + "'" +
         did_you_mean(name, names) + " (known: " + known + ")";
}

}  // namespace simprec::attention
