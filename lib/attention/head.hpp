// One problem (a batch x head index) of the site-by-site engine (private to lib/attention): its
// slices of the inputs and outputs, and the passes that compute it. The passes live in files of
// their own: flash_forward.cpp, flash_backward.cpp and standard_attention.cpp; the scores and
// the gradient helpers both algorithms share in head.cpp.
#pragma once

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "lib/attention/engine.hpp"
#include "lib/attention/score_mod.hpp"
#include "lib/attention/site_arithmetic.hpp"
#include "lib/attention/tensors.hpp"
#include "lib/tracing/site_trace.hpp"

namespace simprec::attention {

class Head : private SiteArithmetic {
 public:
  // Problem p of `in` into its slices of `out`; traces (or nullptr), misses and probe (a row
  // of this problem to record in the forward pass, or nullptr) as in SiteArithmetic.
  Head(const Engine& e, const AttentionInputs& in, AttentionOutputs& out, int64_t p,
       std::array<tracing::SiteTrace, kSiteCount>* traces, DeviceMisses* misses,
       RowProbe* probe = nullptr);

  void forward() {
    if (probe_) probe_->begin();
    if (!e_.cfg.flash()) {
      forward_standard();
    } else if (e_.cfg.flash_state->normalised()) {
      forward_flash_normalised();
    } else {
      forward_flash();
    }
    if (probe_) {
      probe_->active = false;
      probe_->recorded = true;
    }
  }
  // kv_group_sum=chained: the backward pass's dK and dV accumulators start from *dk and *dv (empty:
  // zero) and end there; only the group's last head (last) scales and casts them into its dK
  // and dV.
  void chain_gradients(std::vector<double>* dk, std::vector<double>* dv, bool last) {
    dk_chain_ = dk;
    dv_chain_ = dv;
    last_in_chain_ = last;
  }
  void backward() {
    if (e_.cfg.flash()) {
      backward_flash();
    } else {
      backward_standard();
    }
  }

 private:
  static std::vector<double> transpose(const double* x, int64_t rows, int64_t cols);
  static std::vector<float> as_floats(const double* x, int64_t n);
  // A float view at offset, or nullptr when the tensor is not all floats.
  static const float* f32(const std::vector<float>& v, int64_t offset) {
    return v.empty() ? nullptr : v.data() + offset;
  }
  bool masked(int64_t i, int64_t j) const { return !visible_(i, j); }

  // Scores of rows [i0, i1) against keys [j0, j1), masks applied. Where the masking modifies
  // scores (Engine::prescaled_scores) they are scaled and modified first (modified_score), each
  // one's q.k kept in kept_ for dscore where a score_mod (Engine::score_mod) modifies it.
  void scores(int64_t i0, int64_t i1, int64_t j0, int64_t j1, double* out, int64_t tile) const;
  // The score x (q.k) of query i and key j scaled and modified: the score_mod's program (its
  // product x times the scale contracted like any other; *kept = x), else x times the scale
  // rounded at s; then the bias added, rounded at s.
  double modified_score(double x, int64_t i, int64_t j, uint64_t index, double* kept) const;
  // dS = P o (dP - D), rounded at ds (the difference, then the product; with a score_mod, its
  // derivative program at (query i, key j) from q.k = t, which forms that product itself, as
  // FlexAttention's backward compiles its joint graph), then what grad_scale does to dS, then
  // cast at ds_cast.
  double dscore(double p, double dp, double d, uint64_t index, double t, int64_t i,
                int64_t j) const;
  // The q.k of element x of the last scores() block where a score_mod needs it (else 0).
  double kept_score(int64_t x) const { return kept_.empty() ? 0.0 : kept_[x]; }
  // A score_mod's program at the point, each floating-point operation rounded at `site`.
  double run_score_mod(const ScoreProgram& program, Site site, const ScoreModPoint& at,
                       uint64_t index) const;
  // dQ or dK from its accumulator (at site `acc`) as grad_scale says.
  double scaled_grad(Site acc, double value, uint64_t index) const {
    return e_.cfg.grad_scale->grad(*this, acc, value, index);
  }

  // Query row gi's O (dv values at o_row) into the probe where it records that row: O as written
  // (written) or before its cast at o_out.
  void probe_o(int64_t gi, const double* o_row, bool written) const {
    if (RowProbe* probe = probe_for(gi)) {
      (written ? probe->o : probe->o_norm).assign(o_row, o_row + s_.dv);
    }
  }

  // flash_forward.cpp
  void forward_flash();
  // The blocks of the forward pass.
  BlockGrid forward_grid() const;

  // flash_normalised_forward.cpp: FlashAttention-1's Algorithm 1 (flash_state=normalised).
  void forward_flash_normalised();

  // Query row gi's O and LSE from its split-KV partials (split sp's O row at o_part + sp *
  // o_stride, its LSE at lse_part[sp * lse_stride]), as FlashAttention-2's combine kernel merges
  // them: lse = log(sum exp(lse_sp - max)) + max, O = sum exp(lse_sp - lse) O_sp in order, at
  // the lse and o_norm sites; exp and log are correctly rounded there, or with
  // device_math=sm90 libdevice's expf and logf (the kernel calls expf and logf and PyTorch
  // builds it without --use_fast_math: docs/torch_kernels.md).
  void combine_splits(int64_t gi, int64_t splits, const double* o_part, int64_t o_stride,
                      const double* lse_part, int64_t lse_stride);

  // flash_backward.cpp
  void backward_flash();
  // D_i = rowsum(dO o O) in the order delta_sum gives (strategies/delta_sum.hpp), each addition
  // rounded at d (the threads' partial sums by d's accumulation model).
  double delta_from_output(int64_t i) const;
  // P of rows [i0, i1) x keys [j0, j1) recomputed from the log-sum-exp.
  void recompute_p(int64_t i0, int64_t i1, int64_t j0, int64_t j1, double* s, double* p,
                   const std::vector<RowShift>& shift, int64_t tile) const;
  // The blocks of the backward pass (its own tile).
  BlockGrid backward_grid() const;
  // The (key block, query block) pairs of the flash backward pass in the order they run: the
  // block mask's where it fixes them, else query_order's.
  std::vector<std::pair<int64_t, int64_t>> backward_schedule() const;

  // standard_attention.cpp
  // One block of rows of standard attention: S, P, l and the normalised P over all keys.
  // Fills s (scores), pn (normalised, at p_norm) and returns per-row lse through lse_out.
  void standard_rows(int64_t i0, int64_t i1, std::vector<double>& s, std::vector<double>& pn,
                     double* lse_out) const;
  void forward_standard();
  void backward_standard();

  AttentionShape s_;
  Visibility visible_;
  mutable std::vector<double> kept_, score_mod_values_;
  std::vector<double>*dk_chain_ = nullptr, *dv_chain_ = nullptr;
  bool last_in_chain_ = true;
  const double *q_, *k_, *v_, *do_ = nullptr;
  double *o_, *lse_, *row_sum_ = nullptr, *dq_ = nullptr, *dk_ = nullptr, *dv_ = nullptr,
                     *delta_ = nullptr;
  std::vector<double> kt_;
  // A base-2 lse_impl: the forward pass's base-2 LSE per query row, from which the backward pass of
  // the same run recomputes P (empty otherwise).
  std::vector<double> lse2_;
  std::vector<float> q32_, k32_, kt32_, v32_, vt32_, do32_;
};

}  // namespace simprec::attention
