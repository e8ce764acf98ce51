// A Triton kernel's float32 functions on sm_90 as Triton 3.6 lowers them (its PTX,
// scripts/device_functions/README.md): tl.exp2 is ex2.approx.ftz.f32, tl.exp ex2.approx.f32 (no
// .ftz) of fp32(x log2 e), tl.log and tl.log2 libdevice's logf and log2f (fused multiply-adds, no
// lg2.approx), libdevice.tanh libdevice's tanhf with subnormal arguments flushed, and the fp32
// division x / y and 1.0 / x div.full.f32. Measured on the H200 over
// every fp32 argument (division: 2^24 pairs) as digests of blocks of 2^16 arguments
// (tests/data/device_math/h200_function_digests.txt); the model equal on every 4th block it has
// a value for throughout, and on every pair. tl.exp's subnormal results (x below about -87.3)
// are not modelled: rounded at the site.
#include "emulation/device_math/libdevice_expf_logf.hpp"
#include "emulation/device_math/libdevice_log2f.hpp"
#include "emulation/device_math/libdevice_tanhf.hpp"
#include "emulation/device_math/sm90_mufu.hpp"
#include "lib/attention/strategies/device_math.hpp"

namespace simprec::attention {
namespace {

namespace dm = device_math;

class TritonSm90 final : public DeviceMath {
 public:
  TritonSm90()
      : DeviceMath({.name = "triton-sm90",
                    .doc = "Triton 3.6 on sm_90: tl.exp2 ex2.approx.ftz, tl.exp ex2.approx of "
                           "fp32(x log2e) (subnormal results unmodelled), tl.log and tl.log2 "
                           "libdevice's logf and log2f, libdevice.tanh (tanhf, subnormals "
                           "flushed), x/y and 1/x "
                           "div.full.f32: equal to the "
                           "H200 on every 4th block of 2^16 fp32 arguments"}) {}

  std::optional<float> exp2(float x) const override { return dm::sm90_ex2_approx_ftz(x); }
  std::optional<float> exp(float x) const override { return dm::sm90_triton_expf(x); }
  std::optional<float> log(float x) const override { return dm::libdevice_logf(x); }
  std::optional<float> fast_log(float x) const override { return dm::libdevice_logf(x); }
  std::optional<float> log2(float x) const override { return dm::libdevice_log2f(x); }
  std::optional<float> rcp(float x) const override { return dm::sm90_div_full(1.0f, x); }
  std::optional<float> div(float x, float y) const override { return dm::sm90_div_full(x, y); }
  std::optional<float> tanh(float x) const override { return dm::triton_tanhf(x); }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(TritonSm90)

}  // namespace simprec::attention
