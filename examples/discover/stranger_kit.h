/* What the strangers' kernels of examples/discover share: 16-bit conversions with the rounding
 * each kernel chooses, correctly rounded exp, exp2 and log of floats, and the plugin ABI's
 * look-ups (bf16 and the look-ups come from examples/plugin/plugin_helpers.h). The kernels are
 * written as a stranger would, without simprec's numerics in mind; `simprec discover` finds their
 * specs (docs/discover.md). */
#ifndef SIMPREC_STRANGER_KIT_H
#define SIMPREC_STRANGER_KIT_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* bf16 conversions and the look-ups of a call's tensors and parameters, as the example plugins
 * have them. */
#include "../plugin/plugin_helpers.h"

static inline float half_to_float(uint16_t h) {
  const int exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  const float sign = (h & 0x8000) ? -1.0f : 1.0f;
  if (exponent == 0x1f) return mantissa ? NAN : sign * INFINITY;
  if (exponent == 0) return sign * ldexpf((float)mantissa, -24);
  return sign * ldexpf((float)(mantissa | 0x400), exponent - 25);
}

/* Into fp16 to nearest even (toward_zero = 0) or toward zero: a finite float is an integer
 * number n of the quantum of its fp16 binade, n rounded, and the encoding built from n (a
 * carry into the next binade, or out of the subnormals, falls out of the addition). */
static inline uint16_t float_to_half(float f, int toward_zero) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  const uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
  const float a = fabsf(f);
  if (isnan(f)) return (uint16_t)(sign | 0x7e00);
  if (isinf(f)) return (uint16_t)(sign | 0x7c00);
  int e = a > 0 ? ilogbf(a) : -25;
  if (e < -14) e = -14;
  const float quantum = ldexpf(1.0f, e - 10);
  const float n = toward_zero ? truncf(a / quantum) : nearbyintf(a / quantum);
  uint32_t bits =
      e == -14 && n < 1024 ? (uint32_t)n : (uint32_t)((e + 15) << 10) + (uint32_t)n - 1024;
  if (bits >= 0x7c00) bits = toward_zero ? 0x7bff : 0x7c00;
  return (uint16_t)(sign | bits);
}

/* exp, exp2 and log rounded once from double: correctly rounded for the floats met here. */
static inline float exp_cr(float x) {
  return (float)exp((double)x);
}
static inline float exp2_cr(float x) {
  return (float)exp2((double)x);
}
static inline float log_cr(float x) {
  return (float)log((double)x);
}

static inline int causal_parameter(const SimprecRunArgs* args) {
  const SimprecNamedValue* causal = find_parameter(args, "causal");
  return causal && causal->int64_value != 0;
}

/* The attention problem a forward kernel was called on: Q [B,H,Sq,D], K, V [B,H,Sk,D]. */
struct Problem {
  const SimprecTensor *q, *k, *v, *o, *lse;
  int64_t problems, sq, sk, d;
  int causal;
};

static inline struct Problem problem_of(const SimprecRunArgs* args) {
  struct Problem p;
  p.q = find_tensor(args, "Q");
  p.k = find_tensor(args, "K");
  p.v = find_tensor(args, "V");
  p.o = find_tensor(args, "O");
  p.lse = find_tensor(args, "LSE");
  p.problems = p.q->tensor->shape[0] * p.q->tensor->shape[1];
  p.sq = p.q->tensor->shape[2];
  p.d = p.q->tensor->shape[3];
  p.sk = p.k->tensor->shape[2];
  p.causal = causal_parameter(args);
  return p;
}

/* One query row of a kernel: q (D values), the visible keys' rows of k and v, the scale; writes
 * the row of O and its LSE. Inputs and O are the kernel's element types, passed untyped. */
typedef void (*StrangerRow)(const void* q, const void* k, const void* v, int64_t visible, int64_t d,
                            float scale, void* o, float* lse);

/* Every row of every (batch, head) problem, in order; the scale is (float)(1/sqrt(D)) and a
 * causal mask (top-left aligned) leaves row i its first i + 1 keys. */
static inline SimprecStatus run_rows(const SimprecRunArgs* args, size_t in_bytes, size_t out_bytes,
                                     int64_t max_d, StrangerRow row) {
  const struct Problem p = problem_of(args);
  if (p.d > max_d) return SIMPREC_ERROR_UNSUPPORTED;
  const float scale = (float)(1.0 / sqrt((double)p.d));
  const char* q = (const char*)p.q->tensor->data;
  const char* k = (const char*)p.k->tensor->data;
  const char* v = (const char*)p.v->tensor->data;
  char* o = (char*)p.o->tensor->data;
  float* lse = (float*)p.lse->tensor->data;
  for (int64_t b = 0; b < p.problems; ++b) {
    for (int64_t i = 0; i < p.sq; ++i) {
      const int64_t visible = p.causal ? (i + 1 < p.sk ? i + 1 : p.sk) : p.sk;
      row(q + (b * p.sq + i) * p.d * in_bytes, k + b * p.sk * p.d * in_bytes,
          v + b * p.sk * p.d * in_bytes, visible, p.d, scale, o + (b * p.sq + i) * p.d * out_bytes,
          lse + b * p.sq + i);
    }
  }
  return SIMPREC_OK;
}

