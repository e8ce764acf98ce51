#include "lib/validate/function_emulation.hpp"

#include <algorithm>
#include <bit>
#include <optional>
#include <stdexcept>

#include "emulation/cancellation.hpp"
#include "emulation/elementary.hpp"
#include "lib/attention/device_math_values.hpp"
#include "lib/attention/strategy.hpp"
#include "lib/validate/tensor_values.hpp"

namespace simprec::validate {
namespace {

using Evaluate = uint64_t (*)(RoundingContext&, double);

// The correctly rounded form of a function, or nullptr for one it has none of.
Evaluate correctly_rounded(const std::string& function) {
  if (function == "exp") return exp_of;
  if (function == "exp2") return exp2_of;
  if (function == "log" || function == "fast_log") return log_of;
  if (function == "log2") return log2_of;
  return nullptr;
}

}  // namespace

void emulate_function(const EmulationCall& call, std::vector<plugins::HostTensor>& outputs) {
  const plugins::HostTensor* x = find_input(call, "x");
  auto y =
      std::find_if(outputs.begin(), outputs.end(), [](const auto& t) { return t.name == "y"; });
  if (!x || y == outputs.end())
    throw std::invalid_argument("function emulation needs input x and output y");
  const std::string function = attribute_text(call.kernel, "function", "");
  const plugins::HostTensor* d = find_input(call, "d");
  if (function == "div" && !d)
    throw std::invalid_argument("kernel '" + call.kernel.name + "': div needs the divisor d");
  if (call.model == "correctly-rounded") {
    const Evaluate evaluate = correctly_rounded(function);
    if (!evaluate || function == "log2" || function == "fast_log") {
      throw std::invalid_argument("kernel '" + call.kernel.name + "': function '" + function +
                                  "' cannot be emulated correctly rounded (known: exp, exp2, log)");
    }
    RoundingContext ctx(parse_format(y->format));
    for (int64_t i = 0; i < x->element_count(); ++i) {
      if (i % 4096 == 0) throw_if_cancelled();  // validate's time limit
      set_value(*y, i, decode(ctx.format(), evaluate(ctx, value_at(*x, i))));
    }
    return;
  }
  const attention::Strategy* s = attention::strategy_registry().find("device_math", call.model);
  if (!s) {
    throw std::invalid_argument(
        "device functions are emulated with model 'correctly-rounded' or "
        "a device_math strategy, not '" +
        call.model + "'");
  }
  const auto& math = static_cast<const attention::DeviceMath&>(*s);
  (void)attention::device_math_value(math, function, 1.0f);  // an unknown function is refused
  if (x->format != "fp32" || y->format != "fp32" || (d && d->format != "fp32")) {
    throw std::invalid_argument("kernel '" + call.kernel.name + "': model '" + call.model +
                                "' emulates fp32 arguments and results only");
  }
  RoundingContext ctx(formats::fp32);
  const Evaluate fallback = correctly_rounded(function);
  for (int64_t i = 0; i < x->element_count(); ++i) {
    if (i % 4096 == 0) throw_if_cancelled();
    const float a = std::bit_cast<float>(static_cast<uint32_t>(x->bits_at(i)));
    const float b = d ? std::bit_cast<float>(static_cast<uint32_t>(d->bits_at(i))) : 1.0f;
    const std::optional<float> v = attention::device_math_value(math, function, a, b);
    float r;
    if (v) {
      r = *v;
    } else if (fallback) {
      r = static_cast<float>(decode(formats::fp32, fallback(ctx, a)));
    } else {
      r = function == "rcp" ? 1.0f / a : a / b;  // IEEE's fp32 division, correctly rounded
    }
    y->set_bits_at(i, std::bit_cast<uint32_t>(r));
  }
}

}  // namespace simprec::validate
