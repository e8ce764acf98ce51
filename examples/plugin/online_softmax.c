/* An online-softmax attention kernel as one writes it from the textbook, in plain C, with O and
 * the log-sum-exp: the numerics of a stranger's kernel that simprec's presets do not cover, said
 * in a numerics spec and validated bit for bit (docs/kernel_models.md). On bf16 Q, K, V
 * [B,H,S,D], each query row walks the keys in blocks of 32:
 *   s = q . k          fp32, one fmaf per term in D order
 *   t = fp32(s*scale)  the scaled score; the row keeps its max as m = max t (a rounded, scaled
 *                      max, not the max of s)
 *   m_new = max(m, max of the block's t); where it grew:
 *     alpha = expf(fp32(m - m_new)), l = fp32(l*alpha), acc = fp32(acc*alpha)
 *   p = expf(fp32(t - m_new)), l = fp32(l + p) in key order
 *   acc += bf16(p) * v  fp32, one fmaf per key in order (P rounded to bf16, nearest even)
 *   O = bf16(fp32(acc * fp32(1/l))),  LSE = fp32(m + logf(l))
 * with expf and logf correctly rounded to fp32 (the double result rounded to float: correct for
 * every float argument of exp, as simprec's tests check, and for the logs met here). In the
 * numerics-spec language that is the fp32 model with P and O cast to bf16, key blocks of 32, the
 * rescale and the LSE from the rounded scaled maxima:
 *   fp32,p_cast=bf16:rne,o_out=bf16:rne,tile=64x32,rescale=natural-shift,lse_impl=shift-log
 * The causal mask is top-left aligned (key j masked for query i when j > i); the scale is the
 * float64 parameter `scale` (default 1/sqrt(D)), which must be a power of two so that the
 * kernel's float scale is the emulation's.
 *
 * The same kernel as most C code would call them, with the C library's expf and logf (glibc's
 * are not correctly rounded), twice: online_softmax_glibc_bf16 declares the strategy that says
 * so (device_math=glibc); online_softmax_libm_hook_bf16 declares no such strategy but hands the
 * emulation its own expf and logf as the device-function kernels expf_f32 and logf_f32
 * (attributes exp_function, log_function), which validate runs on every argument the emulation
 * meets. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin_helpers.h"

enum { kKeyBlock = 32 };

static float rounded_bf16(float f) {
  return bf16_to_float(float_to_bf16(f));
}

static float expf_rounded(float x) {
  return (float)exp((double)x);
}

static float logf_rounded(float x) {
  return (float)log((double)x);
}

/* The functions a kernel variant calls for exp and log. */
typedef struct Functions {
  float (*exp)(float);
  float (*log)(float);
} Functions;

/* One query row: its O into o (dv bf16 values) and its LSE. */
static void attend_row(const Functions* f, const uint16_t* q, const uint16_t* k, const uint16_t* v,
                       int64_t visible, int64_t d, int64_t dv, float scale, float* acc, uint16_t* o,
                       float* lse) {
  float m = -INFINITY, l = 0.0f;
  for (int64_t c = 0; c < dv; ++c) acc[c] = 0.0f;
  for (int64_t j0 = 0; j0 < visible; j0 += kKeyBlock) {
    const int64_t j1 = j0 + kKeyBlock < visible ? j0 + kKeyBlock : visible;
    float t[kKeyBlock];
    float m_new = m;
    for (int64_t j = j0; j < j1; ++j) {
      float s = 0.0f;
      for (int64_t c = 0; c < d; ++c) s = fmaf(bf16_to_float(q[c]), bf16_to_float(k[j * d + c]), s);
      t[j - j0] = s * scale;
      if (t[j - j0] > m_new) m_new = t[j - j0];
    }
    if (m != -INFINITY && m_new != m) {
      const float alpha = f->exp(m - m_new);
      l *= alpha;
      for (int64_t c = 0; c < dv; ++c) acc[c] *= alpha;
    }
    m = m_new;
    for (int64_t j = j0; j < j1; ++j) {
      const float p = f->exp(t[j - j0] - m);
      l += p;
      const float p_bf16 = rounded_bf16(p);
      for (int64_t c = 0; c < dv; ++c) acc[c] = fmaf(p_bf16, bf16_to_float(v[j * dv + c]), acc[c]);
    }
  }
  const float inverse = 1.0f / l;
  for (int64_t c = 0; c < dv; ++c) o[c] = float_to_bf16(acc[c] * inverse);
  *lse = m + f->log(l);
}

static const Functions correctly_rounded = {expf_rounded, logf_rounded};
static const Functions c_library = {expf, logf};

