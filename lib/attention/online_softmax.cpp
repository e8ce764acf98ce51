#include "lib/attention/online_softmax.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace simprec::attention {

OnlineSoftmax::OnlineSoftmax(const SiteArithmetic& arithmetic)
    : a_(arithmetic),
      e_(arithmetic.engine()),
      shift_(e_.cfg.block_rows),
      terms_(e_.cfg.block_cols) {}

void OnlineSoftmax::start(int64_t i0, int64_t br) {
  i0_ = i0;
  m_.assign(br, -kInf);
  l_.assign(br * e_.lanes, 0.0);
}

void OnlineSoftmax::add_block_row(int64_t i, const double* srow, int64_t j0, int64_t bc,
                                  int64_t tile, double* orow, double* chain, double* prow,
                                  bool unfused_exp) {
  const int64_t gi = i0_ + i;
  const double m_block = a_.block_max(srow, bc);
  double m_new = std::max(m_[i], m_block);
  if (m_new == -kInf) {  // every key of this block masked
    for (int64_t j = 0; j < bc; ++j) prow[j] = 0;
    return;
  }
  // Lazy rescaling keeps the max in use while the growth, in log2 units, is within the threshold.
  if (e_.cfg.lazy_rescale > 0 && m_[i] != -kInf &&
      (m_new - m_[i]) * e_.scale * std::numbers::log2e <= e_.cfg.lazy_rescale) {
    m_new = m_[i];
  }
  const RowShift next_shift = a_.shift_from_max(m_new, gi);
  double alpha = 1.0;
  // exp2-shift-fma's argument is not zero when the max stays (the rounding error of m*c).
  const bool grows = m_new != m_[i] || e_.cfg.rescale == RescaleImpl::kExp2ShiftFma;
  if (m_[i] != -kInf && grows) alpha = rescale(i, m_new, next_shift, tile, orow, chain);
  m_[i] = m_new;
  shift_[i] = next_shift;
  const RowShift shift = unfused_exp ? unfused(shift_[i]) : shift_[i];
  for (int64_t j = 0; j < bc; ++j) prow[j] = a_.prob(srow[j], shift, a_.idx(gi, j0 + j, 10));
  double* li = l_.data() + i * e_.lanes;
  const uint64_t si = a_.idx(gi, 0, 3 + tile * (e_.cfg.block_cols + 1));
  if (e_.lanes > 1) {
    add_to_lanes(prow, bc, alpha, li, gi, tile);
  } else if (e_.cfg.rowsum_block == RowsumBlock::kWarpGroups) {
    add_warp_groups(prow, bc, li, gi, tile);
  } else if (e_.cfg.rowsum_block == RowsumBlock::kQuadFma) {
    add_quad_fma(prow, bc, alpha, li, gi, tile);
  } else if (e_.cfg.pv_mode == PvMode::kFused) {
    li[0] = e_.product(Site::kRowsum).sum(prow, bc, li[0], si, a_.trace(Site::kRowsum));
  } else {  // the block's sum rounded, then added to l like the block's P.V to O
    const double block_sum =
        e_.product(Site::kRowsum).sum(prow, bc, 0.0, si, a_.trace(Site::kRowsum));
    li[0] = a_.add_at(Site::kOUpdate, li[0], block_sum, a_.idx(gi, e_.shape.dv, tile));
  }
  // p_scale is a power of two: the product is exact.
  const double p_scale = e_.cfg.p_scale;
  for (int64_t j = 0; j < bc; ++j) prow[j] = a_.cast_p(prow[j] * p_scale, gi, j0 + j);
}

