#include "emulation/cpu_level.hpp"

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace simprec {
namespace {

CpuLevel supported_level() {
#if SIMPREC_CPU_CLONES
  __builtin_cpu_init();
  if (__builtin_cpu_supports("x86-64-v4")) return CpuLevel::kV4;
  if (__builtin_cpu_supports("x86-64-v3")) return CpuLevel::kV3;
#elif SIMPREC_AVX512_KERNELS
  return CpuLevel::kV4;
#elif defined(__AVX2__) && defined(__FMA__)
  return CpuLevel::kV3;
#endif
  return CpuLevel::kBaseline;
}

CpuLevel detect() {
  const CpuLevel supported = supported_level();
  const char* text = std::getenv("SIMPREC_CPU_LEVEL");
  if (text == nullptr || *text == '\0') return supported;
  for (CpuLevel level : {CpuLevel::kBaseline, CpuLevel::kV3, CpuLevel::kV4}) {
    if (cpu_level_name(level) == text) return level < supported ? level : supported;
  }
  throw std::invalid_argument("SIMPREC_CPU_LEVEL is '" + std::string(text) +
                              "'; expected baseline, x86-64-v3 or x86-64-v4");
}

}  // namespace

CpuLevel cpu_level() {
  static const CpuLevel level = detect();
  return level;
}

std::string_view cpu_level_name(CpuLevel level) {
  switch (level) {
    case CpuLevel::kBaseline:
      return "baseline";
    case CpuLevel::kV3:
      return "x86-64-v3";
    case CpuLevel::kV4:
      return "x86-64-v4";
  }
  return "?";
}

}  // namespace simprec
