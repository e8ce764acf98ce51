#include "emulation/block_scaling.hpp"

#include "emulation/round.hpp"

namespace simprec {

size_t BlockLayout::rows(size_t values) const {
  if (block_size == 0) throw std::invalid_argument("block size must be at least 1, got 0");
  if (row_length == 0) {
    if (values == 0) return 0;
    throw std::invalid_argument("a row length of 0 cannot hold " + std::to_string(values) +
                                " values");
  }
  if (values % row_length != 0) {
    throw std::invalid_argument(std::to_string(values) +
                                " values are not a whole number of rows of " +
                                std::to_string(row_length));
  }
  return values / row_length;
}

double BlockScaled::dequantized(size_t i) const {
  const double s = decode(scale, scales.at(layout.block_of(i)));
  return decode(element, elements.at(i)) * s * tensor_scale;
}

}  // namespace simprec
