// The C library's functions as a device_math strategy computes them: expf, exp2f, logf and log2f
// for fp32 values (logf also for __logf: a CPU has none) and exp, exp2, log and log2 for doubles,
// each one call into the installed libm (emulation/device_math/c_library.hpp). A CPU's 1.0f / x
// and x / y are IEEE's, correctly rounded: nothing to supply. The values are the running
// library's, so results record its version (device_math_library). glibc.cpp is this; numpy.cpp
// replaces exp and log with numpy's own.
#pragma once

#include "emulation/device_math/c_library.hpp"
#include "lib/attention/strategies/device_math.hpp"

namespace simprec::attention {

class CLibraryMath : public DeviceMath {
 public:
  using DeviceMath::DeviceMath;

  std::optional<float> exp2(float x) const override { return device_math::c_exp2f(x); }
  std::optional<float> exp(float x) const override { return device_math::c_expf(x); }
  std::optional<float> log(float x) const override { return device_math::c_logf(x); }
  std::optional<float> fast_log(float x) const override { return device_math::c_logf(x); }
  std::optional<float> log2(float x) const override { return device_math::c_log2f(x); }
  std::optional<double> exp2_f64(double x) const override { return device_math::c_exp2(x); }
  std::optional<double> exp_f64(double x) const override { return device_math::c_exp(x); }
  std::optional<double> log_f64(double x) const override { return device_math::c_log(x); }
  std::optional<double> log2_f64(double x) const override { return device_math::c_log2(x); }
  std::string library() const override { return device_math::c_library_version(); }
};

}  // namespace simprec::attention
