// FlashAttention-2's forward pass (Dao 2023, Algorithm 1) site by site: query tiles of
// block_rows rows against key/value tiles of block_cols keys, the softmax online
// (online_softmax.hpp), P.V accumulated across key tiles (pv_mode fused) or per tile and added
// at o_update (per-block) or in chains of pv_promote key blocks added to O at o_update
// (two-level), then O normalised by l at o_norm and cast at o_out.
#include <algorithm>
#include <vector>

#include "lib/attention/head.hpp"
#include "lib/attention/online_softmax.hpp"

namespace simprec::attention {

void Head::forward_flash() {
  const int64_t nq = s_.nq, nk = s_.nk, dv = s_.dv;
  const int64_t br_max = e_.cfg.block_rows, bc_max = e_.cfg.block_cols;
  std::vector<double> s(br_max * bc_max), pt(br_max * bc_max), block(br_max * dv), acc, chain;
  OnlineSoftmax softmax(*this);
  // Two-level accumulation: the pv_acc chain of the current group of `promote` key blocks.
  const int64_t promote = e_.cfg.pv_promote_blocks;
  if (e_.cfg.lse_impl == LseImpl::kLog2) lse2_.assign(nq, 0.0);
  for (int64_t i0 = 0; i0 < nq; i0 += br_max) {
    const int64_t i1 = std::min(nq, i0 + br_max), br = i1 - i0;
    acc.assign(br * dv, 0.0);
    chain.assign(promote > 0 ? br * dv : 0, 0.0);
    bool chain_open = false;  // the chain holds products not yet added to acc
    // The finished chain added to acc at o_update, one rounding per element.
    const auto promote_chain = [&](int64_t tile) {
      for (int64_t x = 0; x < br * dv; ++x) {
        acc[x] = add_at(Site::kOUpdate, acc[x], chain[x], e_.idx(p_, i0 + x / dv, x % dv, tile));
      }
      chain_open = false;
    };
    softmax.start(i0, br);
    int64_t tile_end = 0;  // one past the last tile visited: the final promotion's index
    for (const int64_t tile : key_tiles(i0, i1)) {
      tile_end = tile + 1;
      const int64_t j0 = tile * bc_max, j1 = std::min(nk, j0 + bc_max), bc = j1 - j0;
      scores(i0, i1, j0, j1, s.data(), tile);
      for (int64_t i = 0; i < br; ++i) {
        softmax.add_block_row(i, s.data() + i * bc, j0, bc, tile, acc.data() + i * dv,
                              promote > 0 ? chain.data() + i * dv : nullptr, pt.data() + i * bc);
      }
      const double* vt = v_ + j0 * dv;
      if (e_.cfg.pv_mode == PvMode::kFused) {
        // A group's first product starts from zero, as an MMA without C does.
        const bool first_of_group = promote > 0 && tile % promote == 0;
        double* target = promote > 0 ? chain.data() : acc.data();
        e_.product(Site::kPvAcc)
            .gemm(br, dv, bc, pt.data(), bc, vt, dv, target, dv, !first_of_group,
                  e_.imap(p_, i0, 0, tile * (bc_max + 1)), trace(Site::kPvAcc), nullptr,
                  f32(v32_, j0 * dv));
        chain_open = promote > 0;
        if (promote > 0 && (tile + 1) % promote == 0) promote_chain(tile);
      } else {
        e_.product(Site::kPvAcc)
            .gemm(br, dv, bc, pt.data(), bc, vt, dv, block.data(), dv, false,
                  e_.imap(p_, i0, 0, tile * (bc_max + 1)), trace(Site::kPvAcc), nullptr,
                  f32(v32_, j0 * dv));
        for (int64_t x = 0; x < br * dv; ++x) {
          acc[x] = add_at(Site::kOUpdate, acc[x], block[x], e_.idx(p_, i0 + x / dv, x % dv, tile));
        }
      }
    }
    if (chain_open) promote_chain(tile_end);
    if (e_.cfg.p_scale != 1.0) {  // P was cast times p_scale
      for (int64_t x = 0; x < br * dv; ++x) {
        acc[x] =
            mul_at(Site::kONorm, acc[x], 1.0 / e_.cfg.p_scale, e_.idx(p_, i0 + x / dv, x % dv, 2));
      }
    }
    for (int64_t i = 0; i < br; ++i) {
      const int64_t gi = i0 + i;
      const double li = softmax.row_sum(i);
      if (row_sum_) row_sum_[gi] = li;
      const bool divide = e_.cfg.norm_mode == NormMode::kDivide;
      const double inv = divide ? 0.0 : reciprocal_at(Site::kONorm, li, e_.idx(p_, gi, 0, 0));
      for (int64_t c = 0; c < dv; ++c) {
        const double normalised =
            divide ? div_at(Site::kONorm, acc[i * dv + c], li, e_.idx(p_, gi, c, 1))
                   : mul_at(Site::kONorm, acc[i * dv + c], inv, e_.idx(p_, gi, c, 1));
        o_[gi * dv + c] = at(Site::kOOut, normalised, e_.idx(p_, gi, c, 0));
      }
      lse_[gi] = softmax.log_sum_exp(i, li);
      if (e_.cfg.lse_impl == LseImpl::kLog2) lse2_[gi] = softmax.log2_sum_exp(i, li);
    }
  }
}

std::vector<int64_t> Head::key_tiles(int64_t i0, int64_t i1) const {
  const int64_t bc_max = e_.cfg.block_cols;
  const int64_t tiles = (s_.nk + bc_max - 1) / bc_max;
  std::vector<int64_t> order;
  if (!e_.cfg.causal) {
    for (int64_t t = 0; t < tiles; ++t) order.push_back(t);
    return order;
  }
  // Causal: the tiles up to the diagonal (a tile past it is masked for every row).
  const int64_t last = std::min(tiles - 1, (i1 - 1) / bc_max);
  if (e_.cfg.block_mask == BlockMask::kNone) {
    for (int64_t t = 0; t <= last; ++t) order.push_back(t);
    return order;
  }
  // The partial sparse block (the query tile's own, on the diagonal), then the full ones.
  const int64_t diagonal = i0 / kSparseBlock;
  for (int64_t t = 0; t <= last; ++t) {
    if (t * bc_max / kSparseBlock == diagonal) order.push_back(t);
  }
  for (int64_t t = 0; t <= last; ++t) {
    if (t * bc_max / kSparseBlock < diagonal) order.push_back(t);
  }
  return order;
}

}  // namespace simprec::attention
