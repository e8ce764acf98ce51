// Slot block_mask: which key blocks a causal flash pass visits and in what order, forward and
// backward. One file per strategy in block_mask/.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "lib/attention/masking.hpp"
#include "lib/attention/strategy.hpp"

namespace simprec::attention {

// FlexAttention's default BLOCK_SIZE: the sparse blocks of its block masks.
inline constexpr int64_t kSparseBlock = 128;

// The blocks of one pass: nq queries and nk keys of head dimension d in tiles of rows x cols.
struct BlockGrid {
  int64_t nq, nk, rows, cols;
  bool causal;
  int64_t d;
  // The problem's masks where they are more than a top-left causal mask (masking.hpp); nullptr:
  // none.
  const Visibility* visibility = nullptr;
  int64_t query_tiles() const { return (nq + rows - 1) / rows; }
  int64_t key_tiles() const { return (nk + cols - 1) / cols; }
  bool masked_beyond_causal() const { return visibility && !visibility->plain(); }
  // Whether key tile `tile` is visible to some query of query tile `qtile` (causal: at or before
  // the diagonal).
  bool visible(int64_t qtile, int64_t tile) const {
    if (masked_beyond_causal()) {
      return visibility->any(qtile * rows, std::min(nq, (qtile + 1) * rows), tile * cols,
                             std::min(nk, (tile + 1) * cols));
    }
    return !causal || tile * cols <= std::min(nq, (qtile + 1) * rows) - 1;
  }
  // The query tiles key tile `tile` is visible to, in increasing order.
  std::vector<int64_t> visible_query_tiles(int64_t tile) const {
    std::vector<int64_t> out;
    for (int64_t qtile = 0; qtile < query_tiles(); ++qtile) {
      if (visible(qtile, tile)) out.push_back(qtile);
    }
    return out;
  }
};

class BlockMask : public Strategy {
 public:
  static constexpr SlotInfo kSlot{"block_mask",
                                  "the key blocks a causal flash pass visits, and their order",
                                  "none", SlotScope::kFlash};
  explicit BlockMask(StrategyInfo info) : Strategy(kSlot, std::move(info)) {}

  // The key tiles the forward pass visits for query rows [i0, i1), in order (before key_order).
  virtual std::vector<int64_t> key_tiles(const BlockGrid& g, int64_t i0, int64_t i1) const = 0;
  // Whether the tile of query rows from i0 and keys from j0 lies in a partial block of the mask
  // (flex_compile=static unfuses those).
  virtual bool partial(const BlockGrid& g, int64_t i0, int64_t j0) const { return false; }
  // The backward pass's (key tile, query tile) pairs in order where the mask fixes them;
  // std::nullopt leaves the order to query_order.
  virtual std::optional<std::vector<std::pair<int64_t, int64_t>>> backward_pairs(
      const BlockGrid& g) const {
    return std::nullopt;
  }
};

}  // namespace simprec::attention
