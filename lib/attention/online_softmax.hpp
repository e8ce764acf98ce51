// The online softmax of flash attention's forward pass (Milakov and Gimelshein 2018; Dao,
// FlashAttention-2, 2023) over one block of query rows (private to lib/attention): each row's
// running max m, the exponent's row shift from it (exp_impl), and the running row sum l of the
// un-cast P (rowsum_block); where a key block raises a row's max, l and the row's O accumulator
// are rescaled by alpha (rescale) at o_rescale (with lazy_rescale, only where it grows by more
// than the threshold).
#pragma once

#include <cstdint>
#include <vector>

#include "lib/attention/engine.hpp"
#include "lib/attention/site_arithmetic.hpp"

namespace simprec::attention {

class OnlineSoftmax {
 public:
  explicit OnlineSoftmax(const SiteArithmetic& arithmetic);

  // Starts query rows [i0, i0 + br): m = -inf and l = 0 for each.
  void start(int64_t i0, int64_t br);

  // Takes block row i (query row i0 + i) of key block `tile`, whose scores against keys
  // [j0, j0 + bc) are srow[0, bc): rescales l and orow (the row's O accumulator, dv values)
  // and chain (the two-level partial sums, or nullptr) when the max grows (by more than
  // lazy_rescale), adds the row's P to l (rowsum_block), and writes P times p_scale cast at
  // p_cast to prow[0, bc) (zeros while every key of the row is masked).
  // unfused_exp: this block forms its exponent argument unfused (flex_compile).
  void add_block_row(int64_t i, const double* srow, int64_t j0, int64_t bc, int64_t tile,
                     double* orow, double* chain, double* prow, bool unfused_exp);

  // Row i's sum l after its last key block (rowsum_block's combination of its partial sums).
  double row_sum(int64_t i) const;

  // Row i's LSE from its max, its shift and its row sum l (lse_impl), and the base-2 LSE of an
  // lse_impl that keeps one for the backward pass.
  double log_sum_exp(int64_t i, double l) const;
  double log2_sum_exp(int64_t i, double l) const;

 private:
  // alpha as rescale says, then l (unless rowsum_block applies alpha itself), orow and (unless
  // null) the two-level chain times alpha at o_rescale; returns alpha.
  double rescale(int64_t i, double m_new, const RowShift& next_shift, int64_t tile, double* orow,
                 double* chain);

  const SiteArithmetic& a_;
  const Engine& e_;
  int64_t i0_ = 0;
  std::vector<double> m_, l_;  // l_: the row sum's partial sums per row
  // Sized for a whole query block and kept across blocks: a row is given its shift by the first
  // key block in which one of its keys is visible.
  std::vector<RowShift> shift_;
  std::vector<double> terms_;  // scratch for the row sum's lanes
};

}  // namespace simprec::attention