static SimprecStatus run_attention(const SimprecRunArgs* args, const Functions* f) {
  const SimprecTensor* q = find_tensor(args, "Q");
  const SimprecTensor* k = find_tensor(args, "K");
  const SimprecTensor* v = find_tensor(args, "V");
  const SimprecTensor* o = find_tensor(args, "O");
  const SimprecTensor* lse = find_tensor(args, "LSE");
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
  float* acc = malloc((size_t)dv * sizeof *acc);
  if (!acc) return fail(args, SIMPREC_ERROR_INTERNAL, "out of memory");
  for (int64_t p = 0; p < problems; ++p) {
    const uint16_t* qp = (const uint16_t*)q->tensor->data + p * sq * d;
    const uint16_t* kp = (const uint16_t*)k->tensor->data + p * sk * d;
    const uint16_t* vp = (const uint16_t*)v->tensor->data + p * sk * dv;
    uint16_t* op = (uint16_t*)o->tensor->data + p * sq * dv;
    float* lp = (float*)lse->tensor->data + p * sq;
    for (int64_t i = 0; i < sq; ++i) {
      const int64_t visible = causal ? (i + 1 < sk ? i + 1 : sk) : sk;
      attend_row(f, qp + i * d, kp, vp, visible, d, dv, (float)scale, acc, op + i * dv, lp + i);
    }
  }
  free(acc);
  return SIMPREC_OK;
}

static SimprecStatus run_correctly_rounded(const SimprecRunArgs* args) {
  return run_attention(args, &correctly_rounded);
}

static SimprecStatus run_c_library(const SimprecRunArgs* args) {
  return run_attention(args, &c_library);
}

/* y = f(x) for the function kernels: the C library's expf or logf on each element. */
static SimprecStatus run_function(const SimprecRunArgs* args, float (*f)(float)) {
  const SimprecTensor* x = find_tensor(args, "x");
  const SimprecTensor* y = find_tensor(args, "y");
  const float* in = (const float*)x->tensor->data;
  float* out = (float*)y->tensor->data;
  for (int64_t i = 0; i < x->tensor->shape[0]; ++i) out[i] = f(in[i]);
  return SIMPREC_OK;
}

static SimprecStatus run_expf(const SimprecRunArgs* args) {
  return run_function(args, expf);
}

