// The x86-64 level whose kernels run on this CPU. The default build targets the x86-64
// baseline (it runs on any x86-64 machine and under valgrind); the few hot kernels are also
// compiled for x86-64-v3 (AVX2) and x86-64-v4 (AVX-512) and picked here at run time. Every
// level computes the same bits: only integer and exactly rounded float operations are
// vectorised, and floating-point contraction is off.
#pragma once

#include <string_view>

namespace simprec {

enum class CpuLevel { kBaseline, kV3, kV4 };

// The best level this CPU supports (in a SIMPREC_NATIVE build: the level it was compiled for),
// lowered by the environment variable SIMPREC_CPU_LEVEL
// ("baseline", "x86-64-v3" or "x86-64-v4") where set: tests run every level a machine has.
// Read once; an unknown value throws std::invalid_argument naming it.
CpuLevel cpu_level();

std::string_view cpu_level_name(CpuLevel level);

// The clone of a kernel for this CPU: for_this_cpu(f, f_v3, f_v4)(arguments...).
template <class Fn>
Fn for_this_cpu(Fn baseline, Fn v3, Fn v4) {
  switch (cpu_level()) {
    case CpuLevel::kV4:
      return v4;
    case CpuLevel::kV3:
      return v3;
    case CpuLevel::kBaseline:
      break;
  }
  return baseline;
}

}  // namespace simprec

// Attributes for the clones of a kernel, [[SIMPREC_TARGET_V3]] and [[SIMPREC_TARGET_V4]]: each
// clone inlines everything it calls (flatten), so that the inlined code is compiled for its
// level too. A build for one CPU (SIMPREC_NATIVE) or elsewhere than x86-64 with GCC compiles
// the clones as the baseline code again.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
    !defined(SIMPREC_NATIVE_BUILD)
#define SIMPREC_CPU_CLONES 1
#define SIMPREC_TARGET_V3 gnu::target("arch=x86-64-v3"), gnu::flatten
#define SIMPREC_TARGET_V4 gnu::target("arch=x86-64-v4,prefer-vector-width=512"), gnu::flatten
#else
#define SIMPREC_CPU_CLONES 0
#define SIMPREC_TARGET_V3 gnu::flatten
#define SIMPREC_TARGET_V4 gnu::flatten
#endif

// Whether the kernels written with AVX-512 intrinsics are compiled: as v4 clones, or in a build
// for a CPU that has AVX-512. They run only where cpu_level() is kV4.
#if SIMPREC_CPU_CLONES || (defined(__AVX512F__) && defined(__AVX512DQ__) && \
                           defined(__AVX512BW__) && defined(__AVX512VL__))
#define SIMPREC_AVX512_KERNELS 1
#else
#define SIMPREC_AVX512_KERNELS 0
#endif
// The same for the kernels written with AVX2 intrinsics (x86-64-v3 clones).
#if SIMPREC_CPU_CLONES || defined(__AVX2__)
#define SIMPREC_AVX2_KERNELS 1
#else
#define SIMPREC_AVX2_KERNELS 0
#endif