double OnlineSoftmax::rescale(int64_t i, double m_new, const RowShift& next_shift, int64_t tile,
                              double* orow, double* chain) {
  const int64_t gi = i0_ + i, dv = e_.shape.dv;
  const uint64_t ri = a_.idx(gi, 0, tile * (dv + 3));
  double alpha;
  if (e_.cfg.rescale == RescaleImpl::kExact) {
    alpha = a_.exp_rounded(Site::kORescale, e_.scale * (m_[i] - m_new), ri, false);
  } else if (e_.cfg.rescale == RescaleImpl::kExp2Diff) {
    const double diff = a_.add_at(Site::kORescale, m_[i], -m_new, ri + dv + 2);
    const double arg =
        a_.mul_at(Site::kORescale, diff, e_.scale_log2, a_.idx(gi, 1, tile * (dv + 3) + dv + 2));
    alpha = a_.exp2_at(Site::kORescale, arg, ri);
  } else if (e_.cfg.rescale == RescaleImpl::kExp2ShiftFma) {
    // fma(-c, m_new, shift_old): m_new*c exactly, subtracted from the old shift, one rounding.
    const double arg =
        a_.fma_at(Site::kORescale, -m_new, e_.scale_log2, shift_[i].offset, ri + dv + 2);
    alpha = a_.exp2_at(Site::kORescale, arg, ri);
  } else {
    const double arg =
        a_.add_at(Site::kORescale, shift_[i].offset, -next_shift.offset, ri + dv + 2);
    alpha = a_.exp2_at(Site::kORescale, arg, ri);
  }
  double* li = l_.data() + i * e_.lanes;
  // quad-fma and rowsum_rescale=fma fuse alpha into l's update.
  if (e_.cfg.rowsum_block != RowsumBlock::kQuadFma &&
      !(e_.lanes > 1 && e_.cfg.rowsum_rescale == RowsumRescale::kFma)) {
    for (int t = 0; t < e_.lanes; ++t)
      li[t] = a_.mul_at(Site::kORescale, li[t], alpha, a_.idx(gi, t, tile * (dv + 3) + 1));
  }
  for (int64_t c = 0; c < dv; ++c) orow[c] = a_.mul_at(Site::kORescale, orow[c], alpha, ri + 2 + c);
  if (chain != nullptr) {
    // Column 4 of the row: the lanes' rescales use columns 0 to 3 (Engine sizes cols_max for it).
    const uint64_t chain_index = a_.idx(gi, 4, tile * (dv + 3) + 2);
    for (int64_t c = 0; c < dv; ++c) {
      chain[c] = a_.mul_at(Site::kORescale, chain[c], alpha, chain_index + c);
    }
  }
  return alpha;
}

void OnlineSoftmax::add_to_lanes(const double* prow, int64_t bc, double alpha, double* partial,
                                 int64_t gi, int64_t tile) {
  const uint64_t step = 3 + tile * (e_.cfg.block_cols + 1);
  const bool fused = e_.cfg.rowsum_rescale == RowsumRescale::kFma;
  for (int t = 0; t < 4; ++t) {
    if (!fused) {  // alpha already applied by rescale()
      partial[t] = lane_sum(prow, 2 * t, bc, 8, partial[t], a_.idx(gi, t, step));
      continue;
    }
    // Lane t's first term is column 2t: fma(l, alpha, p) in place of l * alpha, then + p; its
    // random bits are those rescale() would have used for l * alpha. A lane the block gives no
    // term (bc <= 2t) still takes alpha: its padded column's p is 0.
    const bool has_term = 2 * t < bc;
    const double start = a_.fma_at(Site::kRowsum, partial[t], alpha, has_term ? prow[2 * t] : 0.0,
                                   a_.idx(gi, t, tile * (e_.shape.dv + 3) + 1));
    partial[t] = lane_sum(prow, 2 * t, bc, 8, start, a_.idx(gi, t, step), has_term ? 1 : 0);
  }
}

double OnlineSoftmax::lane_sum(const double* prow, int64_t first, int64_t end, int64_t stride,
                               double start, uint64_t index, int64_t skip) {
  int64_t n = 0;
  for (int64_t j = first; j < end; j += stride) {
    terms_[n++] = prow[j];
    if (j + 1 < end) terms_[n++] = prow[j + 1];
  }
  return e_.product(Site::kRowsum)
      .sum(terms_.data() + skip, n - skip, start, index, a_.trace(Site::kRowsum));
}

void OnlineSoftmax::add_warp_groups(const double* prow, int64_t bc, double* l, int64_t gi,
                                    int64_t tile) {
  const uint64_t step = 3 + tile * (e_.cfg.block_cols + 1);
  for (int64_t g0 = 0; g0 < bc; g0 += 32) {
    const int64_t g1 = std::min(bc, g0 + 32);
    double lane[4];
    for (int t = 0; t < 4; ++t) {
      lane[t] = lane_sum(prow, g0 + 2 * t, g1, 8, 0.0, a_.idx(gi, g0 + t, step));
    }
    const double low = a_.add_at(Site::kRowsum, lane[0], lane[1], a_.idx(gi, g0 + 4, step));
    const double high = a_.add_at(Site::kRowsum, lane[2], lane[3], a_.idx(gi, g0 + 5, step));
    const double group = a_.add_at(Site::kRowsum, low, high, a_.idx(gi, g0 + 6, step));
    l[0] = a_.add_at(Site::kRowsum, l[0], group, a_.idx(gi, g0 + 7, step));
  }
}

