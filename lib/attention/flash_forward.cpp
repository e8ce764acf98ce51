// FlashAttention-2's forward pass (Dao 2023, Algorithm 1) site by site: query tiles of
// block_rows rows against key/value tiles of block_cols keys (in key_order), the softmax online
// (online_softmax.hpp), P.V accumulated across key tiles (pv_mode fused) or per tile and added
// at o_update (per-block), then O normalised by l at o_norm and cast at o_out. With kv_splits > 1
// each split of the key tiles runs that loop on its own, writes its normalised O (o_norm) and its
// LSE, and a combine step merges them (combine_splits).
#include <algorithm>
#include <bit>
#include <vector>

#include "lib/attention/dispatch.hpp"
#include "lib/attention/head.hpp"
#include "lib/attention/online_softmax.hpp"

namespace simprec::attention {

void Head::forward_flash() {
  const int64_t nq = s_.nq, nk = s_.nk, dv = s_.dv;
  const int64_t br_max = e_.cfg.block_rows, bc_max = e_.cfg.block_cols;
  const int64_t key_tiles = (nk + bc_max - 1) / bc_max;
  const auto splits = split_key_tiles(key_tiles, e_.cfg.kv_splits);
  std::vector<double> s(br_max * bc_max), pt(br_max * bc_max), block(br_max * dv), acc;
  // Per split: its normalised O rows and its LSE per row (-inf where it saw no key).
  std::vector<double> split_o(splits.size() > 1 ? splits.size() * br_max * dv : 0);
  std::vector<double> split_lse(splits.size() > 1 ? splits.size() * br_max : 0);
  OnlineSoftmax softmax(*this);
  // The online softmax of query rows [i0, i1) over key tiles [t0, t1), in key_order, into acc.
  const auto run_key_tiles = [&](int64_t i0, int64_t i1, int64_t t0, int64_t t1) {
    const int64_t br = i1 - i0;
    acc.assign(br * dv, 0.0);
    softmax.start(i0, br);
    const bool descending = e_.cfg.key_order == KeyOrder::kDescending;
    for (int64_t n = 0; n < t1 - t0; ++n) {
      const int64_t tile = descending ? t1 - 1 - n : t0 + n;
      const int64_t j0 = tile * bc_max, j1 = std::min(nk, j0 + bc_max), bc = j1 - j0;
      if (e_.cfg.causal && j0 > i1 - 1) continue;
      scores(i0, i1, j0, j1, s.data(), tile);
      for (int64_t i = 0; i < br; ++i) {
        softmax.add_block_row(i, s.data() + i * bc, j0, bc, tile, acc.data() + i * dv,
                              pt.data() + i * bc);
      }
      const double* vt = v_ + j0 * dv;
      if (e_.cfg.pv_mode == PvMode::kFused) {
        e_.product(Site::kPvAcc)
            .gemm(br, dv, bc, pt.data(), bc, vt, dv, acc.data(), dv, true,
                  e_.imap(p_, i0, 0, tile * (bc_max + 1)), trace(Site::kPvAcc), nullptr,
                  f32(v32_, j0 * dv));
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
  };
  // Block row i's (query row gi's) O normalised by its row sum l at o_norm, into out[0, dv).
  const auto normalise = [&](int64_t i, int64_t gi, double li, double* out) {
    const bool divide = e_.cfg.norm_mode == NormMode::kDivide;
    const double inv = divide ? 0.0 : at(Site::kONorm, 1.0 / li, e_.idx(p_, gi, 0, 0));
    for (int64_t c = 0; c < dv; ++c) {
      out[c] = divide ? div_at(Site::kONorm, acc[i * dv + c], li, e_.idx(p_, gi, c, 1))
                      : mul_at(Site::kONorm, acc[i * dv + c], inv, e_.idx(p_, gi, c, 1));
    }
  };
  for (int64_t i0 = 0; i0 < nq; i0 += br_max) {
    const int64_t i1 = std::min(nq, i0 + br_max), br = i1 - i0;
    if (splits.size() == 1) {
      run_key_tiles(i0, i1, 0, key_tiles);
      for (int64_t i = 0; i < br; ++i) {
        const int64_t gi = i0 + i;
        const double li = softmax.row_sum(i);
        normalise(i, gi, li, o_ + gi * dv);
        for (int64_t c = 0; c < dv; ++c) {
          o_[gi * dv + c] = at(Site::kOOut, o_[gi * dv + c], e_.idx(p_, gi, c, 0));
        }
        lse_[gi] = softmax.log_sum_exp(i, li);
      }
      continue;
    }
    for (size_t sp = 0; sp < splits.size(); ++sp) {
      double* o_part = split_o.data() + sp * br_max * dv;
      double* lse_part = split_lse.data() + sp * br_max;
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
  const int64_t lanes = std::min(128 / rows_per_block, max_splits);
  const auto split_exp = [&](int64_t sp, double shift, int64_t step) {
    const double lse = lse_of(sp);
    if (lse == -kInf) return 0.0;
    const double arg = add_at(Site::kLse, lse, -shift, e_.idx(p_, gi, sp, step));
    return exp_rounded(Site::kLse, arg, e_.idx(p_, gi, sp, step + 1), false);
  };
  std::vector<double> lane(lanes, 0.0), next(lanes);
  for (int64_t r = 0; r < lanes; ++r) {
    for (int64_t sp = r; sp < max_splits; sp += lanes) {
      const double term = split_exp(sp, lse_max, 2);
      lane[r] = sp == r ? term : add_at(Site::kLse, lane[r], term, e_.idx(p_, gi, sp, 4));
    }
  }
  for (int64_t offset = lanes / 2; offset >= 1; offset /= 2) {
    for (int64_t r = 0; r < lanes; ++r) {
      next[r] = add_at(Site::kLse, lane[r], lane[r ^ offset], e_.idx(p_, gi, r, 5 + offset));
    }
    lane.swap(next);
  }
  const double sum = lane[0];
  const double lse = sum == 0.0 || sum != sum
                         ? kInf
                         : add_at(Site::kLse, at(Site::kLse, std::log(sum), e_.idx(p_, gi, 0, 6)),
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
  for (int64_t c = 0; c < dv; ++c) o_[gi * dv + c] = at(Site::kOOut, o[c], e_.idx(p_, gi, c, 0));
}

}  // namespace simprec::attention
