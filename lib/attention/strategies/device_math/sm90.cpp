// The H100's (sm_90) special function unit and libdevice, as a CUDA kernel built without
// --use_fast_math calls them: exp2f is ex2.approx.ftz.f32 and __logf lg2.approx.ftz.f32 times
// ln 2 (measured exhaustively on the H100, emulation/device_math/sm90_mufu.hpp); expf, logf and
// log2f are libdevice's instruction sequences around them (libdevice_expf_logf.hpp,
// libdevice_log2f.hpp), and tanhf libdevice's (libdevice_tanhf.hpp), bit-exact against the device.
#include "emulation/device_math/libdevice_expf_logf.hpp"
#include "emulation/device_math/libdevice_log2f.hpp"
#include "emulation/device_math/libdevice_tanhf.hpp"
#include "emulation/device_math/sm90_mufu.hpp"
#include "lib/attention/strategies/device_math.hpp"

namespace simprec::attention {
namespace {

class Sm90 final : public DeviceMath {
 public:
  Sm90()
      : DeviceMath({.name = "sm90",
                    .doc = "the H100's ex2.approx.ftz (exp2f), lg2.approx.ftz times ln 2 "
                           "(__logf; the log below 1 unmodelled: rounded at the site), and "
                           "libdevice's expf, logf, log2f and tanhf",
                    .tags = {"fast-log"}}) {}

  std::optional<float> exp2(float x) const override { return device_math::sm90_ex2_approx_ftz(x); }
  std::optional<float> exp(float x) const override { return device_math::libdevice_expf(x); }
  std::optional<float> log(float x) const override { return device_math::libdevice_logf(x); }
  std::optional<float> fast_log(float x) const override { return device_math::sm90_fast_logf(x); }
  std::optional<float> log2(float x) const override { return device_math::libdevice_log2f(x); }
  std::optional<float> tanh(float x) const override { return device_math::libdevice_tanhf(x); }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(Sm90)

}  // namespace simprec::attention
