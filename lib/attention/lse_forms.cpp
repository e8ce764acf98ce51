// The LSE forms that several lse_impl strategies share (strategies/lse_impl.hpp).
#include <cmath>

#include "lib/attention/site_arithmetic.hpp"
#include "lib/attention/strategies/lse_impl.hpp"

namespace simprec::attention {

double exact_lse(const SiteArithmetic& a, const LseInput& in) {
  const uint64_t index = a.idx(in.row, 0, 0);
  const double log_l = a.engine().cfg.device_math->has_tag("fast-log")
                           ? a.log_at(Site::kLse, in.l, index + 1)
                           : std::log(in.l);
  return a.at(Site::kLse, in.m * a.engine().scale + log_l, index);
}

double fma_log2_lse2(const SiteArithmetic& a, const LseInput& in) {
  const uint64_t index = a.idx(in.row, 0, 0);
  const double log2_l = a.log2_at(Site::kLse, in.l, index + 1);
  return a.fma_at(Site::kLse, in.m, a.engine().scale_log2, log2_l, index + 2);
}

}  // namespace simprec::attention
