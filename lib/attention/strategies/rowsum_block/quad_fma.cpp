// Triton's tl.sum over an MMA accumulator layout and FlexAttention's contracted
// l_i * alpha + sum: the block's columns in the 4 lanes of each warp's quad from zero (lane t of
// warp w: columns j with (j % 8) / 2 == t and (j / 8) % rowsum_warps == w, in order), each warp's
// lanes combined (l0 + l2) + (l1 + l3), the warps' sums added, then l = fma(l, alpha, sum) with
// one rounding.
#include "lib/attention/lane_reduction.hpp"
#include "lib/attention/site_arithmetic.hpp"

namespace simprec::attention {
namespace {

// One warp's quad: its 4 lanes combined with offsets 2, then 1.
const LaneReduction kQuad(4, 1, {2, 1});

class QuadFma final : public RowSum {
 public:
  QuadFma()
      : RowSum({.name = "quad-fma",
                .doc = "the block in each warp's 4 lanes from zero, combined (l0 + l2) + "
                       "(l1 + l3), the warps' sums added (rowsum_warps), then "
                       "l = fma(l, alpha, sum): Triton's tl.sum and FlexAttention's update",
                .needs = {{.key = "rowsum_lanes", .values = {"1"}},
                          {.key = "pv_mode", .values = {"fused"}}},
                .draws = {{"rowsum",
                           "(row, 8 warp + lane, the block's step) for the lanes; 8 warp + 4, 5, "
                           "6 for the combination; 16 for the warps' sum; 7 for the fma"}}}) {}

  int64_t extra_index_columns() const override { return 17; }
  bool applies_alpha(const AttentionConfig&) const override { return true; }

  void add_block(const SiteArithmetic& a, const RowSumBlock& b, double* l) const override {
    const int warps = a.engine().cfg.rowsum_warps;
    // Column j to thread (j / 2) % (4 warps): lane t of warp w is thread 4 w + t.
    const LaneReduction layout(4 * warps, 2, {});
    const ProductSite& rowsum = a.engine().product(Site::kRowsum);
    std::vector<int64_t> columns;
    std::vector<double>& terms = *b.scratch;
    double block = 0.0;
    for (int w = 0; w < warps; ++w) {
      std::vector<double> lane(4);
      for (int t = 0; t < 4; ++t) {
        columns.clear();
        layout.elements(4 * w + t, b.bc, columns);
        terms.clear();
        for (const int64_t j : columns) terms.push_back(b.p[j]);
        lane[t] = rowsum.sum(terms.data(), static_cast<int64_t>(terms.size()), 0.0,
                             a.idx(b.row, 8 * w + t, b.step), a.trace(Site::kRowsum));
      }
      const double sum = kQuad.combine(lane, [&](double x, double y, int t, int step) {
        return a.add_at(Site::kRowsum, x, y, a.idx(b.row, 8 * w + 4 + 2 * step + t, b.step));
      });
      block = w == 0 ? sum : a.add_at(Site::kRowsum, block, sum, a.idx(b.row, 16, b.step));
    }
    l[0] = a.fma_at(Site::kRowsum, l[0], b.alpha, block, a.idx(b.row, 7, b.step));
  }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(QuadFma)

}  // namespace simprec::attention
