/* What the example plugins share: bf16 conversions, looking up a call's tensors and parameters
 * by name, and reporting a failure. A plugin of your own can copy this file with the examples. */
#ifndef SIMPREC_EXAMPLE_PLUGIN_HELPERS_H
#define SIMPREC_EXAMPLE_PLUGIN_HELPERS_H

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "plugins/simprec_plugin.h"

static inline float bf16_to_float(uint16_t bits) {
  const uint32_t wide = (uint32_t)bits << 16; /* bf16 is the top half of a float */
  float f;
  memcpy(&f, &wide, sizeof f);
  return f;
}

/* Round to nearest even into bf16: adding 0x7fff plus the lowest kept bit carries into the kept
 * bits exactly when the dropped half is above one half, or exactly one half with an odd kept
 * part. NaN is kept quiet rather than rounded (the carry could turn it into infinity). */
static inline uint16_t float_to_bf16(float f) {
  uint32_t bits;
  memcpy(&bits, &f, sizeof bits);
  if (isnan(f)) return (uint16_t)((bits >> 16) | 0x0040);
  bits += 0x7fff + ((bits >> 16) & 1);
  return (uint16_t)(bits >> 16);
}

static inline const SimprecTensor* find_tensor(const SimprecRunArgs* args, const char* name) {
  for (size_t i = 0; i < args->tensor_count; ++i) {
    if (strcmp(args->tensors[i]->name, name) == 0) return args->tensors[i];
  }
  return NULL;
}

static inline const SimprecNamedValue* find_parameter(const SimprecRunArgs* args,
                                                      const char* name) {
  for (size_t i = 0; i < args->parameter_count; ++i) {
    if (strcmp(args->parameters[i]->name, name) == 0) return args->parameters[i];
  }
  return NULL;
}

static inline SimprecStatus fail(const SimprecRunArgs* args, SimprecStatus status,
                                 const char* message) {
  if (args->error && args->error_size > 0) snprintf(args->error, args->error_size, "%s", message);
  return status;
}

#endif
