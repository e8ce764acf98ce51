// A device_math strategy's functions by name, for callers outside the engine (Python's
// simprec.device_function, validate's function kernels, tests): "exp2", "exp", "log",
// "fast_log" (__logf), "log2", "rcp" (1.0f / x) and "div" (x / y) of fp32 values.
#pragma once

#include <optional>
#include <string_view>

#include "lib/attention/strategies/device_math.hpp"

namespace simprec::attention {

// The strategy's value of `function` at x (and y, div's divisor); nullopt where it has none.
// Throws std::invalid_argument for an unknown function name.
std::optional<float> device_math_value(const DeviceMath& math, std::string_view function, float x,
                                       float y = 1.0f);
// "exp2, exp, log, fast_log, log2, rcp, div".
std::string_view device_math_function_names();

}  // namespace simprec::attention
