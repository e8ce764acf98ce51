// Numerics choices as data. Every choice of attention's arithmetic is a named strategy in a named
// slot: a slot (lib/attention/strategies/SLOT.hpp) is the interface the engine calls at one point
// of the computation, a strategy (lib/attention/strategies/SLOT/NAME.cpp) one implementation of it
// with its one-line doc, what it needs of other slots and parameters, and where its stochastic
// roundings draw their random bits. The build collects every strategy file into the registry (a
// new strategy is its file and its test, nothing else); the options table (options.hpp), the
// structure checks, `simprec numerics --list`, the CLI's and Python's help and the docs' tables
// all read it.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace simprec::attention {

struct AttentionConfig;

// A condition a strategy puts on another slot or parameter: its value (the strategy's name, or
// the parameter's text as the options table prints it) is one of `values`, or, for a slot, a
// strategy that carries `tag`.
struct Requirement {
  std::string_view key;
  std::vector<std::string_view> values;
  std::string_view tag;
};

// Where a strategy's roundings draw their random bits under stochastic rounding: the site whose
// stream they use, and which rounding events (named as the pass's index layout names them).
struct Draw {
  std::string_view site;
  std::string_view events;
};

struct StrategyInfo {
  std::string_view name;
  std::string_view doc;  // one line
  std::vector<Requirement> needs;
  std::vector<std::string_view> tags;
  std::vector<Draw> draws;
};

// Which runs read a slot; the others ignore it and its strategies' requirements (standard
// attention's baseline of a flash configuration keeps the flash options it does not use).
enum class SlotScope : uint8_t { kAll, kFlash };

struct SlotInfo {
  std::string_view key;  // in `--set KEY=VALUE`, numerics specs and the JSON
  std::string_view doc;  // one line: what the slot chooses
  std::string_view default_strategy;
  SlotScope scope = SlotScope::kAll;
  // Read by the backward pass alone: a forward run's outputs never depend on it (what
  // `simprec discover` leaves alone when no gradient is given).
  bool backward_only = false;
};

class Strategy {
 public:
  Strategy(const SlotInfo& slot, StrategyInfo info) : slot_(&slot), info_(std::move(info)) {}
  virtual ~Strategy() = default;
  Strategy(const Strategy&) = delete;
  Strategy& operator=(const Strategy&) = delete;

  const SlotInfo& slot() const { return *slot_; }
  std::string_view name() const { return info_.name; }
  const StrategyInfo& info() const { return info_; }
  bool has_tag(std::string_view tag) const;

  // A condition on the configuration beyond the declared requirements, checked once the run's
  // tiles are known (a tile that must divide a block, say): the problem, or empty.
  virtual std::string check(const AttentionConfig& config) const { return {}; }

 private:
  const SlotInfo* slot_;
  StrategyInfo info_;
};

// Every strategy of every slot, in a fixed order (each slot's default first, then by name).
class StrategyRegistry {
 public:
  void add(std::unique_ptr<Strategy> strategy);
  // The strategies of the slot named `key`, default first.
  std::vector<const Strategy*> of_slot(std::string_view key) const;
  const Strategy* find(std::string_view slot_key, std::string_view name) const;

 private:
  std::vector<std::unique_ptr<Strategy>> strategies_;
};

const StrategyRegistry& strategy_registry();

// The strategies of one slot, as its interface type S (S::kSlot names the slot).
template <class S>
std::vector<const S*> strategies_of() {
  std::vector<const S*> out;
  for (const Strategy* s : strategy_registry().of_slot(S::kSlot.key)) {
    out.push_back(static_cast<const S*>(s));
  }
  return out;
}

// "unknown KEY 'NAME' (known: A, B, ...)".
std::string unknown_strategy_message(const SlotInfo& slot, std::string_view name);

// The strategy of slot S named `name`; throws std::invalid_argument listing the known names.
template <class S>
const S& find_strategy(std::string_view name) {
  if (const Strategy* s = strategy_registry().find(S::kSlot.key, name)) {
    return static_cast<const S&>(*s);
  }
  throw std::invalid_argument(unknown_strategy_message(S::kSlot, name));
}

// A configuration's choice in slot S: one of the registry's strategies, the slot's default
// unless set. Compared by identity.
template <class S>
class Choice {
 public:
  Choice() : strategy_(&default_strategy()) {}
  explicit Choice(std::string_view name) : strategy_(&find_strategy<S>(name)) {}
  Choice(const S& strategy) : strategy_(&strategy) {}  // NOLINT: a strategy is a choice

  const S& operator*() const { return *strategy_; }
  const S* operator->() const { return strategy_; }
  std::string_view name() const { return strategy_->name(); }
  bool is(std::string_view name) const { return strategy_->name() == name; }
  bool operator==(const Choice& other) const { return strategy_ == other.strategy_; }

 private:
  static const S& default_strategy() {
    static const S& s = find_strategy<S>(S::kSlot.default_strategy);
    return s;
  }
  const S* strategy_;
};

// Registration: each strategy file ends with SIMPREC_REGISTER_STRATEGIES(Type, ...) inside
// namespace simprec::attention. The build gives each file its own SIMPREC_STRATEGY_ID and calls
// every file's registration from one generated index (lib/CMakeLists.txt), so that no strategy
// depends on static initialisation or can be dropped by the linker.
#define SIMPREC_STRATEGY_CAT2(a, b) a##b
#define SIMPREC_STRATEGY_CAT(a, b) SIMPREC_STRATEGY_CAT2(a, b)
#define SIMPREC_REGISTER_STRATEGIES(...)                                        \
  void SIMPREC_STRATEGY_CAT(register_strategies_,                               \
                            SIMPREC_STRATEGY_ID)(StrategyRegistry & registry) { \
    register_each<__VA_ARGS__>(registry);                                       \
  }

template <class... Types>
void register_each(StrategyRegistry& registry) {
  (registry.add(std::make_unique<Types>()), ...);
}

}  // namespace simprec::attention
