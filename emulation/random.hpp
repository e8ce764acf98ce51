// Counter-based random bits: a pure function of (seed, stream, index), so that results do not
// depend on thread count or the order in which elements are rounded.
#pragma once

#include <cstdint>

namespace simprec {

struct RandomStream {
  uint64_t seed = 0;
  uint64_t stream = 0;
  constexpr bool operator==(const RandomStream&) const = default;
};

// Philox4x32-10 (Random123) keyed by the seed, counter (index / 4, stream); element `index`
// takes word index % 4 of that block, so four consecutive indices cost one Philox call.
uint32_t random_bits(const RandomStream& rs, uint64_t index);

// Fills out[i] = random_bits(rs, first_index + i) for i < count; written to vectorise.
void fill_random_bits(const RandomStream& rs, uint64_t first_index, uint32_t* out, uint64_t count);

}  // namespace simprec
