// Slot device_math: the functions a kernel calls for exp2, exp, log, log2, the reciprocal, the
// division and tanh. Each fp32 function is asked for fp32 arguments at a site that rounds to fp32
// nearest-even, each fp64 one for a double at a site that keeps doubles (fp64 nearest-even); a
// function without a value there (std::nullopt) leaves the correctly rounded result rounded at
// the site, as it is everywhere else. One file per strategy in device_math/.
#pragma once

#include <optional>
#include <string>

#include "lib/attention/strategy.hpp"

namespace simprec::attention {

class DeviceMath : public Strategy {
 public:
  static constexpr SlotInfo kSlot{
      "device_math",
      "the functions for exp2, exp, log, 1/x, x/y and tanh of fp32 (and "
      "exp, log of fp64) values (elsewhere each is correctly rounded "
      "at its site)",
      "correctly-rounded", SlotScope::kAll};
  explicit DeviceMath(StrategyInfo info) : Strategy(kSlot, std::move(info)) {}

  virtual std::optional<float> exp2(float x) const { return std::nullopt; }          // exp2f
  virtual std::optional<float> exp(float x) const { return std::nullopt; }           // expf
  virtual std::optional<float> log(float x) const { return std::nullopt; }           // logf
  virtual std::optional<float> fast_log(float x) const { return std::nullopt; }      // __logf
  virtual std::optional<float> log2(float x) const { return std::nullopt; }          // log2f
  virtual std::optional<float> rcp(float x) const { return std::nullopt; }           // 1.0f / x
  virtual std::optional<float> div(float x, float y) const { return std::nullopt; }  // x / y
  virtual std::optional<float> tanh(float x) const { return std::nullopt; }          // tanhf
  // The double functions exp2, exp, log and log2 (log also where the kernel's fp32 code says
  // __logf).
  virtual std::optional<double> exp2_f64(double x) const { return std::nullopt; }
  virtual std::optional<double> exp_f64(double x) const { return std::nullopt; }
  virtual std::optional<double> log_f64(double x) const { return std::nullopt; }
  virtual std::optional<double> log2_f64(double x) const { return std::nullopt; }

  // The library the values come from where they depend on the machine ("glibc 2.36"), which
  // results record (device_math_library in the configuration's JSON); empty where they do not.
  virtual std::string library() const { return {}; }
};

}  // namespace simprec::attention
