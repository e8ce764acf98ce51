// FlashAttention-1's forward pass (Dao et al. 2022, Algorithm 1) site by site: for every key/value
// tile, each query row's tile-local max m~, P~ = exp(S - m~), l~ = rowsum(P~) and P~V; then the
// row's max, sum and output are renormalised and written back (flash_state=normalised):
//   m_new = max(m, m~),  a = exp(m - m_new),  b = exp(m~ - m_new)            (scaled maxima)
//   l_new = (l a) + (b l~),  O = ((l a) O + b (P~V)) / l_new.
// Unlike FlashAttention-2, O is a normalised output after every tile, so each tile adds the
// roundings of a division and of two rescales to every element of O: this is the algorithm whose
// low-precision deviation paper B ("Is Flash Attention Stable?") measured.
#include <algorithm>
#include <cmath>
#include <vector>

#include "lib/attention/head.hpp"

namespace simprec::attention {
void Head::forward_flash_normalised() {
  const int64_t nq = s_.nq, nk = s_.nk, dv = s_.dv;
  const int64_t br_max = e_.cfg.block_rows, bc_max = e_.cfg.block_cols;
  std::vector<double> s(br_max * bc_max), pt(br_max * bc_max), pv(br_max * dv);
  std::vector<double> m(br_max), l(br_max), o(br_max * dv), m_tile(br_max), l_tile(br_max);
  std::vector<RowShift> shift(br_max), shift_tile(br_max);
  const BlockGrid grid = forward_grid();
  // exp(x - y) of two row shifts: their difference rounded at exp_arg (in double for exact),
  // then exp or exp2 rounded at o_rescale.
  const auto exp_of_difference = [&](const RowShift& x, const RowShift& y, int64_t gi, int64_t col,
                                     int64_t tile) {
    const double arg = x.impl->has_tag("exact") ? x.offset - y.offset
                                                : add_at(Site::kExpArg, x.offset, -y.offset,
                                                         idx(gi, col, 12 + 2 * tile));
    return exp_rounded(Site::kORescale, arg, idx(gi, col, 4 * tile), x.impl->base2());
  };
  for (int64_t i0 = 0; i0 < nq; i0 += br_max) {
    const int64_t i1 = std::min(nq, i0 + br_max), br = i1 - i0;
    std::fill(m.begin(), m.end(), -kInf);
    std::fill(l.begin(), l.end(), 0.0);
    std::fill(o.begin(), o.end(), 0.0);
    std::fill(shift.begin(), shift.end(), RowShift{});
    int64_t tile = 0;
    for (int64_t j0 = 0; j0 < nk; j0 += bc_max, ++tile) {
      const int64_t j1 = std::min(nk, j0 + bc_max), bc = j1 - j0;
      if (!grid.visible(i0 / br_max, tile)) continue;
      scores(i0, i1, j0, j1, s.data(), tile);
      for (int64_t i = 0; i < br; ++i) {
        const int64_t gi = i0 + i;
        const double* srow = s.data() + i * bc;
        double* prow = pt.data() + i * bc;
        m_tile[i] = block_max(srow, bc);
        if (m_tile[i] == -kInf) {  // every key of this tile masked for this row
          std::fill(prow, prow + bc, 0.0);
          continue;
        }
        shift_tile[i] = shift_from_max(m_tile[i], gi);
        for (int64_t j = 0; j < bc; ++j)
          prow[j] = prob(srow[j], shift_tile[i], idx(gi, j0 + j, 10));
        l_tile[i] =
            e_.product(Site::kRowsum)
                .sum(prow, bc, 0.0, idx(gi, 0, 3 + tile * (bc_max + 1)), trace(Site::kRowsum));
        for (int64_t j = 0; j < bc; ++j) prow[j] = cast_p(prow[j], gi, j0 + j);
      }
      e_.product(Site::kPvAcc)
          .gemm(br, dv, bc, pt.data(), bc, v_ + j0 * dv, dv, pv.data(), dv, false,
                e_.imap(p_, i0, 0, tile * (bc_max + 1)), trace(Site::kPvAcc), nullptr,
                f32(v32_, j0 * dv));
      for (int64_t i = 0; i < br; ++i) {
        if (m_tile[i] == -kInf) continue;
        const int64_t gi = i0 + i;
        const bool tile_raises = m[i] == -kInf || m_tile[i] > m[i];
        const RowShift& shift_new = tile_raises ? shift_tile[i] : shift[i];
        // a = exp(m - m_new) is 0 before the row's first visible key: l and O are still 0.
        const double a = m[i] == -kInf ? 0.0 : exp_of_difference(shift[i], shift_new, gi, 0, tile);
        const double b = exp_of_difference(shift_tile[i], shift_new, gi, 1, tile);
        const double la = mul_at(Site::kORescale, l[i], a, idx(gi, 0, 4 * tile + 3));
        const double lb = mul_at(Site::kORescale, b, l_tile[i], idx(gi, 1, 4 * tile + 3));
        const double l_new = add_at(Site::kOUpdate, la, lb, idx(gi, dv, tile));
        double* orow = o.data() + i * dv;
        const double* pvrow = pv.data() + i * dv;
        for (int64_t c = 0; c < dv; ++c) {
          const double kept = mul_at(Site::kORescale, la, orow[c], idx(gi, c, 4 * tile + 1));
          const double added = mul_at(Site::kORescale, b, pvrow[c], idx(gi, c, 4 * tile + 2));
          const double sum = add_at(Site::kOUpdate, kept, added, idx(gi, c, tile));
          orow[c] = divf_at(Site::kONorm, sum, l_new, idx(gi, c, tile));
        }
        l[i] = l_new;
        m[i] = tile_raises ? m_tile[i] : m[i];
        shift[i] = shift_new;
      }
    }
    for (int64_t i = 0; i < br; ++i) {
      const int64_t gi = i0 + i;
      probe_o(gi, o.data() + i * dv, false);
      for (int64_t c = 0; c < dv; ++c) {
        o_[gi * dv + c] = at(Site::kOOut, o[i * dv + c], idx(gi, c, 0));
      }
      probe_o(gi, o_ + gi * dv, true);
      if (row_sum_) row_sum_[gi] = l[i];
      RowProbe* probe = probe_for(gi);
      const ProbeCapture capture(probe, probe ? &probe->lse_steps : nullptr);
      lse_[gi] = e_.cfg.lse_impl->lse(*this, LseInput{m[i], shift[i], l[i], gi});
      if (probe) {
        probe->l = l[i];
        probe->lse = lse_[gi];
      }
    }
  }
}

}  // namespace simprec::attention