void OnlineSoftmax::add_quad_fma(const double* prow, int64_t bc, double alpha, double* l,
                                 int64_t gi, int64_t tile) {
  const uint64_t step = 3 + tile * (e_.cfg.block_cols + 1);
  const int warps = e_.cfg.rowsum_warps;
  double block = 0.0;
  for (int w = 0; w < warps; ++w) {
    double lane[4];
    for (int t = 0; t < 4; ++t) {
      lane[t] = lane_sum(prow, 8 * w + 2 * t, bc, 8 * warps, 0.0, a_.idx(gi, 8 * w + t, step));
    }
    const double even = a_.add_at(Site::kRowsum, lane[0], lane[2], a_.idx(gi, 8 * w + 4, step));
    const double odd = a_.add_at(Site::kRowsum, lane[1], lane[3], a_.idx(gi, 8 * w + 5, step));
    const double sum = a_.add_at(Site::kRowsum, even, odd, a_.idx(gi, 8 * w + 6, step));
    block = w == 0 ? sum : a_.add_at(Site::kRowsum, block, sum, a_.idx(gi, 16, step));
  }
  l[0] = a_.fma_at(Site::kRowsum, l[0], alpha, block, a_.idx(gi, 7, step));  // fma(l, alpha, sum)
}

double OnlineSoftmax::row_sum(int64_t i) const {
  const double* partial = l_.data() + i * e_.lanes;
  const int64_t gi = i0_ + i;
  if (e_.lanes == 1) return partial[0];
  const double even = a_.add_at(Site::kRowsum, partial[0], partial[2], a_.idx(gi, 0, 0));
  const double odd = a_.add_at(Site::kRowsum, partial[1], partial[3], a_.idx(gi, 1, 0));
  return a_.add_at(Site::kRowsum, even, odd, a_.idx(gi, 2, 0));
}

double OnlineSoftmax::log2_sum_exp(int64_t i, double l) const {
  const RowShift& shift = shift_[i];
  if (!shift.valid) return -kInf;
  const uint64_t index = a_.idx(i0_ + i, 0, 0);
  // A row whose keys are all masked has l = 0, which the kernel replaces by 1. log2 is the
  // device's where the site takes its functions (Triton's tl.math.log2: libdevice log2f).
  const double log2_l = a_.log2_at(Site::kLse, l == 0 ? 1.0 : l, index + 1);
  return a_.add_at(Site::kLse, shift.offset, log2_l, index + 2);
}

double OnlineSoftmax::log_sum_exp(int64_t i, double l) const {
  const double m = m_[i];
  const RowShift& shift = shift_[i];
  const uint64_t index = a_.idx(i0_ + i, 0, 0);
  switch (e_.cfg.lse_impl) {
    case LseImpl::kExact:
      break;
    case LseImpl::kFmaLog: {
      // fma(m, scale, round(log l)): m*scale exactly, plus the rounded log, one rounding.
      const double log_l = a_.log_at(Site::kLse, l, index + 1);
      return a_.fma_at(Site::kLse, m, e_.scale, log_l, index);
    }
    case LseImpl::kFmaLog2Div:
    case LseImpl::kFmaLog2DivFull: {
      if (!shift.valid) return -kInf;
      // fma(m, c, round(log2 l)), then / log2e' (correctly rounded or as div.full).
      const double log2_l = a_.log2_at(Site::kLse, l, index + 1);
      const double base2 = a_.fma_at(Site::kLse, m, e_.scale_log2, log2_l, index + 2);
      if (e_.cfg.lse_impl == LseImpl::kFmaLog2DivFull) {
        return a_.div_full_at(Site::kLse, base2, e_.log2e, index);
      }
      return a_.div_at(Site::kLse, base2, e_.log2e, index);
    }
    case LseImpl::kLog2:
      if (shift.valid) {
        const double ln2 = a_.at(Site::kLse, std::numbers::ln2, index + 3);
        return a_.mul_at(Site::kLse, log2_sum_exp(i, l), ln2, index);
      }
      return -kInf;
    case LseImpl::kShiftDivLog2e:
      if (shift.valid && is_exp2(shift.impl)) {
        const double natural = a_.div_at(Site::kLse, shift.offset, e_.log2e, index + 1);
        return a_.add_at(Site::kLse, natural, a_.logf_at(Site::kLse, l, index + 2), index);
      }
      break;
  }
  const double log_l =
      e_.cfg.device_math == DeviceMath::kSm90 ? a_.log_at(Site::kLse, l, index + 1) : std::log(l);
  return a_.at(Site::kLse, m * e_.scale + log_l, index);
}

}  // namespace simprec::attention
