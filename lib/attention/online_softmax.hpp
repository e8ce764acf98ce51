// The online softmax of flash attention's forward pass (Milakov and Gimelshein 2018; Dao,
// FlashAttention-2, 2023) over one block of query rows (private to lib/attention): each row's
// running max m, the exponent's row shift from it, and the running row sum l of the un-cast P
// (in rowsum_lanes partial sums); where a key block raises a row's max, l and the row's O
// accumulator are rescaled by alpha at o_rescale (with lazy_rescale, only where it grows by more
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
  // lazy_rescale), adds the row's P to l as rowsum_lanes / rowsum_block / pv_mode say, and
  // writes P times p_scale cast at p_cast to prow[0, bc) (zeros while every key of the row is
  // masked).
  // unfused_exp: this block forms exp2-scaled-fma's argument unfused (Head::unfused_exp_tile).
  void add_block_row(int64_t i, const double* srow, int64_t j0, int64_t bc, int64_t tile,
                     double* orow, double* chain, double* prow, bool unfused_exp);

  // Row i's sum l after its last key block: the partial sums combined (l0 + l2) + (l1 + l3),
  // each addition rounded at rowsum.
  double row_sum(int64_t i) const;

  // Row i's LSE from its max (its shift) and its row sum l (config.hpp, LseImpl).
  double log_sum_exp(int64_t i, double l) const;
  // Row i's base-2 LSE of lse_impl=log2: round(shift + round(log2 l)) at lse, log2 libdevice's
  // log2f (tl.math.log2) with device_math=sm90.
  double log2_sum_exp(int64_t i, double l) const;

 private:
  // alpha = exp(scale (m_old - m_new)) as config.hpp's RescaleImpl computes it, then l (unless
  // rowsum_block=quad-fma or rowsum_rescale=fma, which fuse it into l's update), orow and
  // (unless null) the two-level chain times alpha; returns alpha.
  double rescale(int64_t i, double m_new, const RowShift& next_shift, int64_t tile, double* orow,
                 double* chain);
  // start plus, at rowsum, the block row's columns j and j + 1 for j = first, first + stride, ...
  // below end (one lane's columns), in order, less the first `skip` of them.
  double lane_sum(const double* prow, int64_t first, int64_t end, int64_t stride, double start,
                  uint64_t index, int64_t skip = 0);
  // Adds one block row of P to the 4 partial row sums: partial t takes the block's columns j
  // with (j % 8) / 2 == t, in increasing order (the columns a thread of the quad holds). With
  // rowsum_rescale=fma the first of them enters as fma(partial, alpha, p).
  void add_to_lanes(const double* prow, int64_t bc, double alpha, double* partial, int64_t gi,
                    int64_t tile);
  // Adds one block row of P to the row sum l as the memory-efficient kernel does: per group of
  // 32 columns (a warp's), 4 lane sums from zero (lane t takes the group's columns j with
  // (j % 8) / 2 == t, in order), combined (l0 + l1) + (l2 + l3); the groups' sums are added to
  // l in order. Every addition rounds at rowsum.
  void add_warp_groups(const double* prow, int64_t bc, double* l, int64_t gi, int64_t tile);
  // rowsum_block=quad-fma (config.hpp, RowsumBlock): the block's 4 lane sums from zero, combined
  // (l0 + l2) + (l1 + l3), then l = fma(l, alpha, block sum), every step rounded at rowsum.
  void add_quad_fma(const double* prow, int64_t bc, double alpha, double* l, int64_t gi,
                    int64_t tile);

  const SiteArithmetic& a_;
  const Engine& e_;
  int64_t i0_ = 0;
  std::vector<double> m_, l_;  // l_: rowsum_lanes partial sums per row
  // Sized for a whole query block and kept across blocks: a row is given its shift by the first
  // key block in which one of its keys is visible.
  std::vector<RowShift> shift_;
  std::vector<double> terms_;  // scratch: one lane's terms of a block row
};

}  // namespace simprec::attention
