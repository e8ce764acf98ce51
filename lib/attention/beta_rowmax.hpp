// Paper A's beta-rowmax (NUMERICS.md §2): the max a flash block row subtracts before the
// exponential, shifted when the row's max repeats.
#pragma once

#include <cstdint>

#include "lib/attention/config.hpp"

namespace simprec::attention {

// The max that block row `scores[0, n)` subtracts: its largest score r_m (-inf when every score
// is -inf), or, when at least two scores reach the threshold t (within eps of r_m on the scaled
// scores), beta * r_m for r_m > 0 and 0 otherwise. `scale` is the softmax scale: the scores are
// unscaled, so the window is eps / scale wide. With BetaArithmetic::kFp32 r_m must be a float
// (scores in fp32 or narrower); std::domain_error otherwise.
double beta_block_max(const double* scores, int64_t n, const BetaRowmax& beta, double scale);

}  // namespace simprec::attention
