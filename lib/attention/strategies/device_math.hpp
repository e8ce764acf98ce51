// Slot device_math: the device functions a kernel calls for exp2, exp and log. Each is asked for
// an fp32 argument at a site that rounds to fp32 nearest-even; a function without a value there
// (std::nullopt) leaves the correctly rounded result rounded at the site, as it is everywhere
// else. One file per strategy in device_math/.
#pragma once

#include <optional>

#include "lib/attention/strategy.hpp"

namespace simprec::attention {

class DeviceMath : public Strategy {
 public:
  static constexpr SlotInfo kSlot{"device_math",
                                  "the device functions for exp2, exp and log of fp32 values "
                                  "(elsewhere each is correctly rounded at its site)",
                                  "correctly-rounded", SlotScope::kAll};
  explicit DeviceMath(StrategyInfo info) : Strategy(kSlot, std::move(info)) {}

  virtual std::optional<float> exp2(float x) const { return std::nullopt; }      // exp2f
  virtual std::optional<float> exp(float x) const { return std::nullopt; }       // expf
  virtual std::optional<float> log(float x) const { return std::nullopt; }       // logf
  virtual std::optional<float> fast_log(float x) const { return std::nullopt; }  // __logf
  virtual std::optional<float> log2(float x) const { return std::nullopt; }      // log2f
};

}  // namespace simprec::attention
