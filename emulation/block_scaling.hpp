// Block-scaled tensors, the common shape of MX (OCP Microscaling v1.0) and NVFP4 quantization:
// values split into blocks along the last axis, one shared scale per block, every value stored
// as an encoding of a narrow element format, and (NVFP4) one more scale for the whole tensor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "emulation/format.hpp"
#include "emulation/random.hpp"
#include "emulation/rounding_mode.hpp"

namespace simprec {

// Rows of `row_length` values (the last axis; the rows are everything before it), each cut
// into blocks of `block_size` values from its start; a row's last block may be shorter.
struct BlockLayout {
  size_t row_length = 0;
  size_t block_size = 32;

  size_t blocks_per_row() const { return (row_length + block_size - 1) / block_size; }
  // Throws std::invalid_argument unless `values` is a whole number of rows.
  size_t rows(size_t values) const;
  size_t block_count(size_t values) const { return rows(values) * blocks_per_row(); }
  // Block index of value i (blocks numbered row by row).
  size_t block_of(size_t i) const {
    return i / row_length * blocks_per_row() + i % row_length / block_size;
  }
};

// How the elements are rounded. Value i of the tensor takes random index i of the stream.
struct ElementRounding {
  Rounding rounding;
  RandomStream random;
};

struct BlockScaled {
  BlockLayout layout;
  Format element;                 // the format of `elements`
  Format scale;                   // the format of `scales` (E8M0 for MX, e4m3fn for NVFP4)
  std::vector<uint8_t> elements;  // one encoding per value, in the input's order
  std::vector<uint8_t> scales;    // one encoding per block
  double tensor_scale = 1.0;      // NVFP4's fp32 per-tensor decode scale; 1 for MX

  // element x block scale x tensor scale, exactly (every product fits in a double); NaN when
  // the block's scale is NaN, whatever the element.
  double dequantized(size_t i) const;
};

}  // namespace simprec
