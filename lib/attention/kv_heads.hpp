// Grouped-query and multi-query attention: K and V with fewer heads than Q. Each query head's
// problem is computed as with its key/value head copied to it; the gradients of a key/value head
// are then the sum over its group of query heads of theirs, as PyTorch's flash backend forms
// them (flash_api.cpp: each head's dK and dV written in the output format, then at::sum over the
// group, which accumulates in fp32 for 16-bit formats).
#pragma once

#include <vector>

#include "lib/attention/tensors.hpp"

namespace simprec::attention {

// The inputs with K and V repeated to every query head (the shape no longer grouped).
AttentionInputs with_kv_heads_expanded(const AttentionInputs& grouped);

// dK or dV of the expanded run ([B, H, n, width]) reduced over each group into
// [B, Hkv, n, width], the group's heads in increasing order: `combine` takes the value so far and
// the next head's (a sum: the rounded addition), `finish` the result (a sum: its cast).
template <class Combine, class Finish>
std::vector<double> combined_over_groups(const std::vector<double>& expanded,
                                         const AttentionShape& grouped, int64_t n, int64_t width,
                                         Combine combine, Finish finish) {
  const int64_t group = grouped.heads / grouped.kv_heads(), block = n * width;
  std::vector<double> out(static_cast<size_t>(grouped.kv_problems() * block));
  for (int64_t kp = 0; kp < grouped.kv_problems(); ++kp) {
    const int64_t first =
        (kp / grouped.kv_heads()) * grouped.heads + (kp % grouped.kv_heads()) * group;
    for (int64_t x = 0; x < block; ++x) {
      double value = expanded[static_cast<size_t>(first * block + x)];
      for (int64_t g = 1; g < group; ++g)
        value = combine(value, expanded[static_cast<size_t>((first + g) * block + x)]);
      out[static_cast<size_t>(kp * block + x)] = finish(value);
    }
  }
  return out;
}

}  // namespace simprec::attention
