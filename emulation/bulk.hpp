// Rounding whole arrays: a vectorised integer kernel for the common cases, the scalar kernel
// for the rest (NaN, infinity, overflow, deep underflow, flushed subnormals), threads for large
// arrays. Element i takes random index first_index + i, so the output does not depend on the
// thread count.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "emulation/format.hpp"
#include "emulation/random.hpp"
#include "emulation/rounding_mode.hpp"

namespace simprec {

struct BulkRounding {
  Format format;
  Rounding rounding;
  RandomStream random;
  uint64_t first_index = 0;
  // 0: resolve_threads(0) (parallel.hpp); only arrays large enough to gain from them are split.
  unsigned threads = 0;
};

// Encodings out. `out` must be as long as `in`, with an element type at least format.width()
// bits wide (uint8_t, uint16_t, uint32_t or uint64_t). Throws std::invalid_argument otherwise.
template <class In, class Bits>
void round_to_bits(std::span<const In> in, std::span<Bits> out, const BulkRounding& spec);

// Rounded values out (the decoded encodings), as the input type; `out` may alias `in`.
template <class In>
void round_to_values(std::span<const In> in, std::span<In> out, const BulkRounding& spec);

// Decoding encodings back to values.
template <class Bits, class Out>
void decode_bits(const Format& format, std::span<const Bits> in, std::span<Out> out);

// The index of the first of `values` that `format` does not hold (rounding it to nearest even
// changes its bits; a NaN is held where it rounds to a NaN), or values.size() where it holds
// every one. Rounded in bulk, one thread.
size_t first_value_not_held(const Format& format, std::span<const float> values);

}  // namespace simprec
