// Checking the arguments that come from Python: formats and rounding modes by name, and numpy
// arrays by dtype, shape and layout. Every failure raises ValueError or TypeError naming the
// argument and what was expected.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "emulation/format.hpp"
#include "emulation/rounding_mode.hpp"
#include "lib/limits/memory_bound.hpp"
#include "lib/npy/npy.hpp"

namespace simprec::python {

// A format name with the policies: overflow "inf", "saturate", "nan" or None (the format's
// own); subnormals false flushes them.
Format format_argument(const std::string& name, const std::optional<std::string>& overflow = {},
                       bool subnormals = true);
Rounding rounding_argument(const std::string& mode, int sr_bits);

// "float32", "uint16", ... of a dtype and of an array.
std::string dtype_text(const pybind11::dtype& dtype);
std::string dtype_name(const pybind11::array& a);
std::string shape_text(const pybind11::array& a);

// Raises TypeError unless `object` is a numpy array, ValueError unless it is C-contiguous
// (`argument` names it in the message).
pybind11::array array_argument(const pybind11::handle& object, const char* argument);
// The shape as a vector.
std::vector<int64_t> shape_of(const pybind11::array& a);
// The npy type of the array's dtype; TypeError naming the argument and `expected` otherwise.
NpyType npy_type_of(const pybind11::array& a, const char* argument, const std::string& expected);
// A copy of the array as an NpyArray (for code that reads .npy files).
NpyArray npy_copy(const pybind11::array& a, const char* argument, const std::string& expected);
// A new numpy array holding the NpyArray's data (moved, not copied).
pybind11::array numpy_of(NpyArray&& array);
// A new float64 numpy array of that shape holding `values` (moved, not copied).
pybind11::array numpy_of(std::vector<double>&& values, const std::vector<int64_t>& shape);

// The unsigned integer dtype of a format's encodings: uint8, uint16, uint32 or uint64.
pybind11::dtype encoding_dtype(const Format& format);

// The memory bound from `max_memory`: None (the machine's physical memory), a size as the CLI's
// --max-memory takes it ("512M", "4G") or a number of bytes. ValueError otherwise.
limits::MemoryLimit memory_limit_argument(const pybind11::object& max_memory);
// Raises MemoryError (as numpy does for an array too large) when the estimate exceeds the limit:
// "WHAT needs an estimated X of memory, more than LIMIT (SOURCE); max_memory= sets the limit".
void check_memory_argument(const limits::MemoryEstimate& estimate, const limits::MemoryLimit& limit,
                           const std::string& what);
// Raises MemoryError with the message and that hint.
[[noreturn]] void raise_memory_error(const std::string& message);

}  // namespace simprec::python
