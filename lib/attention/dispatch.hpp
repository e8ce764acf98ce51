// The kernel selection rules the dispatch strategies share (strategies/dispatch/):
// FlashAttention-2's split heuristic and head dimensions, filling in a configuration's automatic
// tiles and splits, and the tiles and key splits a resolved configuration runs.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <utility>
#include <vector>

#include "lib/attention/config.hpp"
#include "lib/attention/tensors.hpp"

namespace simprec::attention {

// FlashAttention-2's num_splits_heuristic: the fewest splits whose wave efficiency over num_sms
// is within 85% of the best, 1 when the blocks already fill 80% of them; splits that give the
// same blocks per split as one fewer are not eligible.
int flash_num_splits(int64_t batch_nheads_mblocks, int64_t num_sms, int64_t num_n_blocks,
                     int64_t max_splits);

// config with its automatic tiles, backward tiles and splits made concrete for shape s by its
// dispatch strategy; throws std::invalid_argument when the dispatch has no rule for the shape (a
// head dimension above 128) and something is left automatic, or when the tile is automatic without
// a dispatch.
AttentionConfig resolve_dispatch(const AttentionConfig& config, const AttentionShape& s);

// Throws std::invalid_argument when c's tile is automatic (tile=auto, no sram) and its dispatch
// fills in none (dispatch=none): what a run of any shape refuses.
void check_auto_tile(const AttentionConfig& c);

// A kernel's tiles, forward and backward, and its key/value splits.
struct KernelTiles {
  int rows, cols;
};
struct KernelChoice {
  KernelTiles forward, backward;
  int splits;
};
// Fills c's automatic tiles (0x0), backward tiles and splits (0) from choose(hd), hd the kernel's
// head dimension for shape s (flash_kernel_head_dim); throws std::invalid_argument naming
// `dispatch` when something is automatic and the head dimension is above 128.
void fill_automatic(AttentionConfig& c, const AttentionShape& s, std::string_view dispatch,
                    const std::function<KernelChoice(int64_t hd)>& choose);

// The whole problem's batch x heads the dispatch weighs: c.batch_heads, or the run's own.
int64_t dispatch_batch_heads(const AttentionConfig& c, const AttentionShape& s);

// Every strategy of a run's shape made concrete: the SRAM tile (block_order), then the dispatch's
// automatic tiles and splits, then the tile rule.
AttentionConfig resolve_for_shape(const AttentionConfig& config, const AttentionShape& s);

// The head dimension FlashAttention-2's kernels are compiled for: d rounded up to 32, 64, 96,
// 128, 160, 192, 224 or 256; 0 above.
int64_t flash_kernel_head_dim(int64_t d);

// The backward pass's tile: its own, or the forward pass's.
inline std::pair<int64_t, int64_t> backward_tile(const AttentionConfig& c) {
  return c.bwd_block_rows > 0 ? std::pair<int64_t, int64_t>{c.bwd_block_rows, c.bwd_block_cols}
                              : std::pair<int64_t, int64_t>{c.block_rows, c.block_cols};
}

// The key tiles [begin, end) of each of `splits` splits of key_tiles tiles: ceil(key_tiles /
// splits) per split, the last ones possibly empty (flash_fwd_kernel.h's n_blocks_per_split).
std::vector<std::pair<int64_t, int64_t>> split_key_tiles(int64_t key_tiles, int splits);

}  // namespace simprec::attention
