#include "lib/attention/online_softmax.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace simprec::attention {
namespace {

// The random index layout of one row's roundings at one key block `tile`. The rescale's events
// take o_rescale's steps [tile (dv + 3), (tile + 1) (dv + 3)): alpha's exponential the first, the
// row sum's lanes the next (column = lane), O's columns the dv after it (column 0), alpha's
// argument the last (its second rounding at column 1); the two-level chain's rescale takes column
// 4 from the third. The row sum's events take rowsum's step 3 + tile (Bc + 1), columns by lane.
struct BlockSteps {
  int64_t rescale;  // tile (dv + 3)
  int64_t dv;
  int64_t rowsum;  // 3 + tile (Bc + 1)
  int64_t alpha() const { return rescale; }
  int64_t lanes() const { return rescale + 1; }
  int64_t o(int64_t c) const { return rescale + 2 + c; }
  int64_t argument() const { return rescale + dv + 2; }
};

BlockSteps steps_of(const Engine& e, int64_t tile) {
  return {tile * (e.shape.dv + 3), e.shape.dv, 3 + tile * (e.cfg.block_cols + 1)};
}

}  // namespace

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
  RowProbe* probe = a_.probe_for(gi);
  ProbedBlock* record = nullptr;
  if (probe) [[unlikely]] {
    record = &probe->blocks.emplace_back();
    record->tile = tile;
    record->split = probe->split;
    record->first_key = j0;
    record->keys = bc;
    record->m_old = m_[i];
    record->m_block = m_block;
    record->m_new = m_new;
    record->key_values.resize(bc);
    for (int64_t j = 0; j < bc; ++j) {
      record->key_values[j].key = j0 + j;
      record->key_values[j].score = srow[j];
    }
  }
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
  const bool grows = m_new != m_[i] || e_.cfg.rescale->every_block();
  const bool rescales = m_[i] != -kInf && grows;
  if (rescales) alpha = rescale(i, m_new, next_shift, tile, orow, chain);
  m_[i] = m_new;
  shift_[i] = next_shift;
  const RowShift shift = unfused_exp ? unfused(shift_[i]) : shift_[i];
  if (record) [[unlikely]] {
    record->m_new = m_new;
    record->shift = shift.offset;
    record->rescaled = rescales;
    record->alpha = alpha;
  }
  for (int64_t j = 0; j < bc; ++j) {
    const ProbeCapture capture(probe, record ? &record->key_values[j].steps : nullptr);
    prow[j] = a_.prob(srow[j], shift, a_.idx(gi, j0 + j, 10));
    if (record) [[unlikely]]
      record->key_values[j].p = prow[j];
  }
  const BlockSteps steps = steps_of(e_, tile);
  const RowSumBlock block{prow,
                          bc,
                          alpha,
                          gi,
                          static_cast<uint64_t>(steps.rowsum),
                          static_cast<uint64_t>(steps.lanes()),
                          a_.idx(gi, e_.shape.dv, tile),
                          &terms_};
  e_.cfg.rowsum_block->add_block(a_, block, l_.data() + i * e_.lanes);
  // p_scale is a power of two: the product is exact.
  const double p_scale = e_.cfg.p_scale;
  for (int64_t j = 0; j < bc; ++j) prow[j] = a_.cast_p(prow[j] * p_scale, gi, j0 + j);
  if (record) [[unlikely]] {
    record->l.assign(l_.begin() + i * e_.lanes, l_.begin() + (i + 1) * e_.lanes);
    for (int64_t j = 0; j < bc; ++j) record->key_values[j].p_cast = prow[j];
  }
}

double OnlineSoftmax::rescale(int64_t i, double m_new, const RowShift& next_shift, int64_t tile,
                              double* orow, double* chain) {
  const int64_t gi = i0_ + i, dv = e_.shape.dv;
  const BlockSteps steps = steps_of(e_, tile);
  const RescaleDraws draws{a_.idx(gi, 0, steps.alpha()), a_.idx(gi, 0, steps.argument()),
                           a_.idx(gi, 1, steps.argument())};
  double alpha;
  {
    RowProbe* probe = a_.probe_for(gi);
    const ProbeCapture capture(probe, probe ? &probe->blocks.back().alpha_steps : nullptr);
    alpha = e_.cfg.rescale->alpha(
        a_, RescaleInput{m_[i], m_new, shift_[i].offset, next_shift.offset}, draws);
  }
  double* li = l_.data() + i * e_.lanes;
  if (!e_.cfg.rowsum_block->applies_alpha(e_.cfg)) {
    for (int t = 0; t < e_.lanes; ++t) {
      li[t] = a_.mul_at(Site::kORescale, li[t], alpha, a_.idx(gi, t, steps.lanes()));
    }
  }
  for (int64_t c = 0; c < dv; ++c) {
    orow[c] = a_.mul_at(Site::kORescale, orow[c], alpha, a_.idx(gi, 0, steps.o(c)));
  }
  if (chain != nullptr) {
    for (int64_t c = 0; c < dv; ++c) {
      chain[c] = a_.mul_at(Site::kORescale, chain[c], alpha, a_.idx(gi, 4, steps.o(0)) + c);
    }
  }
  return alpha;
}

double OnlineSoftmax::row_sum(int64_t i) const {
  return e_.cfg.rowsum_block->finish(a_, l_.data() + i * e_.lanes, i0_ + i);
}

double OnlineSoftmax::log_sum_exp(int64_t i, double l) const {
  return e_.cfg.lse_impl->lse(a_, LseInput{m_[i], shift_[i], l, i0_ + i});
}

double OnlineSoftmax::log2_sum_exp(int64_t i, double l) const {
  return e_.cfg.lse_impl->lse2(a_, LseInput{m_[i], shift_[i], l, i0_ + i});
}

}  // namespace simprec::attention
