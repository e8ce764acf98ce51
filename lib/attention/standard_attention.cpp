// Standard attention site by site, in blocks of block_rows query rows over all keys: S, P
// normalised by its row sum at p_norm, O = P~ V, the LSE as lse_impl forms it; the backward pass
// from P recomputed from the scores as autograd's softmax backward computes it
// (D = rowsum(dP o P)).
#include <algorithm>
#include <cmath>
#include <vector>

#include "lib/attention/head.hpp"

namespace simprec::attention {

void Head::standard_rows(int64_t i0, int64_t i1, std::vector<double>& s, std::vector<double>& pn,
                         double* lse_out) const {
  const int64_t nk = s_.nk, br = i1 - i0;
  s.resize(br * nk);
  pn.resize(br * nk);
  scores(i0, i1, 0, nk, s.data(), 0);
  for (int64_t i = 0; i < br; ++i) {
    const int64_t gi = i0 + i;
    const double* srow = s.data() + i * nk;
    double* prow = pn.data() + i * nk;
    const double m = block_max(srow, nk);
    const RowShift shift = shift_from_max(m, gi);
    // The probed row's values, as one block of every key (row_probe.hpp).
    RowProbe* probe = probe_for(gi);
    ProbedBlock* record = nullptr;
    if (probe) [[unlikely]] {
      record = &probe->blocks.emplace_back();
      record->keys = nk;
      record->m_block = record->m_new = m;
      record->shift = shift.offset;
      record->key_values.resize(nk);
    }
    const auto steps = [&](int64_t j) { return record ? &record->key_values[j].steps : nullptr; };
    for (int64_t j = 0; j < nk; ++j) {
      const ProbeCapture capture(probe, steps(j));
      prow[j] = prob(srow[j], shift, e_.idx(p_, gi, j, 10));
      if (record) [[unlikely]] {
        ProbedKey& key = record->key_values[j];
        key.key = j;
        key.score = srow[j];
        key.p = prow[j];
      }
    }
    const double l =
        e_.product(Site::kRowsum).sum(prow, nk, 0.0, e_.idx(p_, gi, 0, 3), trace(Site::kRowsum));
    for (int64_t j = 0; j < nk; ++j) {
      const ProbeCapture capture(probe, steps(j));
      prow[j] = divf_at(Site::kPNorm, prow[j], l, e_.idx(p_, gi, j, 1));
    }
    if (lse_out && row_sum_) row_sum_[gi] = l;
    if (lse_out) {
      const ProbeCapture capture(probe, probe ? &probe->lse_steps : nullptr);
      lse_out[i] = e_.cfg.lse_impl->lse(*this, LseInput{m, shift, l, gi});
    }
    if (record) [[unlikely]] {
      record->l = {l};
      probe->l = l;
      if (lse_out) probe->lse = lse_out[i];
    }
  }
}

void Head::forward_standard() {
  const int64_t nq = s_.nq, nk = s_.nk, dv = s_.dv;
  const int64_t rows = std::max<int64_t>(1, e_.cfg.block_rows);
  std::vector<double> s, pn, acc;
  for (int64_t i0 = 0; i0 < nq; i0 += rows) {
    const int64_t i1 = std::min(nq, i0 + rows), br = i1 - i0;
    standard_rows(i0, i1, s, pn, lse_ + i0);
    for (int64_t x = 0; x < br * nk; ++x) pn[x] = cast_p(pn[x], i0 + x / nk, x % nk);
    acc.assign(br * dv, 0.0);
    e_.product(Site::kPvAcc)
        .gemm(br, dv, nk, pn.data(), nk, v_, dv, acc.data(), dv, false, e_.imap(p_, i0, 0, 0),
              trace(Site::kPvAcc), nullptr, f32(v32_, 0));
    for (int64_t x = 0; x < br * dv; ++x) {
      const int64_t gi = i0 + x / dv, c = x % dv;
      o_[i0 * dv + x] =
          at(Site::kOOut, v_descaled(acc[x], c, e_.idx(p_, gi, c, 3)), e_.idx(p_, gi, c, 0));
    }
    if (probe_ && probe_->active && probe_->row >= i0 && probe_->row < i1) [[unlikely]] {
      const int64_t i = probe_->row - i0;
      ProbedBlock& record = probe_->blocks.back();
      for (int64_t j = 0; j < nk; ++j) record.key_values[j].p_cast = pn[i * nk + j];
      record.acc.assign(acc.begin() + i * dv, acc.begin() + (i + 1) * dv);
      probe_o(probe_->row, o_ + probe_->row * dv, true);
    }
  }
}

void Head::backward_standard() {
  const int64_t nq = s_.nq, nk = s_.nk, d = s_.d, dv = s_.dv;
  const int64_t rows = std::max<int64_t>(1, e_.cfg.block_rows);
  const std::vector<double> vt = transpose(v_, nk, dv);
  std::vector<double> pc_t(nk * nq), ds_t(nk * nq), s, pn, dp, ds, acc;
  for (int64_t i0 = 0; i0 < nq; i0 += rows) {
    const int64_t i1 = std::min(nq, i0 + rows), br = i1 - i0;
    standard_rows(i0, i1, s, pn, nullptr);
    dp.assign(br * nk, 0.0);
    ds.assign(br * nk, 0.0);
    e_.product(Site::kDp).gemm(br, nk, dv, do_ + i0 * dv, dv, vt.data(), nk, dp.data(), nk, false,
                               e_.imap(p_, i0, 0, 0), trace(Site::kDp), f32(do32_, i0 * dv),
                               f32(vt32_, 0));
    for (int64_t i = 0; i < br; ++i) {
      const int64_t gi = i0 + i;
      double di = 0.0;
      // Autograd's softmax backward: D = rowsum(dP o P) from the saved (normalised) P.
      e_.product(Site::kD).gemm(1, 1, nk, dp.data() + i * nk, nk, pn.data() + i * nk, 1, &di, 1,
                                false, e_.imap(p_, gi, 0, 0), trace(Site::kD));
      delta_[gi] = di;
      for (int64_t j = 0; j < nk; ++j) {
        pc_t[j * nq + gi] = at(Site::kPCastBwd, pn[i * nk + j], e_.idx(p_, gi, j, 0));
        const double x = dscore(pn[i * nk + j], dp[i * nk + j], di, e_.idx(p_, gi, j, 0),
                                kept_score(i * nk + j), gi, j);
        ds[i * nk + j] = x;
        ds_t[j * nq + gi] = x;
      }
    }
    acc.assign(br * d, 0.0);
    e_.product(Site::kDqAcc)
        .gemm(br, d, nk, ds.data(), nk, k_, d, acc.data(), d, false, e_.imap(p_, i0, 0, 0),
              trace(Site::kDqAcc), nullptr, f32(k32_, 0));
    for (int64_t x = 0; x < br * d; ++x) {
      dq_[i0 * d + x] = scaled_grad(Site::kDqAcc, acc[x], e_.idx(p_, i0 + x / d, x % d, 0));
    }
  }
  acc.assign(nk * d, 0.0);
  e_.product(Site::kDkAcc)
      .gemm(nk, d, nq, ds_t.data(), nq, q_, d, acc.data(), d, false, e_.imap(p_, 0, 0, 0),
            trace(Site::kDkAcc), nullptr, f32(q32_, 0));
  for (int64_t x = 0; x < nk * d; ++x)
    dk_[x] = scaled_grad(Site::kDkAcc, acc[x], e_.idx(p_, x / d, x % d, 1));
  acc.assign(nk * dv, 0.0);
  e_.product(Site::kDvAcc)
      .gemm(nk, dv, nq, pc_t.data(), nq, do_, dv, acc.data(), dv, false, e_.imap(p_, 0, 0, 0),
            trace(Site::kDvAcc), nullptr, f32(do32_, 0));
  for (int64_t x = 0; x < nk * dv; ++x)
    dv_[x] = at(Site::kGradOut, acc[x], e_.idx(p_, x / dv, x % dv, 2));
}

}  // namespace simprec::attention
