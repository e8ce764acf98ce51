// The slots that pick the engine's passes: standard or flash attention, FlashAttention-1's or -2's
// state across key blocks, and how P.V accumulates. The passes enumerate their strategies (a new
// one is a new pass), so each slot's strategies are in one file: passes.cpp.
#pragma once

#include "lib/attention/strategy.hpp"

namespace simprec::attention {

class Algorithm : public Strategy {
 public:
  static constexpr SlotInfo kSlot{"algorithm",
                                  "standard attention (whole rows) or flash attention "
                                  "(key/value blocks)",
                                  "flash", SlotScope::kAll};
  explicit Algorithm(StrategyInfo info) : Strategy(kSlot, std::move(info)) {}
  bool flash() const { return name() == "flash"; }
};

class FlashState : public Strategy {
 public:
  static constexpr SlotInfo kSlot{"flash_state",
                                  "flash attention's state across key/value tiles: unnormalised "
                                  "(FlashAttention-2) or renormalised after every tile "
                                  "(FlashAttention-1)",
                                  "running", SlotScope::kFlash};
  explicit FlashState(StrategyInfo info) : Strategy(kSlot, std::move(info)) {}
  bool normalised() const { return name() == "normalised"; }
};

class PvMode : public Strategy {
 public:
  static constexpr SlotInfo kSlot{"pv_mode", "how P.V accumulates across key/value blocks", "fused",
                                  SlotScope::kFlash};
  explicit PvMode(StrategyInfo info) : Strategy(kSlot, std::move(info)) {}
  bool fused() const { return name() == "fused"; }
};

}  // namespace simprec::attention
