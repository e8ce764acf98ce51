// Every key block forms the exponent argument as exp_impl says.
#include "lib/attention/strategies/flex_compile.hpp"

namespace simprec::attention {
namespace {

class None final : public FlexCompile {
 public:
  None() : FlexCompile({.name = "none", .doc = "exp_impl holds in every key block"}) {}
  bool unfused(const AttentionConfig&, const BlockGrid&, int64_t, int64_t) const override {
    return false;
  }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(None)

}  // namespace simprec::attention
