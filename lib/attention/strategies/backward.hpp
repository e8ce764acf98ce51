// The slots of the flash backward pass that choose between its fixed forms: how D is formed, how
// dQ accumulates across key blocks, which P dS multiplies, and the constant that turns the LSE
// into a base-2 shift. Each slot's strategies are in one file: backward.cpp.
#pragma once

#include "lib/attention/strategy.hpp"

namespace simprec::attention {

struct Engine;

class DeltaMode : public Strategy {
 public:
  static constexpr SlotInfo kSlot{"delta", "flash backward's D: rowsum(dO o O) or rowsum(dP o P)",
                                  "output", SlotScope::kFlash, true};
  explicit DeltaMode(StrategyInfo info) : Strategy(kSlot, std::move(info)) {}
  bool from_output() const { return name() == "output"; }
};

class DqMode : public Strategy {
 public:
  static constexpr SlotInfo kSlot{"dq", "how dQ accumulates across key blocks", "chained",
                                  SlotScope::kFlash, true};
  explicit DqMode(StrategyInfo info) : Strategy(kSlot, std::move(info)) {}
  bool block_partials() const { return name() == "block-partials"; }
};

class DsProb : public Strategy {
 public:
  static constexpr SlotInfo kSlot{"ds_p", "the P that dS = P o (dP - D) multiplies", "exp",
                                  SlotScope::kAll, true};
  explicit DsProb(StrategyInfo info) : Strategy(kSlot, std::move(info)) {}
  bool cast() const { return name() == "cast"; }
};

class LseLog2e : public Strategy {
 public:
  static constexpr SlotInfo kSlot{"lse_log2e",
                                  "the constant log2(e) that turns the LSE into the backward "
                                  "pass's base-2 shift",
                                  "exact", SlotScope::kFlash, true};
  explicit LseLog2e(StrategyInfo info) : Strategy(kSlot, std::move(info)) {}
  virtual double log2e(const Engine& e) const = 0;
};

}  // namespace simprec::attention
