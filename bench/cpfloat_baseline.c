#include "cpfloat_baseline.h"

#include <cpfloat_binary32.h>

struct cpfloat_baseline {
  optstruct* options;
};

struct cpfloat_baseline* cpfloat_baseline_create(struct cpfloat_baseline_format format,
                                                 enum cpfloat_baseline_rounding rounding) {
  struct cpfloat_baseline* baseline = malloc(sizeof *baseline);
  if (baseline == NULL) return NULL;
  optstruct* o = init_optstruct();
  strcpy(o->format, "custom");
  o->precision = (cpfloat_precision_t)format.precision;
  o->emin = format.emin;
  o->emax = format.emax;
  o->explim = CPFLOAT_EXPRANGE_TARG;
  o->infinity = format.has_infinity ? CPFLOAT_INF_USE : CPFLOAT_INF_NO;
  o->round = rounding == CPFLOAT_BASELINE_NEAREST_EVEN  ? CPFLOAT_RND_NE
             : rounding == CPFLOAT_BASELINE_TOWARD_ZERO ? CPFLOAT_RND_TZ
                                                        : CPFLOAT_RND_SP;
  o->saturation = CPFLOAT_SAT_NO;
  o->subnormal = CPFLOAT_SUBN_USE;
  o->flip = CPFLOAT_SOFTERR_NO;
  o->p = 0;
  if (cpfloat_validate_optstructf(o) < 0) {
    free_optstruct(o);
    free(baseline);
    return NULL;
  }
  baseline->options = o;
  return baseline;
}

int cpfloat_baseline_round(struct cpfloat_baseline* baseline, float* out, const float* in,
                           size_t n) {
  return cpfloatf(out, in, n, baseline->options);
}

void cpfloat_baseline_destroy(struct cpfloat_baseline* baseline) {
  if (baseline == NULL) return;
  free_optstruct(baseline->options);
  free(baseline);
}
