// The memory-efficient kernel's iterative_softmax: each warp's 32 columns of the block summed in
// the quad layout's 4 lanes from zero (lane t: columns j with (j % 8) / 2 == t), combined
// (l0 + l1) + (l2 + l3), and the warps' sums added to l in order.
#include "lib/attention/lane_reduction.hpp"
#include "lib/attention/site_arithmetic.hpp"

namespace simprec::attention {
namespace {

// Within a warp's group: lane (j % 8) / 2, combined with offsets 1, then 2.
const LaneReduction kGroup(4, 2, {1, 2});

class WarpGroups final : public RowSum {
 public:
  WarpGroups()
      : RowSum({.name = "warp-groups",
                .doc = "per group of 32 columns (a warp's) 4 lane sums from zero, combined "
                       "(l0 + l1) + (l2 + l3), the groups added to l in order (the "
                       "memory-efficient kernel's iterative_softmax)",
                .needs = {{.key = "rowsum_lanes", .values = {"1"}},
                          {.key = "pv_mode", .values = {"fused"}}},
                .draws = {{"rowsum",
                           "(row, first column of the group + lane, the block's step) for the "
                           "lanes; + 4, 5, 6 for the combination, + 7 for the addition to l"}}}) {}

  int64_t extra_index_columns() const override { return 17; }

  void add_block(const SiteArithmetic& a, const RowSumBlock& b, double* l) const override {
    const ProductSite& rowsum = a.engine().product(Site::kRowsum);
    std::vector<int64_t> columns;
    std::vector<double>& terms = *b.scratch;
    for (int64_t g0 = 0; g0 < b.bc; g0 += 32) {
      const int64_t n = std::min<int64_t>(b.bc - g0, 32);
      std::vector<double> lane(4);
      for (int t = 0; t < 4; ++t) {
        columns.clear();
        kGroup.elements(t, n, columns);
        terms.clear();
        for (const int64_t j : columns) terms.push_back(b.p[g0 + j]);
        lane[t] = rowsum.sum(terms.data(), static_cast<int64_t>(terms.size()), 0.0,
                             a.idx(b.row, g0 + t, b.step), a.trace(Site::kRowsum));
      }
      const double group = kGroup.combine(lane, [&](double x, double y, int t, int step) {
        return a.add_at(Site::kRowsum, x, y, a.idx(b.row, g0 + 4 + 2 * step + t / 2, b.step));
      });
      l[0] = a.add_at(Site::kRowsum, l[0], group, a.idx(b.row, g0 + 7, b.step));
    }
  }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(WarpGroups)

}  // namespace simprec::attention
