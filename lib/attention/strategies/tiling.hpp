// The slots that choose the tiles and splits of a run from its shape: whose kernel selection
// fills in what the configuration leaves automatic (dispatch), a tile rule by head dimension
// (tile_rule), and FlashAttention-1's rule from an SRAM size (block_order). One file per strategy
// in dispatch/, tile_rule/ and block_order/.
#pragma once

#include <cstdint>
#include <utility>

#include "lib/attention/strategy.hpp"

namespace simprec::attention {

struct AttentionConfig;
struct AttentionShape;

class Dispatch : public Strategy {
 public:
  static constexpr SlotInfo kSlot{"dispatch",
                                  "whose kernel selection fills in tile=auto, bwd_tile=auto and "
                                  "kv_splits=auto from the shape",
                                  "none", SlotScope::kFlash};
  explicit Dispatch(StrategyInfo info) : Strategy(kSlot, std::move(info)) {}
  // Makes c's automatic tiles and splits concrete for shape s; throws std::invalid_argument
  // where the selection has no rule for the shape.
  virtual void resolve(AttentionConfig& c, const AttentionShape& s) const = 0;
  // With query_order=split-keys: whether the selected backward kernel splits the keys (runs a
  // thread block per key block side by side) for c, whose tiles are concrete.
  virtual bool splits_keys(const AttentionConfig& c, const AttentionShape& s) const { return true; }
  // Whether the selection fills in tile=auto; resolve refuses it where not.
  virtual bool fills_auto_tile() const { return true; }
  // Whether the forward pass of single-query grouped-query attention runs each key/value head's
  // group of query heads as the rows of one problem (FlashAttention-2's seqlenq_ngroups_swapped,
  // which PyTorch's flash backend inherits), so that the dispatch sees those rows.
  virtual bool swaps_query_groups() const { return false; }
};

class TileRule : public Strategy {
 public:
  static constexpr SlotInfo kSlot{"tile_rule", "the tile as a function of the shape", "fixed",
                                  SlotScope::kFlash};
  explicit TileRule(StrategyInfo info) : Strategy(kSlot, std::move(info)) {}
  // Sets c's tile for nq queries of head dimension d.
  virtual void resolve(AttentionConfig& c, int64_t nq, int64_t d) const = 0;
  // Whether resolve leaves the tile as given, whatever the shape.
  virtual bool keeps_tile() const { return false; }
};

class BlockOrder : public Strategy {
 public:
  static constexpr SlotInfo kSlot{"block_order",
                                  "where FlashAttention-1's two tile sizes for an SRAM size go",
                                  "paper", SlotScope::kFlash};
  explicit BlockOrder(StrategyInfo info) : Strategy(kSlot, std::move(info)) {}
  // (rows, cols) from c = ceil(M / 4d) (`wide`) and min(c, d) (`narrow`).
  virtual std::pair<int64_t, int64_t> tile(int64_t wide, int64_t narrow) const = 0;
};

}  // namespace simprec::attention
