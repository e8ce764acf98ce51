// The kernel selection of PyTorch's SDPA backends on sm80/sm90 GPUs, as their sources state it
// (used by the engine, the memory estimate and the CLI): which tiles and how many key/value
// splits a shape gets. It turns a configuration whose tiles or splits are automatic (config.hpp,
// Dispatch) into a concrete one for one shape.
//
// torch-flash (aten/src/ATen/native/transformers/cuda/flash_attn): the head dimension is rounded
// up to the kernels' (32, 64, 96, 128). flash_api.cpp's set_params_splitkv asks
// num_splits_heuristic for the splits, with B*H*ceil(Sq/64) blocks against twice the SMs and
// ceil(Sk/block_n) key blocks, block_n = 256 (d <= 64) or 128 (d <= 128). One split runs
// flash_fwd_kernel with 128x128 tiles (d <= 64) or 128x64 (d <= 128, sm90); more run
// flash_fwd_splitkv_kernel with 64 x block_n tiles and the combine kernel. The backward kernels
// take 128x128 (d <= 64) or 64x128 (d <= 128).
//
// torch-efficient (mem_eff_attention, the CUTLASS kernels): forward 64x64 (d <= 64) or 64x128
// (d <= 128), no splits; backward 64x64 (d <= 64) or 128x128 (d <= 128).
#pragma once

#include <cstdint>
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

// config with its automatic tiles, backward tiles and splits made concrete for shape s; throws
// std::invalid_argument when the dispatch has no rule for the shape (a head dimension above 128)
// and something is left automatic, or when the tile is automatic without a dispatch.
AttentionConfig resolve_dispatch(const AttentionConfig& config, const AttentionShape& s);

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
