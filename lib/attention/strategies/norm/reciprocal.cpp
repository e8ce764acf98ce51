// FlashAttention-2's epilogue (softmax.h, normalize_softmax_lse): inv_sum = 1 / l, then
// O * inv_sum, each rounded at o_norm (1/l the device's reciprocal where device_math has one).
#include "lib/attention/site_arithmetic.hpp"

namespace simprec::attention {
namespace {

class Reciprocal final : public Norm {
 public:
  Reciprocal()
      : Norm({.name = "reciprocal",
              .doc = "1/l rounded at o_norm, then O (1/l) (FlashAttention-2)",
              .draws = {{"o_norm", "1/l: (row, 0, 0); O: (row, column, 1)"}}}) {}

  void normalise(const SiteArithmetic& a, const double* acc, double l, double* out, int64_t row,
                 int64_t dv) const override {
    const double inv = a.rcpf_at(Site::kONorm, l, a.idx(row, 0, 0));
    for (int64_t c = 0; c < dv; ++c) {
      out[c] =
          a.mul_at(Site::kONorm, acc[c], a.v_descaled(inv, c, a.idx(row, c, 3)), a.idx(row, c, 1));
    }
  }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(Reciprocal)

}  // namespace simprec::attention
