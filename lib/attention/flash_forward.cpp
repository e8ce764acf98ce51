// FlashAttention-2's forward pass (Dao 2023, Algorithm 1) site by site: query tiles of
// block_rows rows against key/value tiles of block_cols keys (in block_mask's, then key_order's
// order), the softmax online (online_softmax.hpp), P.V accumulated across key tiles (pv_mode
// fused) or per tile and added at o_update (per-block) or in chains of pv_promote key blocks added
// to O at o_update (two-level), then O normalised by l at o_norm (norm) and cast at o_out. With
// kv_splits > 1 each split of the key tiles runs that loop on its own, writes its normalised O
// (o_norm) and its LSE, and a combine step merges them (combine_splits).
#include <algorithm>
#include <bit>
#include <vector>

#include "lib/attention/dispatch.hpp"
#include "lib/attention/head.hpp"
#include "lib/attention/lane_reduction.hpp"
#include "lib/attention/online_softmax.hpp"

namespace simprec::attention {

void Head::forward_flash() {
  const int64_t nq = s_.nq, nk = s_.nk, dv = s_.dv;
  const int64_t br_max = e_.cfg.block_rows, bc_max = e_.cfg.block_cols;
  const int64_t tile_count = (nk + bc_max - 1) / bc_max;
  const auto splits = split_key_tiles(tile_count, e_.cfg.kv_splits);
  std::vector<double> s(br_max * bc_max), pt(br_max * bc_max), block(br_max * dv), acc, chain;
  // Per split: its normalised O rows and its LSE per row (-inf where it saw no key).
  std::vector<double> split_o(splits.size() > 1 ? splits.size() * br_max * dv : 0);
  std::vector<double> split_lse(splits.size() > 1 ? splits.size() * br_max : 0);
  OnlineSoftmax softmax(*this);
  // Two-level accumulation: the pv_acc chain of the current group of `promote` key blocks.
  const int64_t promote = e_.cfg.pv_promote_blocks;
  const bool base2_lse = e_.cfg.lse_impl->base2();
  if (base2_lse) lse2_.assign(nq, 0.0);
  const BlockGrid grid = forward_grid();
  // The online softmax of query rows [i0, i1) over key tiles [t0, t1) (in key_tiles' order,
  // reversed for key_order=descending), into acc.
  const auto run_key_tiles = [&](int64_t i0, int64_t i1, int64_t t0, int64_t t1) {
    const int64_t br = i1 - i0;
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
    std::vector<int64_t> order;
    for (const int64_t tile : e_.cfg.block_mask->key_tiles(grid, i0, i1)) {
      if (tile >= t0 && tile < t1) order.push_back(tile);
    }
    e_.cfg.key_order->order(order);
    int64_t tile_end = t0;  // one past the last tile visited: the final promotion's index
    for (const int64_t tile : order) {
      tile_end = tile + 1;
      const int64_t j0 = tile * bc_max, j1 = std::min(nk, j0 + bc_max), bc = j1 - j0;
      scores(i0, i1, j0, j1, s.data(), tile);
      const bool unfused_exp = e_.cfg.flex_compile->unfused(e_.cfg, grid, i0, j0);
      for (int64_t i = 0; i < br; ++i) {
        softmax.add_block_row(i, s.data() + i * bc, j0, bc, tile, acc.data() + i * dv,
                              promote > 0 ? chain.data() + i * dv : nullptr, pt.data() + i * bc,
                              unfused_exp);
      }
      const double* vt = v_ + j0 * dv;
      if (e_.cfg.pv_mode->fused()) {
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
      if (probe_ && probe_->active && probe_->row >= i0 && probe_->row < i1) [[unlikely]] {
        const double* row = acc.data() + (probe_->row - i0) * dv;
        probe_->blocks.back().acc.assign(row, row + dv);
      }
    }
    if (chain_open) promote_chain(tile_end);
    if (e_.cfg.p_scale != 1.0) {  // P was cast times p_scale
      for (int64_t x = 0; x < br * dv; ++x) {
        acc[x] =
            mul_at(Site::kONorm, acc[x], 1.0 / e_.cfg.p_scale, e_.idx(p_, i0 + x / dv, x % dv, 2));
      }
    }
  };
  // Block row i's (query row gi's) O normalised by its row sum l at o_norm, into out[0, dv).
  const auto normalise = [&](int64_t i, int64_t gi, double li, double* out) {
    e_.cfg.norm->normalise(*this, acc.data() + i * dv, li, out, gi, dv);
  };
  for (int64_t i0 = 0; i0 < nq; i0 += br_max) {
    const int64_t i1 = std::min(nq, i0 + br_max), br = i1 - i0;
    if (splits.size() == 1) {
      run_key_tiles(i0, i1, 0, tile_count);
      for (int64_t i = 0; i < br; ++i) {
        const int64_t gi = i0 + i;
        const double li = softmax.row_sum(i);
        if (row_sum_) row_sum_[gi] = li;
        normalise(i, gi, li, o_ + gi * dv);
        probe_o(gi, o_ + gi * dv, false);
        for (int64_t c = 0; c < dv; ++c) {
          o_[gi * dv + c] = at(Site::kOOut, o_[gi * dv + c], e_.idx(p_, gi, c, 0));
        }
        probe_o(gi, o_ + gi * dv, true);
        if (RowProbe* probe = probe_for(gi)) [[unlikely]] {
          const ProbeCapture capture(probe, &probe->lse_steps);
          probe->l = li;
          lse_[gi] = probe->lse = softmax.log_sum_exp(i, li);
        } else {
          lse_[gi] = softmax.log_sum_exp(i, li);
        }
        if (base2_lse) lse2_[gi] = softmax.log2_sum_exp(i, li);
      }
      continue;
    }
    for (size_t sp = 0; sp < splits.size(); ++sp) {
      double* o_part = split_o.data() + sp * br_max * dv;
      double* lse_part = split_lse.data() + sp * br_max;
      if (probe_) probe_->split = static_cast<int64_t>(sp);
      run_key_tiles(i0, i1, splits[sp].first, splits[sp].second);
      for (int64_t i = 0; i < br; ++i) {
        const int64_t gi = i0 + i;
        // A row that saw no key of the split: O = 0 and LSE = -inf (flash_fwd_kernel.h).
        const double li = splits[sp].first < splits[sp].second ? softmax.row_sum(i) : 0.0;
        if (li == 0.0) {
          std::fill_n(o_part + i * dv, dv, 0.0);
          lse_part[i] = -kInf;
          continue;
        }
        normalise(i, gi, li, o_part + i * dv);
        lse_part[i] = softmax.log_sum_exp(i, li);
      }
    }
    for (int64_t i = 0; i < br; ++i) {
      combine_splits(i0 + i, static_cast<int64_t>(splits.size()), split_o.data() + i * dv,
                     br_max * dv, split_lse.data() + i, br_max);
    }
  }
}

void Head::combine_splits(int64_t gi, int64_t splits, const double* o_part, int64_t o_stride,
                          const double* lse_part, int64_t lse_stride) {
  const int64_t dv = s_.dv;
  const auto lse_of = [&](int64_t sp) { return sp < splits ? lse_part[sp * lse_stride] : -kInf; };
  double lse_max = -kInf;
  for (int64_t sp = 0; sp < splits; ++sp) lse_max = std::max(lse_max, lse_of(sp));
  if (lse_max == -kInf) lse_max = 0.0;
  // exp(lse - lse_max) per split, summed as the combine kernel's threads do: thread r of
  // `lanes` takes splits r, r + lanes, ... in order, then a butterfly all-reduce with offsets
  // lanes/2, ..., 1. lanes = min(128 / kBlockM, the splits rounded up to a power of 2 >= 2),
  // kBlockM = 4, 8 or 16 rows as the kernel's head dimension is a multiple of 128, of 64, or not.
  const int64_t hd = flash_kernel_head_dim(std::max(s_.d, dv));
  const int64_t rows_per_block = hd % 128 == 0 ? 4 : hd % 64 == 0 ? 8 : 16;
  const int64_t max_splits = std::max<int64_t>(2, std::bit_ceil(static_cast<uint64_t>(splits)));
  const int lanes = static_cast<int>(std::min(128 / rows_per_block, max_splits));
  const LaneReduction reduction(lanes, 1, LaneReduction::offsets_down(lanes), true);
  const auto split_exp = [&](int64_t sp, double shift, int64_t step) {
    const double lse = lse_of(sp);
    if (lse == -kInf) return 0.0;
    const double arg = add_at(Site::kLse, lse, -shift, e_.idx(p_, gi, sp, step));
    return expf_at(Site::kLse, arg, e_.idx(p_, gi, sp, step + 1));
  };
  // Each thread starts from its first term and adds the others.
  std::vector<double> lane(lanes);
  std::vector<int64_t> mine;
  for (int r = 0; r < lanes; ++r) {
    mine.clear();
    reduction.elements(r, max_splits, mine);
    for (const int64_t sp : mine) {
      const double term = split_exp(sp, lse_max, 2);
      lane[r] = sp == r ? term : add_at(Site::kLse, lane[r], term, e_.idx(p_, gi, sp, 4));
    }
  }
  const double sum = reduction.combine(lane, [&](double x, double y, int r, int step) {
    return add_at(Site::kLse, x, y, e_.idx(p_, gi, r, 5 + reduction.offset(step)));
  });
  const double lse = sum == 0.0 || sum != sum
                         ? kInf
                         : add_at(Site::kLse, logf_at(Site::kLse, sum, e_.idx(p_, gi, 0, 6)),
                                  lse_max, e_.idx(p_, gi, 0, 7));
  lse_[gi] = lse;
  // O = sum over the splits, in order, of exp(lse_split - lse) * O_split, each term one fused
  // multiply-add rounded at o_norm; then the cast at o_out.
  std::vector<double> o(dv, 0.0);
  for (int64_t sp = 0; sp < splits; ++sp) {
    const double scale = split_exp(sp, lse, 8);
    for (int64_t c = 0; c < dv; ++c) {
      o[c] = fma_at(Site::kONorm, scale, o_part[sp * o_stride + c], o[c], e_.idx(p_, gi, c, 2));
    }
  }
  probe_o(gi, o.data(), false);
  for (int64_t c = 0; c < dv; ++c) o_[gi * dv + c] = at(Site::kOOut, o[c], e_.idx(p_, gi, c, 0));
  probe_o(gi, o_ + gi * dv, true);
  if (RowProbe* probe = probe_for(gi)) probe->lse = lse;
}

BlockGrid Head::forward_grid() const {
  return {s_.nq, s_.nk, e_.cfg.block_rows, e_.cfg.block_cols, e_.cfg.causal, s_.d, &visible_};
}

}  // namespace simprec::attention
