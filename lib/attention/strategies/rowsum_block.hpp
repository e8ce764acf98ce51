// Slot rowsum_block: how a key block's row of P (before its cast) enters the row sum l of flash
// attention's online softmax, in what order and with how many partial sums (online_softmax.hpp).
// One file per strategy in rowsum_block/.
#pragma once

#include <cstdint>
#include <vector>

#include "lib/attention/strategy.hpp"

namespace simprec::attention {

class SiteArithmetic;

// One key block's row of P, as the online softmax hands it over.
struct RowSumBlock {
  const double* p;  // the block row's P, un-cast
  int64_t bc;       // its columns
  double alpha;     // the block's rescale factor (1 when the row's max did not grow)
  int64_t row;      // the query row
  uint64_t step;    // the block's step in rowsum's random stream (columns by lane)
  uint64_t l_step;  // the step at which the rescale of l draws (o_rescale's layout)
  uint64_t update;  // pv_mode=per-block: the random index of the block sum's addition to l
  std::vector<double>* scratch;
};

class RowSum : public Strategy {
 public:
  static constexpr SlotInfo kSlot{"rowsum_block",
                                  "how a key block's P enters the row sum l: its order, partial "
                                  "sums and the rescale's place",
                                  "running", SlotScope::kFlash};
  explicit RowSum(StrategyInfo info) : Strategy(kSlot, std::move(info)) {}

  // The partial sums kept per row across key blocks.
  virtual int lanes(const AttentionConfig& config) const { return 1; }
  // Whether add_block applies alpha to l itself; otherwise the online softmax rounds l * alpha
  // at o_rescale first, where the max grew.
  virtual bool applies_alpha(const AttentionConfig& config) const { return false; }
  // Adds the block to the row's partial sums l[0, lanes).
  virtual void add_block(const SiteArithmetic& a, const RowSumBlock& block, double* l) const = 0;
  // The random-index columns the strategy's events take past a row's largest dimension (its lane
  // and combine events; Engine lays out the index space).
  virtual int64_t extra_index_columns() const { return 0; }
  // The row's l after its last key block, from its partial sums.
  virtual double finish(const SiteArithmetic& a, const double* l, int64_t row) const {
    return l[0];
  }
};

}  // namespace simprec::attention
