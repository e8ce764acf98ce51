// The row sum as one running sum of the block's columns in order, or (rowsum_lanes=4) as the four
// partial sums of a thread quad's mma.sync layout, each rescaled by alpha and adding its columns
// in order, combined (l0 + l2) + (l1 + l3) after the last block (FlashAttention-2's
// thread_reduce_ and quad all-reduce in softmax.h). With pv_mode=per-block the block's sum is
// rounded first and added to l at o_update, like the block's P.V to O.
#include "lib/attention/lane_reduction.hpp"
#include "lib/attention/site_arithmetic.hpp"

namespace simprec::attention {
namespace {

// The quad's layout: column j of a block in lane (j % 8) / 2; the lanes combined with offsets 2,
// then 1.
const LaneReduction kQuad(4, 2, {2, 1});

class Running final : public RowSum {
 public:
  Running()
      : RowSum({.name = "running",
                .doc = "the block's columns added to l in order; with rowsum_lanes=4, four "
                       "partial sums (lane t: columns j with (j % 8) / 2 == t), rescaled as "
                       "rowsum_rescale says, combined (l0 + l2) + (l1 + l3) at the end",
                .draws = {{"rowsum",
                           "(row, lane, the block's step) for each lane's sum; (row, 0..2, 0) "
                           "for the final combination"},
                          {"o_update", "pv_mode=per-block: the block sum's addition"}}}) {}

  int lanes(const AttentionConfig& c) const override { return c.rowsum_lanes; }
  bool applies_alpha(const AttentionConfig& c) const override {
    return c.rowsum_lanes > 1 && c.rowsum_rescale->fuses_first_term();
  }

  void add_block(const SiteArithmetic& a, const RowSumBlock& b, double* l) const override {
    const Engine& e = a.engine();
    const ProductSite& rowsum = e.product(Site::kRowsum);
    if (e.lanes > 1) {
      add_to_lanes(a, b, l);
    } else if (e.cfg.pv_mode->fused()) {
      l[0] = rowsum.sum(b.p, b.bc, l[0], a.idx(b.row, 0, b.step), a.trace(Site::kRowsum));
    } else {
      const double block_sum =
          rowsum.sum(b.p, b.bc, 0.0, a.idx(b.row, 0, b.step), a.trace(Site::kRowsum));
      l[0] = a.add_at(Site::kOUpdate, l[0], block_sum, b.update);
    }
  }

  double finish(const SiteArithmetic& a, const double* l, int64_t row) const override {
    if (a.engine().lanes == 1) return l[0];
    return kQuad.combine({l[0], l[1], l[2], l[3]}, [&](double x, double y, int t, int step) {
      return a.add_at(Site::kRowsum, x, y, a.idx(row, 2 * step + t, 0));
    });
  }

 private:
  // Lane t takes its columns in order from its partial sum; with rowsum_rescale=fma its first
  // term enters as fma(l, alpha, p) in place of l * alpha, with the random bits the rescale of l
  // would have used. A lane the block gives no term still takes alpha: its padded column's p is
  // 0.
  static void add_to_lanes(const SiteArithmetic& a, const RowSumBlock& b, double* partial) {
    const Engine& e = a.engine();
    const bool fused = e.cfg.rowsum_rescale->fuses_first_term();
    std::vector<int64_t> columns;
    std::vector<double>& terms = *b.scratch;
    for (int t = 0; t < 4; ++t) {
      columns.clear();
      kQuad.elements(t, b.bc, columns);
      terms.clear();
      for (const int64_t j : columns) terms.push_back(b.p[j]);
      size_t skip = 0;
      double start = partial[t];
      if (fused) {
        const bool has_term = !terms.empty();
        start = a.fma_at(Site::kRowsum, partial[t], b.alpha, has_term ? terms[0] : 0.0,
                         a.idx(b.row, t, b.l_step));
        skip = has_term ? 1 : 0;
      }
      partial[t] = e.product(Site::kRowsum)
                       .sum(terms.data() + skip, static_cast<int64_t>(terms.size() - skip), start,
                            a.idx(b.row, t, b.step), a.trace(Site::kRowsum));
    }
  }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(Running)

}  // namespace simprec::attention
