// A format with other overflow and subnormal policies, for tests that sweep the policies.
#pragma once

#include "emulation/format.hpp"

namespace simprec::testing {

inline Format with(Format f, OverflowPolicy o, SubnormalPolicy s = SubnormalPolicy::kKeep) {
  f.overflow = o;
  f.subnormals = s;
  return f;
}

}  // namespace simprec::testing
