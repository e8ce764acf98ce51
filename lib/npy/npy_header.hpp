// The header of a .npy file: a Python dict literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// read by a single left-to-right pass with no recursion, so that no header, however long or
// deeply nested, can exhaust the stack: a value may only be a string, True/False or a flat tuple
// of integers, and anything else is refused where it starts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace simprec {

// numpy's own limit on the number of dimensions (NPY_MAXDIMS of numpy 2).
inline constexpr size_t kMaxNpyDimensions = 64;

struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> shape;
};

// Exactly the keys 'descr' (a string), 'fortran_order' (True or False) and 'shape' (a tuple of
// at most kMaxNpyDimensions non-negative decimal integers), each once, in any order, with an
// optional trailing comma; then only spaces and the final newline. Throws std::invalid_argument
// saying at which byte what was found (a bounded excerpt) and what was expected.
NpyHeader parse_npy_header(std::string_view text);

}  // namespace simprec
