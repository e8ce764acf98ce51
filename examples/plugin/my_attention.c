/* The kernel of docs/plugins.md's walk-through: "my own attention kernel, with its own numerics,
 * validated bit for bit". Standard attention on bf16 Q, K, V [B,H,S,D] in plain C:
 *   S = Q K^T        fp32, one fmaf per term in D order
 *   m = max_j S      per row
 *   P = exp(fp32(S*scale) - fp32(m*scale))   the argument in fp32, exp correctly rounded to fp32
 *   l = sum_j P      fp32, in key order
 *   P = P / l        fp32
 *   P = bf16(P)      round to nearest even: this kernel's own choice, where PyTorch's math
 *                    backend keeps P in fp32
 *   O = P V          fp32, one fmaf per term in key order, then rounded to bf16
 * which is the numerics spec "torch-math,p_cast=bf16:rne": PyTorch's math backend with P rounded
 * to bf16 before P.V. The kernel declares that spec and claims bit-exactness; `simprec validate`
 * checks the claim. The scale must be a power of two (the default 1/sqrt(D) is one for D = 64),
 * so that fp32(S*scale) is the float product; the causal mask is top-left aligned (key j is
 * masked for query i when j > i), as simprec_plugin.h states. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin_helpers.h"

/* exp of a float, correctly rounded to fp32 on the arguments this kernel meets: the double
 * result carries 29 bits beyond fp32's, so rounding it again to fp32 rounds correctly unless the
 * exact value lies within 2^-52 (relative) of a midpoint between two floats. */
static float exp_fp32(float x) {
  return (float)exp((double)x);
}

static SimprecStatus run_attention(const SimprecRunArgs* args) {
  const SimprecTensor* q = find_tensor(args, "Q");
  const SimprecTensor* k = find_tensor(args, "K");
  const SimprecTensor* v = find_tensor(args, "V");
  const SimprecTensor* o = find_tensor(args, "O");
  const int64_t problems = q->tensor->shape[0] * q->tensor->shape[1];
  const int64_t sq = q->tensor->shape[2], d = q->tensor->shape[3];
  const int64_t sk = k->tensor->shape[2], dv = v->tensor->shape[3];
  const SimprecNamedValue* causal_p = find_parameter(args, "causal");
  const SimprecNamedValue* scale_p = find_parameter(args, "scale");
  const int causal = causal_p && causal_p->int64_value != 0;
  const double scale = scale_p ? scale_p->float64_value : 1.0 / sqrt((double)d);
  int exponent;
  if (!(scale > 0) || frexp(scale, &exponent) != 0.5) {
    return fail(args, SIMPREC_ERROR_UNSUPPORTED, "the scale must be a power of two");
  }
  const float scale_f = (float)scale;
  float* s = malloc((size_t)sk * sizeof *s);
  if (!s) return fail(args, SIMPREC_ERROR_INTERNAL, "out of memory");
  for (int64_t p = 0; p < problems; ++p) {
    const uint16_t* qp = (const uint16_t*)q->tensor->data + p * sq * d;
    const uint16_t* kp = (const uint16_t*)k->tensor->data + p * sk * d;
    const uint16_t* vp = (const uint16_t*)v->tensor->data + p * sk * dv;
    uint16_t* op = (uint16_t*)o->tensor->data + p * sq * dv;
    for (int64_t i = 0; i < sq; ++i) {
      const int64_t visible = causal ? (i + 1 < sk ? i + 1 : sk) : sk;
      float m = -INFINITY;
      for (int64_t j = 0; j < visible; ++j) {
        float acc = 0.0f;
        for (int64_t c = 0; c < d; ++c)
          acc = fmaf(bf16_to_float(qp[i * d + c]), bf16_to_float(kp[j * d + c]), acc);
        s[j] = acc;
        if (acc > m) m = acc;
      }
      const float shift = m * scale_f;
      float l = 0.0f;
      for (int64_t j = 0; j < visible; ++j) {
        s[j] = exp_fp32(s[j] * scale_f - shift);
        l += s[j];
      }
      for (int64_t j = 0; j < visible; ++j) s[j] = bf16_to_float(float_to_bf16(s[j] / l));
      for (int64_t c = 0; c < dv; ++c) {
        float acc = 0.0f;
        for (int64_t j = 0; j < visible; ++j) acc = fmaf(s[j], bf16_to_float(vp[j * dv + c]), acc);
        op[i * dv + c] = float_to_bf16(acc);
      }
    }
  }
  free(s);
  return SIMPREC_OK;
}

