#include "lib/attention/beta_rowmax.hpp"

#include <limits>
#include <stdexcept>
#include <string>

namespace simprec::attention {

double beta_block_max(const double* scores, int64_t n, double row_max, const BetaRowmax& beta,
                      double scale) {
  if (row_max == -std::numeric_limits<double>::infinity()) return row_max;
  const auto repeats = [&](double threshold) {
    int count = 0;
    for (int64_t j = 0; j < n && count < 2; ++j) count += scores[j] >= threshold;
    return count > 1;
  };
  if (beta.arithmetic == BetaArithmetic::kFp64) {
    if (!repeats(row_max - beta.eps / scale)) return row_max;
    return row_max > 0 ? beta.beta * row_max : 0.0;
  }
  // fp32: what the GPU kernels compute with one FADD and one FMUL (IEEE single operations here
  // too: each is one correctly rounded float operation on float operands).
  const float max32 = static_cast<float>(row_max);
  if (static_cast<double>(max32) != row_max) {
    throw std::domain_error("beta-rowmax in fp32 arithmetic needs fp32 scores; the block max " +
                            std::to_string(row_max) + " is not a float");
  }
  const float threshold = max32 - static_cast<float>(beta.eps / scale);
  if (!repeats(threshold)) return row_max;
  return max32 > 0 ? static_cast<double>(static_cast<float>(beta.beta) * max32) : 0.0;
}

}  // namespace simprec::attention