/* What every stranger's kernel file ends with: its operands (Q, K, V in IN, O in OUT, the LSE in
 * fp32, of IN_BYTES and OUT_BYTES an element), head dimensions up to MAX_D, a causal parameter
 * where CAUSAL, the kernel run row by row through ROW, and the plugin entry. */
#define STRANGER_PLUGIN(NAME, DESCRIPTION, KERNEL_DESCRIPTION, IN, IN_BYTES, OUT, OUT_BYTES,       \
                        MAX_D, CAUSAL, ROW)                                                        \
  static SimprecStatus run_kernel(const SimprecRunArgs* args) {                                    \
    return run_rows(args, IN_BYTES, OUT_BYTES, MAX_D, ROW);                                        \
  }                                                                                                \
  static const SimprecOperandSpec q_spec = {                                                       \
      SIMPREC_OPERAND_SPEC_STRUCT_SIZE, "Q", SIMPREC_OPERAND_INPUT, 0, IN, "B,H,Sq,D"};            \
  static const SimprecOperandSpec k_spec = {                                                       \
      SIMPREC_OPERAND_SPEC_STRUCT_SIZE, "K", SIMPREC_OPERAND_INPUT, 0, IN, "B,H,Sk,D"};            \
  static const SimprecOperandSpec v_spec = {                                                       \
      SIMPREC_OPERAND_SPEC_STRUCT_SIZE, "V", SIMPREC_OPERAND_INPUT, 0, IN, "B,H,Sk,D"};            \
  static const SimprecOperandSpec o_spec = {                                                       \
      SIMPREC_OPERAND_SPEC_STRUCT_SIZE, "O", SIMPREC_OPERAND_OUTPUT, 0, OUT, "B,H,Sq,D"};          \
  static const SimprecOperandSpec lse_spec = {                                                     \
      SIMPREC_OPERAND_SPEC_STRUCT_SIZE, "LSE", SIMPREC_OPERAND_OUTPUT, 0, "fp32", "B,H,Sq"};       \
  static const SimprecOperandSpec* const operands[] = {&q_spec, &k_spec, &v_spec, &o_spec,         \
                                                       &lse_spec};                                 \
  static const SimprecParameterSpec causal_spec = {                                                \
      SIMPREC_PARAMETER_SPEC_STRUCT_SIZE, "causal", SIMPREC_VALUE_BOOL, 0, "false",                \
      "top-left aligned causal mask"};                                                             \
  static const SimprecParameterSpec* const parameters[] = {&causal_spec};                          \
  static const SimprecDimensionSpec head_dim = {SIMPREC_DIMENSION_SPEC_STRUCT_SIZE, "D", 1, MAX_D, \
                                                1};                                                \
  static const SimprecDimensionSpec* const dimensions[] = {&head_dim};                             \
  static const SimprecKernel kernel = {                                                            \
      .struct_size = SIMPREC_KERNEL_STRUCT_SIZE,                                                   \
      .name = NAME,                                                                                \
      .kind = SIMPREC_KERNEL_ATTENTION_FORWARD,                                                    \
      .flags = 0,                                                                                  \
      .description = KERNEL_DESCRIPTION,                                                           \
      .emulation_model = NULL,                                                                     \
      .operand_count = 5,                                                                          \
      .operands = operands,                                                                        \
      .dimension_count = 1,                                                                        \
      .dimensions = dimensions,                                                                    \
      .parameter_count = (CAUSAL) ? 1 : 0,                                                         \
      .parameters = (CAUSAL) ? parameters : NULL,                                                  \
      .attribute_count = 0,                                                                        \
      .attributes = NULL,                                                                          \
      .run = run_kernel,                                                                           \
  };                                                                                               \
  static const SimprecKernel* const kernels[] = {&kernel};                                         \
  static const SimprecPlugin plugin = {                                                            \
      .struct_size = SIMPREC_PLUGIN_STRUCT_SIZE,                                                   \
      .abi_major = SIMPREC_PLUGIN_ABI_MAJOR,                                                       \
      .abi_minor = SIMPREC_PLUGIN_ABI_MINOR,                                                       \
      .name = NAME,                                                                                \
      .version = "1.0.0",                                                                          \
      .description = DESCRIPTION,                                                                  \
      .kernel_count = 1,                                                                           \
      .kernels = kernels,                                                                          \
      .shutdown = NULL,                                                                            \
  };                                                                                               \
  SIMPREC_PLUGIN_EXPORT SimprecStatus simprec_plugin_entry(SimprecEntryArgs* args) {               \
    if (args->host_abi_major != SIMPREC_PLUGIN_ABI_MAJOR) return SIMPREC_ERROR_UNSUPPORTED;        \
    args->plugin = &plugin;                                                                        \
    return SIMPREC_OK;                                                                             \
  }

#endif