/* ---- the description ---- */
static const SimprecOperandSpec operand_q = {
    SIMPREC_OPERAND_SPEC_STRUCT_SIZE, "Q", SIMPREC_OPERAND_INPUT, 0, "bf16", "B,H,Sq,D"};
static const SimprecOperandSpec operand_k = {
    SIMPREC_OPERAND_SPEC_STRUCT_SIZE, "K", SIMPREC_OPERAND_INPUT, 0, "bf16", "B,H,Sk,D"};
static const SimprecOperandSpec operand_v = {
    SIMPREC_OPERAND_SPEC_STRUCT_SIZE, "V", SIMPREC_OPERAND_INPUT, 0, "bf16", "B,H,Sk,Dv"};
static const SimprecOperandSpec operand_o = {
    SIMPREC_OPERAND_SPEC_STRUCT_SIZE, "O", SIMPREC_OPERAND_OUTPUT, 0, "bf16", "B,H,Sq,Dv"};
static const SimprecOperandSpec* const operands[] = {&operand_q, &operand_k, &operand_v,
                                                     &operand_o};

static const SimprecParameterSpec causal = {
    SIMPREC_PARAMETER_SPEC_STRUCT_SIZE, "causal", SIMPREC_VALUE_BOOL, 0, "false",
    "top-left aligned causal mask"};
static const SimprecParameterSpec scale = {
    SIMPREC_PARAMETER_SPEC_STRUCT_SIZE, "scale", SIMPREC_VALUE_FLOAT64, 0, "1/sqrt(D)",
    "softmax scale, a power of two"};
static const SimprecParameterSpec* const parameters[] = {&causal, &scale};

static const SimprecKernel attention_bf16 = {
    .struct_size = SIMPREC_KERNEL_STRUCT_SIZE,
    .name = "attention_bf16",
    .kind = SIMPREC_KERNEL_ATTENTION_FORWARD,
    .flags = SIMPREC_KERNEL_FLAG_BIT_EXACT,
    .description = "standard attention, fp32 softmax, P rounded to bf16 before P.V, O in bf16",
    .emulation_model = "torch-math,p_cast=bf16:rne",
    .operand_count = 4,
    .operands = operands,
    .dimension_count = 0,
    .dimensions = NULL,
    .parameter_count = 2,
    .parameters = parameters,
    .attribute_count = 0,
    .attributes = NULL,
    .run = run_attention,
};
static const SimprecKernel* const kernels[] = {&attention_bf16};

static const SimprecPlugin plugin = {
    .struct_size = SIMPREC_PLUGIN_STRUCT_SIZE,
    .abi_major = SIMPREC_PLUGIN_ABI_MAJOR,
    .abi_minor = SIMPREC_PLUGIN_ABI_MINOR,
    .name = "my_attention",
    .version = "1.0.0",
    .description = "the attention kernel of the walk-through in docs/plugins.md",
    .kernel_count = 1,
    .kernels = kernels,
    .shutdown = NULL,
};

SIMPREC_PLUGIN_EXPORT SimprecStatus simprec_plugin_entry(SimprecEntryArgs* args) {
  if (args->host_abi_major != SIMPREC_PLUGIN_ABI_MAJOR) {
    if (args->error && args->error_size > 0) {
      snprintf(args->error, args->error_size, "built for plugin ABI %d, the host speaks %u",
               SIMPREC_PLUGIN_ABI_MAJOR, (unsigned)args->host_abi_major);
    }
    return SIMPREC_ERROR_UNSUPPORTED;
  }
  args->plugin = &plugin;
  return SIMPREC_OK;
}
