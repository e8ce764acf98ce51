#include "lib/attention/lane_reduction.hpp"

#include <algorithm>

namespace simprec::attention {

std::vector<int> LaneReduction::offsets_down(int threads) {
  std::vector<int> offsets = offsets_up(threads);
  std::reverse(offsets.begin(), offsets.end());
  return offsets;
}

std::vector<int> LaneReduction::offsets_up(int threads) {
  std::vector<int> offsets;
  for (int o = 1; o < threads; o *= 2) offsets.push_back(o);
  return offsets;
}

void LaneReduction::elements(int thread, int64_t n, std::vector<int64_t>& out) const {
  const int64_t stride = int64_t{threads_} * chunk_;
  for (int64_t c0 = int64_t{thread} * chunk_; c0 < n; c0 += stride) {
    for (int64_t c = c0; c < std::min(n, c0 + chunk_); ++c) out.push_back(c);
  }
}

}  // namespace simprec::attention
