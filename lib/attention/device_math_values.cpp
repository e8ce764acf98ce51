#include "lib/attention/device_math_values.hpp"

#include <stdexcept>
#include <string>

namespace simprec::attention {

std::optional<float> device_math_value(const DeviceMath& math, std::string_view function, float x,
                                       float y) {
  if (function == "exp2") return math.exp2(x);
  if (function == "exp") return math.exp(x);
  if (function == "log") return math.log(x);
  if (function == "fast_log") return math.fast_log(x);
  if (function == "log2") return math.log2(x);
  if (function == "rcp") return math.rcp(x);
  if (function == "div") return math.div(x, y);
  if (function == "tanh") return math.tanh(x);
  throw std::invalid_argument("unknown device function '" + std::string(function) +
                              "' (known: " + std::string(device_math_function_names()) + ")");
}

std::string_view device_math_function_names() {
  return "exp2, exp, log, fast_log, log2, rcp, div, tanh";
}

}  // namespace simprec::attention
