// The run-time choice of kernel level: SIMPREC_CPU_LEVEL picks a level the machine has (the
// tests registered per level in tests/CMakeLists.txt rely on it), and never raises it above
// what the CPU supports.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "emulation/cpu_level.hpp"

namespace {

using simprec::CpuLevel;

TEST(CpuLevel, NamesAreDistinct) {
  EXPECT_EQ(simprec::cpu_level_name(CpuLevel::kBaseline), "baseline");
  EXPECT_EQ(simprec::cpu_level_name(CpuLevel::kV3), "x86-64-v3");
  EXPECT_EQ(simprec::cpu_level_name(CpuLevel::kV4), "x86-64-v4");
}

TEST(CpuLevel, FollowsTheEnvironmentWhereTheCpuHasTheLevel) {
  const char* requested = std::getenv("SIMPREC_CPU_LEVEL");
  const std::string name(simprec::cpu_level_name(simprec::cpu_level()));
  if (requested == nullptr || *requested == '\0') {
    // Unset: the highest level the CPU has, where the clones are compiled; the baseline
    // otherwise (or this build's own level in a native build).
#if SIMPREC_CPU_CLONES
    const char* highest = __builtin_cpu_supports("x86-64-v4")   ? "x86-64-v4"
                          : __builtin_cpu_supports("x86-64-v3") ? "x86-64-v3"
                                                                : "baseline";
    EXPECT_EQ(name, highest);
#elif !defined(SIMPREC_NATIVE_BUILD)
    EXPECT_EQ(name, "baseline");
#endif
    return;
  }
  const std::string wanted(requested);
  bool has = wanted == "baseline";
// GCC names the levels in __builtin_cpu_supports; where the clones are compiled (cpu_level.hpp),
// it is GCC.
#if SIMPREC_CPU_CLONES
  has |= wanted == "x86-64-v3" && __builtin_cpu_supports("x86-64-v3");
  has |= wanted == "x86-64-v4" && __builtin_cpu_supports("x86-64-v4");
#endif
  if (!has) GTEST_SKIP() << "this CPU lacks " << wanted << "; running " << name;
  EXPECT_EQ(name, wanted);
}

}  // namespace
