/* CPFloat's cpfloatf (github.com/north-numerical-computing/cpfloat) behind a small C function,
 * so that rounding_bench can time it beside simprec in the same run. Built only when the CMake
 * option SIMPREC_CPFLOAT_DIR names a CPFloat checkout (see bench/CMakeLists.txt). */
#ifndef SIMPREC_BENCH_CPFLOAT_BASELINE_H
#define SIMPREC_BENCH_CPFLOAT_BASELINE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum cpfloat_baseline_rounding {
  CPFLOAT_BASELINE_NEAREST_EVEN,
  CPFLOAT_BASELINE_TOWARD_ZERO,
  CPFLOAT_BASELINE_STOCHASTIC
};

/* A target format as CPFloat describes it: precision (significand bits with the hidden one),
 * normal exponent range, and whether it has infinities. */
struct cpfloat_baseline_format {
  int precision;
  int emin;
  int emax;
  int has_infinity;
};

/* An opaque CPFloat option set; NULL when the options are refused. */
struct cpfloat_baseline;
struct cpfloat_baseline* cpfloat_baseline_create(struct cpfloat_baseline_format format,
                                                 enum cpfloat_baseline_rounding rounding);
/* Rounds n floats; returns CPFloat's status (0: done). */
int cpfloat_baseline_round(struct cpfloat_baseline* options, float* out, const float* in, size_t n);
void cpfloat_baseline_destroy(struct cpfloat_baseline* options);

#ifdef __cplusplus
}
#endif

#endif