static SimprecStatus run_logf(const SimprecRunArgs* args) {
  return run_function(args, logf);
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
static const SimprecOperandSpec operand_lse = {
    SIMPREC_OPERAND_SPEC_STRUCT_SIZE, "LSE", SIMPREC_OPERAND_OUTPUT, 0, "fp32", "B,H,Sq"};
static const SimprecOperandSpec* const operands[] = {&operand_q, &operand_k, &operand_v, &operand_o,
                                                     &operand_lse};

static const SimprecParameterSpec causal = {
    SIMPREC_PARAMETER_SPEC_STRUCT_SIZE, "causal", SIMPREC_VALUE_BOOL, 0, "false",
    "top-left aligned causal mask"};
static const SimprecParameterSpec scale = {
    SIMPREC_PARAMETER_SPEC_STRUCT_SIZE, "scale", SIMPREC_VALUE_FLOAT64, 0, "1/sqrt(D)",
    "softmax scale, a power of two"};
static const SimprecParameterSpec* const parameters[] = {&causal, &scale};

#define ONLINE_SOFTMAX_SPEC \
  "fp32,p_cast=bf16:rne,o_out=bf16:rne,tile=64x32,rescale=natural-shift,lse_impl=shift-log"

static const SimprecKernel online_softmax_bf16 = {
    .struct_size = SIMPREC_KERNEL_STRUCT_SIZE,
    .name = "online_softmax_bf16",
    .kind = SIMPREC_KERNEL_ATTENTION_FORWARD,
    .flags = SIMPREC_KERNEL_FLAG_BIT_EXACT,
    .description =
        "online softmax in key blocks of 32, natural exp from rounded scaled maxima, "
        "P rounded to bf16 before P.V, O in bf16 and the LSE in fp32",
    .emulation_model = ONLINE_SOFTMAX_SPEC,
    .operand_count = 5,
    .operands = operands,
    .dimension_count = 0,
    .dimensions = NULL,
    .parameter_count = 2,
    .parameters = parameters,
    .attribute_count = 0,
    .attributes = NULL,
    .run = run_correctly_rounded,
};

static const SimprecKernel online_softmax_glibc_bf16 = {
    .struct_size = SIMPREC_KERNEL_STRUCT_SIZE,
    .name = "online_softmax_glibc_bf16",
    .kind = SIMPREC_KERNEL_ATTENTION_FORWARD,
    .flags = SIMPREC_KERNEL_FLAG_BIT_EXACT,
    .description = "online_softmax_bf16 with the C library's expf and logf",
    .emulation_model = ONLINE_SOFTMAX_SPEC ",device_math=glibc",
    .operand_count = 5,
    .operands = operands,
    .dimension_count = 0,
    .dimensions = NULL,
    .parameter_count = 2,
    .parameters = parameters,
    .attribute_count = 0,
    .attributes = NULL,
    .run = run_c_library,
};

static const SimprecNamedValue exp_function = {SIMPREC_NAMED_VALUE_STRUCT_SIZE,
                                               "exp_function",
                                               SIMPREC_VALUE_STRING,
                                               0,
                                               {.string_value = "expf_f32"}};
static const SimprecNamedValue log_function = {SIMPREC_NAMED_VALUE_STRUCT_SIZE,
                                               "log_function",
                                               SIMPREC_VALUE_STRING,
                                               0,
                                               {.string_value = "logf_f32"}};
static const SimprecNamedValue* const hook_attributes[] = {&exp_function, &log_function};

static const SimprecKernel online_softmax_libm_hook_bf16 = {
    .struct_size = SIMPREC_KERNEL_STRUCT_SIZE,
    .name = "online_softmax_libm_hook_bf16",
    .kind = SIMPREC_KERNEL_ATTENTION_FORWARD,
    .flags = SIMPREC_KERNEL_FLAG_BIT_EXACT,
    .description =
        "online_softmax_glibc_bf16, its expf and logf handed to the emulation as device "
        "functions",
    .emulation_model = ONLINE_SOFTMAX_SPEC,
    .operand_count = 5,
    .operands = operands,
    .dimension_count = 0,
    .dimensions = NULL,
    .parameter_count = 2,
    .parameters = parameters,
    .attribute_count = 2,
    .attributes = hook_attributes,
    .run = run_c_library,
};

static const SimprecOperandSpec operand_x = {
    SIMPREC_OPERAND_SPEC_STRUCT_SIZE, "x", SIMPREC_OPERAND_INPUT, 0, "fp32", "N"};
static const SimprecOperandSpec operand_y = {
    SIMPREC_OPERAND_SPEC_STRUCT_SIZE, "y", SIMPREC_OPERAND_OUTPUT, 0, "fp32", "N"};
static const SimprecOperandSpec* const function_operands[] = {&operand_x, &operand_y};
static const SimprecNamedValue function_exp = {
    SIMPREC_NAMED_VALUE_STRUCT_SIZE, "function", SIMPREC_VALUE_STRING, 0, {.string_value = "exp"}};
static const SimprecNamedValue function_log = {
    SIMPREC_NAMED_VALUE_STRUCT_SIZE, "function", SIMPREC_VALUE_STRING, 0, {.string_value = "log"}};
static const SimprecNamedValue* const exp_attributes[] = {&function_exp};
static const SimprecNamedValue* const log_attributes[] = {&function_log};

static const SimprecKernel expf_f32 = {
    .struct_size = SIMPREC_KERNEL_STRUCT_SIZE,
    .name = "expf_f32",
    .kind = SIMPREC_KERNEL_FUNCTION,
    .flags = SIMPREC_KERNEL_FLAG_BIT_EXACT,
    .description = "the C library's expf",
    .emulation_model = "glibc",
    .operand_count = 2,
    .operands = function_operands,
    .attribute_count = 1,
    .attributes = exp_attributes,
    .run = run_expf,
};

static const SimprecKernel logf_f32 = {
    .struct_size = SIMPREC_KERNEL_STRUCT_SIZE,
    .name = "logf_f32",
    .kind = SIMPREC_KERNEL_FUNCTION,
    .flags = SIMPREC_KERNEL_FLAG_BIT_EXACT,
    .description = "the C library's logf",
    .emulation_model = "glibc",
    .operand_count = 2,
    .operands = function_operands,
    .attribute_count = 1,
    .attributes = log_attributes,
    .run = run_logf,
};

static const SimprecKernel* const kernels[] = {&online_softmax_bf16, &online_softmax_glibc_bf16,
                                               &online_softmax_libm_hook_bf16, &expf_f32,
                                               &logf_f32};

static const SimprecPlugin plugin = {
    .struct_size = SIMPREC_PLUGIN_STRUCT_SIZE,
    .abi_major = SIMPREC_PLUGIN_ABI_MAJOR,
    .abi_minor = SIMPREC_PLUGIN_ABI_MINOR,
    .name = "online_softmax",
    .version = "1.0.0",
    .description = "a textbook online-softmax attention kernel (docs/kernel_models.md)",
    .kernel_count = 5,
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
