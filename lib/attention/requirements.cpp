// The structure checks of a configuration, read from the registry: what each chosen strategy
// declares it needs of other slots and parameters (strategy.hpp, Requirement), and each
// strategy's own checks once the tiles are concrete.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "lib/attention/options.hpp"

namespace simprec::attention {
namespace {

// Whether the option is read by this configuration's passes.
bool in_scope(const StructuralOption& o, const AttentionConfig& c) {
  return !(o.slot && o.slot->scope == SlotScope::kFlash && !c.flash());
}

std::string alternatives(const std::vector<std::string_view>& values) {
  std::string text;
  for (size_t i = 0; i < values.size(); ++i) {
    text += (i == 0 ? "" : "|") + std::string(values[i]);
  }
  return text;
}

// The values of `key` that satisfy r: the listed ones, or the slot's strategies with r's tag.
std::vector<std::string_view> accepted(const Requirement& r) {
  if (r.tag.empty()) return r.values;
  std::vector<std::string_view> values;
  for (const Strategy* s : strategy_registry().of_slot(r.key)) {
    if (s->has_tag(r.tag)) values.push_back(s->name());
  }
  return values;
}

void check(const Strategy& s, const Requirement& r, const AttentionConfig& c) {
  const StructuralOption* o = find_structural_option(r.key);
  if (!o) {
    throw std::logic_error("strategy " + std::string(s.slot().key) + "=" + std::string(s.name()) +
                           " requires an unknown option '" + std::string(r.key) + "'");
  }
  const std::string value = o->get(c);
  const std::vector<std::string_view> ok = accepted(r);
  if (std::find(ok.begin(), ok.end(), value) != ok.end()) return;
  throw std::invalid_argument(std::string(s.slot().key) + "=" + std::string(s.name()) + " needs " +
                              std::string(r.key) + "=" + alternatives(ok) + ", not " + value);
}

}  // namespace

void check_requirements(const AttentionConfig& c) {
  for (const StructuralOption& o : structural_options()) {
    if (!in_scope(o, c)) continue;
    if (o.slot) {
      const Strategy& s = *o.strategy(c);
      for (const Requirement& r : s.info().needs) check(s, r, c);
    } else if (!o.choices.empty()) {
      const std::string value = o.get(c);
      if (std::find(o.choices.begin(), o.choices.end(), value) == o.choices.end()) {
        throw std::invalid_argument(std::string(o.key) + " must be one of " +
                                    alternatives(o.choices) + ", not " + value);
      }
    }
  }
}

void check_run_requirements(const AttentionConfig& c) {
  for (const StructuralOption& o : structural_options()) {
    if (!o.slot || !in_scope(o, c)) continue;
    const Strategy& s = *o.strategy(c);
    if (const std::string problem = s.check(c); !problem.empty()) {
      throw std::invalid_argument(std::string(s.slot().key) + "=" + std::string(s.name()) + ": " +
                                  problem);
    }
  }
}

}  // namespace simprec::attention
