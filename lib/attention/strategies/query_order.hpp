// Slot query_order: the flash backward pass's order over (key block, query block) pairs, which
// fixes the order in which dK and dV accumulate over query blocks and dQ over key blocks. One file
// per strategy in query_order/.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "lib/attention/strategies/block_mask.hpp"
#include "lib/attention/strategy.hpp"

namespace simprec::attention {

class SiteArithmetic;

class QueryOrder : public Strategy {
 public:
  static constexpr SlotInfo kSlot{"query_order",
                                  "the backward pass's order over (key block, query block) pairs",
                                  "ascending", SlotScope::kFlash, true};
  explicit QueryOrder(StrategyInfo info) : Strategy(kSlot, std::move(info)) {}
  // The pairs (key tile, query tile) of problem a's backward pass, in the order they run.
  virtual std::vector<std::pair<int64_t, int64_t>> pairs(const SiteArithmetic& a,
                                                         const BlockGrid& g) const = 0;
};

// A pair of split keys' schedule: the step at which key tile `tile`'s thread block reaches query
// tile `qtile`.
struct SplitStep {
  int64_t step, tile, qtile;
};

// Sorts split keys' steps by step, the key tiles of one step higher first (descending) or lower
// first, keeping each key tile's order of steps.
inline void sort_split_steps(std::vector<SplitStep>& steps, bool descending) {
  std::stable_sort(steps.begin(), steps.end(),
                   [descending](const SplitStep& a, const SplitStep& b) {
                     if (a.step != b.step) return a.step < b.step;
                     return descending ? a.tile > b.tile : a.tile < b.tile;
                   });
}

// Slot split_ties: with query_order=split-keys, the order of the key blocks that reach a query
// block at the same step. One file per strategy in split_ties/.
class SplitTies : public Strategy {
 public:
  static constexpr SlotInfo kSlot{"split_ties",
                                  "with split keys, the order of the key blocks that reach a "
                                  "query block at the same step",
                                  "descending", SlotScope::kFlash, true};
  explicit SplitTies(StrategyInfo info) : Strategy(kSlot, std::move(info)) {}
  // Orders `steps` (in key-tile order, each key tile's steps increasing) by step, and the key
  // tiles of one step as the strategy says; problem p's random stream where it draws.
  virtual void order(std::vector<SplitStep>& steps, uint64_t seed, int64_t p) const = 0;
};

}  // namespace simprec::attention
