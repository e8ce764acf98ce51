#include "lib/validate/function_emulation.hpp"

#include <algorithm>
#include <stdexcept>

#include "emulation/cancellation.hpp"
#include "emulation/elementary.hpp"
#include "lib/validate/tensor_values.hpp"

namespace simprec::validate {

void emulate_function(const EmulationCall& call, std::vector<plugins::HostTensor>& outputs) {
  if (call.model != "correctly-rounded") {
    throw std::invalid_argument(
        "device functions can be emulated with model 'correctly-rounded' only, not '" + call.model +
        "'");
  }
  const plugins::HostTensor* x = find_input(call, "x");
  auto y =
      std::find_if(outputs.begin(), outputs.end(), [](const auto& t) { return t.name == "y"; });
  if (!x || y == outputs.end())
    throw std::invalid_argument("function emulation needs input x and output y");
  const std::string function = attribute_text(call.kernel, "function", "");
  uint64_t (*evaluate)(RoundingContext&, double) = nullptr;
  if (function == "exp") evaluate = exp_of;
  if (function == "exp2") evaluate = exp2_of;
  if (function == "log") evaluate = log_of;
  if (!evaluate) {
    throw std::invalid_argument("kernel '" + call.kernel.name + "': function '" + function +
                                "' cannot be emulated (known: exp, exp2, log)");
  }
  RoundingContext ctx(parse_format(y->format));
  for (int64_t i = 0; i < x->element_count(); ++i) {
    if (i % 4096 == 0) throw_if_cancelled();  // validate's time limit
    set_value(*y, i, decode(ctx.format(), evaluate(ctx, value_at(*x, i))));
  }
}

}  // namespace simprec::validate
