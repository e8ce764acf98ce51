// Paper A's beta-rowmax (docs/numerics.md §2): the max a flash block row subtracts before the
// exponential, shifted when the row's max repeats.
#pragma once

#include <cstdint>

#include "lib/attention/config.hpp"

namespace simprec::attention {

// The max that block row `scores[0, n)`, whose largest score is `row_max`, subtracts: row_max
// itself (also when it is -inf: every score masked), or, when at least two scores reach the
// threshold t (within eps of row_max on the scaled scores), beta * row_max for row_max > 0 and
// 0 otherwise. `scale` is the softmax scale: the scores are unscaled, so the window is
// eps / scale wide. With BetaArithmetic::kFp32 row_max must be a float (scores in fp32 or
// narrower); std::domain_error otherwise.
double beta_block_max(const double* scores, int64_t n, double row_max, const BetaRowmax& beta,
                      double scale);

}  // namespace simprec::attention
