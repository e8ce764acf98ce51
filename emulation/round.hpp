// The one rounding kernel: every conversion and operation ends here, rounding an exact value
// once into a format with integer arithmetic only (no floating-point environment involved).
#pragma once

#include <cstdint>

#include "emulation/format.hpp"
#include "emulation/random.hpp"
#include "emulation/rounding_mode.hpp"
#include "emulation/unrounded.hpp"

namespace simprec {

// Rounds `value` into `format`. `random` is consumed only by the random modes: stochastic
// rounding uses its top rounding.sr_bits bits, random-tie rounding its lowest bit.
// Returns the encoding (sign bit at format.width() - 1).
uint64_t round_to_format(const Format& format, const Unrounded& value, const Rounding& rounding,
                         uint32_t random = 0);

// The exact value of an encoding (every format here fits in a double).
double decode(const Format& format, uint64_t bits);
// The encoding split into sign, exponent and integer significand (exact).
Unrounded unpack(const Format& format, uint64_t bits);

// Rounding mode, random stream and format in one place: what an operation needs to round.
// Each rounding in a random mode takes the next index of the stream, so a sequence of
// operations on one context is reproducible; give parallel tasks their own stream.
class RoundingContext {
 public:
  explicit RoundingContext(Format format, Rounding rounding = {}, RandomStream random = {},
                           uint64_t first_index = 0)
      : format_(format), rounding_(rounding), random_(random), next_index_(first_index) {}

  const Format& format() const { return format_; }
  const Rounding& rounding() const { return rounding_; }
  const RandomStream& random_stream() const { return random_; }
  uint64_t next_index() const { return next_index_; }
  void set_next_index(uint64_t index) { next_index_ = index; }

  uint64_t round(const Unrounded& value) {
    return round_to_format(format_, value, rounding_, draw());
  }
  uint64_t round(double x) { return round(unrounded_from_double(x)); }
  // Rounded, then decoded: the value as a double.
  double round_value(double x) { return decode(format_, round(x)); }

  // The random word for the next rounding (0 and no draw in deterministic modes).
  uint32_t draw() {
    return uses_random_bits(rounding_.mode) ? random_bits(random_, next_index_++) : 0;
  }

 private:
  Format format_;
  Rounding rounding_;
  RandomStream random_;
  uint64_t next_index_;
};

}  // namespace simprec
