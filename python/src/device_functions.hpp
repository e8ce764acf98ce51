// Device functions from Python: callables a user supplies for the kernel's exp2, exp, log, log2,
// reciprocal and division (simprec.attention(device_functions=...), simprec.validate), evaluated
// in one batched call per function (lib/attention/device_function.hpp).
#pragma once

#include <pybind11/pybind11.h>

#include "lib/attention/device_function.hpp"

namespace simprec::python {

// {"exp": callable, ...} (None or empty: none). Each callable takes float32 numpy arrays (div:
// x and the divisor) and returns as many float32 values; it is called with the GIL, from the
// thread the emulation runs on. Throws ValueError for an unknown name, TypeError for a value that
// is not callable.
attention::DeviceFunctions device_functions_argument(const pybind11::object& functions);

}  // namespace simprec::python
