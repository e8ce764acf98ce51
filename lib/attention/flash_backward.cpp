// FlashAttention-2's backward pass (Dao 2023, Algorithm 2) site by site: D per query row (from
// dO o O, or from dP o P with delta-dpp), then per (key block, query block) pair in
// backward_schedule's order P recomputed from the log-sum-exp, dV += P~^T dO, dP = dO V^T,
// dS = P o (dP - D), dQ += dS~ K and dK += dS~^T Q; dQ and dK scaled at the end.
#include <algorithm>
#include <utility>
#include <vector>

#include "emulation/random.hpp"
#include "lib/attention/dispatch.hpp"
#include "lib/attention/head.hpp"

namespace simprec::attention {
namespace {

// The random stream of split_ties=shuffled (apart from the sites' streams, site.cpp).
constexpr uint64_t kSplitTiesStream = 0x7135000000000000ULL;

}  // namespace

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
  const bool base2 = e_.cfg.lse_impl == LseImpl::kLog2 && is_exp2_scaled(e_.bwd_exp_impl);
  for (int64_t i = 0; i < nq; ++i) {
    if (!base2) {
      shift[i] = shift_from_lse(lse_[i], i);
      continue;
    }
    const double lse2 = lse2_.empty() ? base2_lse(lse_[i], i) : lse2_[i];
    shift[i] = RowShift{lse2 == -kInf ? 0.0 : lse2, true, e_.bwd_exp_impl};
  }
  // Preprocess: D per query row.
  if (e_.cfg.delta_mode == DeltaMode::kFromOutput) {
    for (int64_t i = 0; i < nq; ++i) delta_[i] = delta_from_output(i);
  } else {
    std::fill(delta_, delta_ + nq, 0.0);
    int64_t tile = 0;
    for (int64_t j0 = 0; j0 < nk; j0 += bc_max, ++tile) {
      const int64_t j1 = std::min(nk, j0 + bc_max), bc = j1 - j0;
      for (int64_t i0 = 0; i0 < nq; i0 += br_max) {
        const int64_t i1 = std::min(nq, i0 + br_max), br = i1 - i0;
        if (e_.cfg.causal && j0 > i1 - 1) continue;
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
  const bool dq_partials = e_.cfg.dq_mode == DqMode::kBlockPartials;
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
      const bool cast_p = e_.cfg.ds_p == DsProb::kCast;
      for (int64_t i = 0; i < br; ++i) {
        for (int64_t j = 0; j < bc; ++j) {
          const double x = dscore(cast_p ? pc_t[j * br + i] : p[i * bc + j], dp[i * bc + j],
                                  delta_[i0 + i], e_.idx(p_, i0 + i, j0 + j, 0));
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
  for (int64_t x = 0; x < nk * d; ++x) {
    dk_[x] = scaled_grad(Site::kDkAcc, dk_acc[x], e_.idx(p_, x / d, x % d, 1));
  }
  for (int64_t x = 0; x < nk * dv; ++x) {
    dv_[x] = at(Site::kGradOut, dv_acc[x], e_.idx(p_, x / dv, x % dv, 2));
  }
  for (int64_t x = 0; x < nq * d; ++x) {
    dq_[x] = scaled_grad(Site::kDqAcc, dq_acc[x], e_.idx(p_, x / d, x % d, 0));
  }
}

double Head::delta_from_output(int64_t i) const {
  const int64_t dv = s_.dv;
  const double* dorow = do_ + i * dv;
  const double* orow = o_ + i * dv;
  if (e_.cfg.delta_sum == DeltaSum::kSequential) {
    double di = 0.0;
    e_.product(Site::kD).gemm(1, 1, dv, dorow, dv, orow, 1, &di, 1, false, e_.imap(p_, i, 0, 0),
                              trace(Site::kD));
    return di;
  }
  int threads = 1, chunk = 8;
  if (e_.cfg.delta_sum == DeltaSum::kFa2) {
    const int64_t g = dv % 64 == 0 ? 64 : 32;
    threads = static_cast<int>(g / 8);
  } else if (e_.cfg.delta_sum == DeltaSum::kTriton) {
    // The row padded to a power of two; the padding's threads hold zeros.
    int64_t padded = 8;
    while (padded < dv) padded *= 2;
    threads = static_cast<int>(padded / 8);
  } else if (e_.cfg.delta_sum == DeltaSum::kTritonLooped) {
    int64_t padded = 32;
    while (padded < dv) padded *= 2;
    threads = 32;
    chunk = static_cast<int>(padded / 32);
  } else {
    threads = static_cast<int>(std::max<int64_t>(1, backward_tile(e_.cfg).second / 32));
    if (dv % 8 != 0) chunk = 1;
  }
  std::vector<double> partial(threads), a, b;
  for (int t = 0; t < threads; ++t) {
    a.clear();
    b.clear();
    for (int64_t c0 = static_cast<int64_t>(t) * chunk; c0 < dv; c0 += int64_t{threads} * chunk) {
      for (int64_t c = c0; c < std::min(dv, c0 + chunk); ++c) {
        a.push_back(dorow[c]);
        b.push_back(orow[c]);
      }
    }
    partial[t] = 0.0;
    e_.product(Site::kD).gemm(1, 1, static_cast<int64_t>(a.size()), a.data(),
                              static_cast<int64_t>(a.size()), b.data(), 1, &partial[t], 1, false,
                              e_.imap(p_, i, t, 0), trace(Site::kD));
  }
  // Butterfly all-reduce: after each step thread t holds its value plus thread (t ^ offset)'s.
  std::vector<int> offsets;
  for (int o = 1; o < threads; o *= 2) offsets.push_back(o);
  if (e_.cfg.delta_sum != DeltaSum::kMemEff) std::reverse(offsets.begin(), offsets.end());
  std::vector<double> next(threads);
  for (size_t k = 0; k < offsets.size(); ++k) {
    for (int t = 0; t < threads; ++t) {
      next[t] = add_at(Site::kD, partial[t], partial[t ^ offsets[k]],
                       e_.idx(p_, i, t, 1 + static_cast<int64_t>(k)));
    }
    partial.swap(next);
  }
  return partial[0];
}

void Head::recompute_p(int64_t i0, int64_t i1, int64_t j0, int64_t j1, double* s, double* p,
                       const std::vector<RowShift>& shift, int64_t tile) const {
  const int64_t br = i1 - i0, bc = j1 - j0;
  scores(i0, i1, j0, j1, s, tile);
  const bool unfused_exp = unfused_exp_tile(i0, j0);
  for (int64_t i = 0; i < br; ++i) {
    const RowShift row = unfused_exp ? unfused(shift[i0 + i]) : shift[i0 + i];
    for (int64_t j = 0; j < bc; ++j) {
      p[i * bc + j] = prob(s[i * bc + j], row, e_.idx(p_, i0 + i, j0 + j, 4));
    }
  }
}

std::vector<std::pair<int64_t, int64_t>> Head::backward_schedule() const {
  const auto tile_size = backward_tile(e_.cfg);
  const int64_t br_max = tile_size.first, bc_max = tile_size.second;
  const int64_t q_tiles = (s_.nq + br_max - 1) / br_max, k_tiles = (s_.nk + bc_max - 1) / bc_max;
  QueryOrder order = e_.cfg.query_order;
  // PyTorch's split-keys heuristic: enough parallelism and few keys run a single split.
  const int64_t batch_heads = e_.cfg.batch_heads > 0 ? e_.cfg.batch_heads : s_.problems();
  if (order == QueryOrder::kSplitKeys && batch_heads >= 256 && s_.nk <= 2 * bc_max) {
    order = QueryOrder::kAscending;
  }
  struct Step {
    int64_t step, tile, qtile;
  };
  if (e_.cfg.causal && e_.cfg.block_mask == BlockMask::kDiagonalFirst) {
    // The pairs on partial sparse blocks first, then the full ones, each by key tile and then
    // query tile: dQ of a query tile sees its partial key blocks, then its full ones, and dK
    // and dV of a key tile its partial query blocks, then its full ones, each in increasing
    // order (FlexAttention's backward runs the sparse then the full block lists).
    std::vector<std::pair<int64_t, int64_t>> pairs;
    for (const bool partial : {true, false}) {
      for (int64_t tile = 0; tile < k_tiles; ++tile) {
        for (int64_t qtile = 0; qtile < q_tiles; ++qtile) {
          const int64_t i1 = std::min(s_.nq, (qtile + 1) * br_max);
          if (tile * bc_max > i1 - 1) continue;
          if (partial_sparse_block(qtile * br_max / kSparseBlock, tile * bc_max / kSparseBlock) ==
              partial) {
            pairs.emplace_back(tile, qtile);
          }
        }
      }
    }
    return pairs;
  }
  std::vector<Step> steps;
  for (int64_t tile = 0; tile < k_tiles; ++tile) {
    const int64_t j0 = tile * bc_max;
    std::vector<int64_t> visible;
    for (int64_t qtile = 0; qtile < q_tiles; ++qtile) {
      const int64_t i1 = std::min(s_.nq, (qtile + 1) * br_max);
      if (!(e_.cfg.causal && j0 > i1 - 1)) visible.push_back(qtile);
    }
    if (order == QueryOrder::kDescending) std::reverse(visible.begin(), visible.end());
    if (order == QueryOrder::kSplitKeys && !e_.cfg.causal) {
      std::rotate(visible.begin(), visible.begin() + tile % q_tiles, visible.end());
    }
    for (size_t at = 0; at < visible.size(); ++at) {
      steps.push_back({static_cast<int64_t>(at), tile, visible[at]});
    }
  }
  // Split keys run the key blocks side by side, so dQ sees them in the order they reach it, those
  // of one step in split_ties' order (config.hpp, SplitTies). Otherwise the key blocks come one
  // after the other (dQ of a query block sees them in increasing order: FlashAttention-2's order
  // of its atomic adds is left to the hardware).
  if (order == QueryOrder::kSplitKeys) {
    const bool descending = e_.cfg.split_ties == SplitTies::kDescending;
    std::stable_sort(steps.begin(), steps.end(), [descending](const Step& a, const Step& b) {
      if (a.step != b.step) return a.step < b.step;
      return descending ? a.tile > b.tile : a.tile < b.tile;
    });
    if (e_.cfg.split_ties == SplitTies::kShuffled) {
      // Fisher-Yates over each step's run, from the counter-based stream: the same order on
      // every platform and thread count.
      const RandomStream stream{e_.cfg.seed, kSplitTiesStream + static_cast<uint64_t>(p_)};
      uint64_t draw = 0;
      for (size_t a = 0; a < steps.size();) {
        size_t b = a;
        while (b < steps.size() && steps[b].step == steps[a].step) ++b;
        for (size_t n = b - a; n > 1; --n) {
          std::swap(steps[a + n - 1], steps[a + random_bits(stream, draw++) % n]);
        }
        a = b;
      }
    }
  }
  std::vector<std::pair<int64_t, int64_t>> pairs;
  pairs.reserve(steps.size());
  for (const Step& x : steps) pairs.emplace_back(x.tile, x.qtile);
  return pairs;
}

}  // namespace simprec::attention
