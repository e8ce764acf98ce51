// A CUDA kernel built with --use_fast_math for sm_90, as nvcc 13.0 compiles it (its PTX,
// scripts/device_functions/README.md): expf is ex2.approx.ftz of fp32(x log2 e) (= __expf), logf
// lg2.approx.ftz times fp32(ln 2) (= __logf), exp2f ex2.approx.ftz, log2f lg2.approx.ftz, 1.0f / x
// rcp.approx.ftz and x / y div.approx.ftz, from the tables measured on the H100
// (emulation/device_math/sm90_mufu.hpp). Measured on the H200 over every fp32 argument (division:
// 2^24 pairs) as digests of blocks of 2^16 (tests/data/device_math/h200_function_digests.txt): the
// model equal on every 4th block it has a value for throughout, and on every pair;
// lg2.approx of a normal x in (0, 1) is not modelled: rounded at the site.
#include "emulation/device_math/sm90_mufu.hpp"
#include "lib/attention/strategies/device_math.hpp"

namespace simprec::attention {
namespace {

namespace dm = device_math;

class Sm90FastMath final : public DeviceMath {
 public:
  Sm90FastMath()
      : DeviceMath({.name = "sm90-fast-math",
                    .doc = "CUDA --use_fast_math on sm_90: ex2.approx.ftz (exp2f), of "
                           "fp32(x log2e) (expf, __expf), lg2.approx.ftz (log2f) times ln 2 "
                           "(logf, __logf; normal x below 1 unmodelled), rcp.approx.ftz (1/x), "
                           "div.approx.ftz (x/y): equal to the H200 on every 4th block of 2^16 "
                           "fp32 arguments",
                    .needs = {},
                    .tags = {"fast-log"},
                    .draws = {}}) {}

  std::optional<float> exp2(float x) const override { return dm::sm90_ex2_approx_ftz(x); }
  std::optional<float> exp(float x) const override { return dm::sm90_fast_expf(x); }
  std::optional<float> log(float x) const override { return dm::sm90_fast_logf(x); }
  std::optional<float> fast_log(float x) const override { return dm::sm90_fast_logf(x); }
  std::optional<float> log2(float x) const override { return dm::sm90_lg2_approx_ftz(x); }
  std::optional<float> rcp(float x) const override { return dm::sm90_rcp_approx_ftz(x); }
  std::optional<float> div(float x, float y) const override {
    return dm::sm90_div_approx_ftz(x, y);
  }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(Sm90FastMath)

}  // namespace simprec::attention
