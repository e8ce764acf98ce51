// FlashAttention-2's backward pass (Dao 2023, Algorithm 2) site by site: D per query row (from
// dO o O in delta_sum's order, or from dP o P with delta=dpp), then per (key block, query block)
// pair in the block mask's or query_order's order P recomputed from the log-sum-exp,
// dV += P~^T dO, dP = dO V^T, dS = P o (dP - D), dQ += dS~ K and dK += dS~^T Q; dQ and dK scaled
// at the end (grad_scale).
#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "lib/attention/dispatch.hpp"
#include "lib/attention/head.hpp"
#include "lib/attention/lane_reduction.hpp"

namespace simprec::attention {

void Head::backward_flash() {
  const int64_t nq = s_.nq, nk = s_.nk, d = s_.d, dv = s_.dv;
  const auto tile_size = backward_tile(e_.cfg);
  const int64_t br_max = tile_size.first, bc_max = tile_size.second;
  const std::vector<double> vt = transpose(v_, nk, dv);
  std::vector<double> s(br_max * bc_max), p(br_max * bc_max), pc_t(bc_max * br_max),
      dp(br_max * bc_max), ds(br_max * bc_max), ds_t(bc_max * br_max);
  std::vector<double> dq_acc(nq * d, 0.0), dk_acc, dv_acc;
  std::vector<RowShift> shift(nq);
  // FlexAttention's backward reads the forward's base-2 LSE (a row with every key masked: 0);
  // from a given natural LSE, the base-2 value that reports it.
  const Lse& lse_impl = *e_.cfg.lse_impl;
  const bool base2 = lse_impl.base2() && e_.bwd_exp_impl->has_tag("scaled");
  for (int64_t i = 0; i < nq; ++i) {
    if (!base2) {
      shift[i] = shift_from_lse(lse_[i], i);
      continue;
    }
    const double lse2 = lse2_.empty() ? lse_impl.lse2_of_reported(*this, lse_[i], i) : lse2_[i];
    shift[i] = RowShift{lse2 == -kInf ? 0.0 : lse2, true, e_.bwd_exp_impl};
  }
  // Preprocess: D per query row.
  if (e_.cfg.delta->from_output()) {
    for (int64_t i = 0; i < nq; ++i) delta_[i] = delta_from_output(i);
  } else {
    std::fill(delta_, delta_ + nq, 0.0);
    const BlockGrid grid = backward_grid();
    int64_t tile = 0;
    for (int64_t j0 = 0; j0 < nk; j0 += bc_max, ++tile) {
      const int64_t j1 = std::min(nk, j0 + bc_max), bc = j1 - j0;
      for (int64_t i0 = 0; i0 < nq; i0 += br_max) {
        const int64_t i1 = std::min(nq, i0 + br_max), br = i1 - i0;
        if (!grid.visible(i0 / br_max, tile)) continue;
        recompute_p(i0, i1, j0, j1, s.data(), p.data(), shift, tile);
        e_.product(Site::kDp).gemm(br, bc, dv, do_ + i0 * dv, dv, vt.data() + j0, nk, dp.data(), bc,
                                   false, e_.imap(p_, i0, j0, 0), nullptr);
        for (int64_t i = 0; i < br; ++i) {
          e_.product(Site::kD).gemm(1, 1, bc, dp.data() + i * bc, bc, p.data() + i * bc, 1,
                                    delta_ + i0 + i, 1, true,
                                    e_.imap(p_, i0 + i, 0, tile * (bc_max + 1)), trace(Site::kD));
        }
      }
    }
  }
  dk_acc.assign(nk * d, 0.0);
  dv_acc.assign(nk * dv, 0.0);
  if (dk_chain_ && !dk_chain_->empty()) {  // the previous head of the group's accumulators
    dk_acc = *dk_chain_;
    dv_acc = *dv_chain_;
  }
  const bool dq_partials = e_.cfg.dq->block_partials();
  std::vector<double> dq_part(dq_partials ? br_max * d : 0);
  for (const auto& [tile, qtile] : backward_schedule()) {
    const int64_t j0 = tile * bc_max, j1 = std::min(nk, j0 + bc_max), bc = j1 - j0;
    const int64_t i0 = qtile * br_max, i1 = std::min(nq, i0 + br_max), br = i1 - i0;
    {
      recompute_p(i0, i1, j0, j1, s.data(), p.data(), shift, tile);
      // dV += P~^T dO
      for (int64_t i = 0; i < br; ++i) {
        for (int64_t j = 0; j < bc; ++j) {
          pc_t[j * br + i] = at(Site::kPCastBwd, p[i * bc + j], e_.idx(p_, i0 + i, j0 + j, 0));
        }
      }
      e_.product(Site::kDvAcc)
          .gemm(bc, dv, br, pc_t.data(), br, do_ + i0 * dv, dv, dv_acc.data() + j0 * dv, dv, true,
                e_.imap(p_, j0, 0, qtile * (br_max + 1)), trace(Site::kDvAcc), nullptr,
                f32(do32_, i0 * dv));
      // dP = dO V^T
      e_.product(Site::kDp).gemm(br, bc, dv, do_ + i0 * dv, dv, vt.data() + j0, nk, dp.data(), bc,
                                 false, e_.imap(p_, i0, j0, 0), trace(Site::kDp),
                                 f32(do32_, i0 * dv), f32(vt32_, j0));
      const bool cast_p = e_.cfg.ds_p->cast();
      for (int64_t i = 0; i < br; ++i) {
        for (int64_t j = 0; j < bc; ++j) {
          const double x =
              dscore(cast_p ? pc_t[j * br + i] : p[i * bc + j], dp[i * bc + j], delta_[i0 + i],
                     e_.idx(p_, i0 + i, j0 + j, 0), kept_score(i * bc + j), i0 + i, j0 + j);
          ds[i * bc + j] = x;
          ds_t[j * br + i] = x;
        }
      }
      // dQ += dS~ K (scaled at the end); dK += dS~^T Q. With block partials, the key block's
      // product is chained from zero and then added to dQ with one rounding at dq_acc.
      double* dq_block = dq_acc.data() + i0 * d;
      e_.product(Site::kDqAcc)
          .gemm(br, d, bc, ds.data(), bc, k_ + j0 * d, d, dq_partials ? dq_part.data() : dq_block,
                d, !dq_partials, e_.imap(p_, i0, 0, tile * (bc_max + 1)), trace(Site::kDqAcc),
                nullptr, f32(k32_, j0 * d));
      if (dq_partials) {
        for (int64_t x = 0; x < br * d; ++x) {
          dq_block[x] = add_at(Site::kDqAcc, dq_block[x], dq_part[x],
                               e_.idx(p_, i0 + x / d, x % d, tile * (bc_max + 1) + bc_max));
        }
      }
      e_.product(Site::kDkAcc)
          .gemm(bc, d, br, ds_t.data(), br, q_ + i0 * d, d, dk_acc.data() + j0 * d, d, true,
                e_.imap(p_, j0, 0, qtile * (br_max + 1)), trace(Site::kDkAcc), nullptr,
                f32(q32_, i0 * d));
    }
  }
  if (dk_chain_ && !last_in_chain_) {  // the next head of the group goes on from here
    *dk_chain_ = std::move(dk_acc);
    *dv_chain_ = std::move(dv_acc);
  } else {
    for (int64_t x = 0; x < nk * d; ++x) {
      dk_[x] = scaled_grad(Site::kDkAcc, dk_acc[x], e_.idx(p_, x / d, x % d, 1));
    }
    for (int64_t x = 0; x < nk * dv; ++x) {
      dv_[x] = at(Site::kGradOut, dv_acc[x], e_.idx(p_, x / dv, x % dv, 2));
    }
  }
  for (int64_t x = 0; x < nq * d; ++x) {
    dq_[x] = scaled_grad(Site::kDqAcc, dq_acc[x], e_.idx(p_, x / d, x % d, 0));
  }
}

double Head::delta_from_output(int64_t i) const {
  const int64_t dv = s_.dv;
  const double* dorow = do_ + i * dv;
  const double* orow = o_ + i * dv;
  const ProductSite& d = e_.product(Site::kD);
  const std::optional<LaneReduction> layout =
      e_.cfg.delta_sum->layout(dv, backward_tile(e_.cfg).second);
  if (!layout) {
    double di = 0.0;
    d.gemm(1, 1, dv, dorow, dv, orow, 1, &di, 1, false, e_.imap(p_, i, 0, 0), trace(Site::kD));
    return di;
  }
  // Each thread's columns in order from zero, a dot product at d; then the butterfly.
  std::vector<double> partial(layout->threads()), a, b;
  std::vector<int64_t> columns;
  for (int t = 0; t < layout->threads(); ++t) {
    columns.clear();
    layout->elements(t, dv, columns);
    a.clear();
    b.clear();
    for (const int64_t c : columns) {
      a.push_back(dorow[c]);
      b.push_back(orow[c]);
    }
    const int64_t n = static_cast<int64_t>(a.size());
    d.gemm(1, 1, n, a.data(), n, b.data(), 1, &partial[t], 1, false, e_.imap(p_, i, t, 0),
           trace(Site::kD));
  }
  return layout->combine(partial, [&](double x, double y, int t, int step) {
    return add_at(Site::kD, x, y, e_.idx(p_, i, t, 1 + step));
  });
}

void Head::recompute_p(int64_t i0, int64_t i1, int64_t j0, int64_t j1, double* s, double* p,
                       const std::vector<RowShift>& shift, int64_t tile) const {
  const int64_t br = i1 - i0, bc = j1 - j0;
  scores(i0, i1, j0, j1, s, tile);
  const bool unfused_exp = e_.cfg.flex_compile->unfused(e_.cfg, backward_grid(), i0, j0);
  for (int64_t i = 0; i < br; ++i) {
    const RowShift row = unfused_exp ? unfused(shift[i0 + i]) : shift[i0 + i];
    for (int64_t j = 0; j < bc; ++j) {
      p[i * bc + j] = prob(s[i * bc + j], row, e_.idx(p_, i0 + i, j0 + j, 4));
    }
  }
}

BlockGrid Head::backward_grid() const {
  const auto [rows, cols] = backward_tile(e_.cfg);
  return {s_.nq, s_.nk, rows, cols, e_.cfg.causal, s_.d, &visible_};
}

std::vector<std::pair<int64_t, int64_t>> Head::backward_schedule() const {
  const BlockGrid grid = backward_grid();
  if (auto pairs = e_.cfg.block_mask->backward_pairs(grid)) return std::move(*pairs);
  return e_.cfg.query_order->pairs(*this, grid);
}

}  // namespace simprec::attention
