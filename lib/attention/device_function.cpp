#include "lib/attention/device_function.hpp"

#include <stdexcept>
#include <string>

namespace simprec::attention {

std::string_view device_fn_name(DeviceFn fn) {
  switch (fn) {
    case DeviceFn::kExp2:
      return "exp2";
    case DeviceFn::kExp:
      return "exp";
    case DeviceFn::kLog:
      return "log";
    case DeviceFn::kLog2:
      return "log2";
    case DeviceFn::kRcp:
      return "rcp";
    case DeviceFn::kDiv:
      return "div";
  }
  return "";
}

DeviceFn parse_device_fn(std::string_view name) {
  std::string known;
  for (const DeviceFn fn : kDeviceFns) {
    if (device_fn_name(fn) == name) return fn;
    known += (known.empty() ? "" : ", ") + std::string(device_fn_name(fn));
  }
  throw std::invalid_argument("unknown device function '" + std::string(name) +
                              "' (known: " + known + ")");
}

bool DeviceFunctions::has(DeviceFn fn) const {
  switch (fn) {
    case DeviceFn::kExp2:
      return static_cast<bool>(exp2);
    case DeviceFn::kExp:
      return static_cast<bool>(exp);
    case DeviceFn::kLog:
      return static_cast<bool>(log);
    case DeviceFn::kLog2:
      return static_cast<bool>(log2);
    case DeviceFn::kRcp:
      return static_cast<bool>(rcp);
    case DeviceFn::kDiv:
      return static_cast<bool>(div);
  }
  return false;
}

}  // namespace simprec::attention
