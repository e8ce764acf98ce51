/* A stranger's kernel: bf16 attention walking the keys in blocks of 48, the exponential taken
 * in base 2 from the scaled score times log2(e), O divided by the row sum, an optional causal
 * mask. Per query row, in fp32:
 *   s = q . k            one fmaf per term, in D order
 *   u = fp32(fp32(s * scale) * log2e)      scale and log2e as floats
 *   u_max over the keys seen; where a block raises it: alpha = exp2(fp32(u_max_old - u_max)),
 *   l = fp32(l * alpha), acc = fp32(acc * alpha)
 *   p = exp2(fp32(u - u_max)), l = fp32(l + p) in key order, acc += bf16(p) * v (fmaf per key)
 *   O = bf16(fp32(acc / l)),  LSE = fp32(fp32(u_max / log2e) + log(l))
 * exp2 and log rounded once from double. */
#include "stranger_kit.h"

enum { kKeyBlock = 48, kMaxD = 256 };

static void attend_row(const uint16_t* q, const uint16_t* k, const uint16_t* v, int64_t visible,
                       int64_t d, float scale, uint16_t* o, float* lse) {
  const float log2e = (float)M_LOG2E;
  float acc[kMaxD] = {0};
  float u_max = -INFINITY, l = 0.0f;
  for (int64_t j0 = 0; j0 < visible; j0 += kKeyBlock) {
    const int64_t j1 = j0 + kKeyBlock < visible ? j0 + kKeyBlock : visible;
    float u[kKeyBlock];
    float u_new = u_max;
    for (int64_t j = j0; j < j1; ++j) {
      float s = 0.0f;
      for (int64_t c = 0; c < d; ++c) s = fmaf(bf16_to_float(q[c]), bf16_to_float(k[j * d + c]), s);
      const float t = s * scale;
      u[j - j0] = t * log2e;
      if (u[j - j0] > u_new) u_new = u[j - j0];
    }
    if (u_max != -INFINITY && u_new != u_max) {
      const float alpha = exp2_cr(u_max - u_new);
      l *= alpha;
      for (int64_t c = 0; c < d; ++c) acc[c] *= alpha;
    }
    u_max = u_new;
    for (int64_t j = j0; j < j1; ++j) {
      const float p = exp2_cr(u[j - j0] - u_max);
      l += p;
      const float p16 = bf16_to_float(float_to_bf16(p));
      for (int64_t c = 0; c < d; ++c) acc[c] = fmaf(p16, bf16_to_float(v[j * d + c]), acc[c]);
    }
  }
  for (int64_t c = 0; c < d; ++c) o[c] = float_to_bf16(acc[c] / l);
  const float shift = u_max / log2e;
  *lse = shift + log_cr(l);
}

static SimprecStatus run(const SimprecRunArgs* args) {
  const struct Problem p = problem_of(args);
  if (p.d > kMaxD) return SIMPREC_ERROR_UNSUPPORTED;
  const float scale = (float)(1.0 / sqrt((double)p.d));
  for (int64_t b = 0; b < p.problems; ++b) {
    const uint16_t* q = (const uint16_t*)p.q->tensor->data + b * p.sq * p.d;
    const uint16_t* k = (const uint16_t*)p.k->tensor->data + b * p.sk * p.d;
    const uint16_t* v = (const uint16_t*)p.v->tensor->data + b * p.sk * p.d;
    for (int64_t i = 0; i < p.sq; ++i) {
      const int64_t visible = p.causal ? (i + 1 < p.sk ? i + 1 : p.sk) : p.sk;
      attend_row(q + i * p.d, k, v, visible, p.d, scale,
                 (uint16_t*)p.o->tensor->data + (b * p.sq + i) * p.d,
                 (float*)p.lse->tensor->data + b * p.sq + i);
    }
  }
  return SIMPREC_OK;
}

static const SimprecOperandSpec q = {SIMPREC_OPERAND_SPEC_STRUCT_SIZE, "Q", SIMPREC_OPERAND_INPUT,
                                     0, "bf16", "B,H,Sq,D"};
static const SimprecOperandSpec k = {SIMPREC_OPERAND_SPEC_STRUCT_SIZE, "K", SIMPREC_OPERAND_INPUT,
                                     0, "bf16", "B,H,Sk,D"};
static const SimprecOperandSpec v = {SIMPREC_OPERAND_SPEC_STRUCT_SIZE, "V", SIMPREC_OPERAND_INPUT,
                                     0, "bf16", "B,H,Sk,D"};
static const SimprecOperandSpec o = {SIMPREC_OPERAND_SPEC_STRUCT_SIZE, "O", SIMPREC_OPERAND_OUTPUT,
                                     0, "bf16", "B,H,Sq,D"};
static const SimprecOperandSpec lse = {SIMPREC_OPERAND_SPEC_STRUCT_SIZE, "LSE",
                                       SIMPREC_OPERAND_OUTPUT, 0, "fp32", "B,H,Sq"};
static const SimprecOperandSpec* const operands[] = {&q, &k, &v, &o, &lse};
static const SimprecParameterSpec causal = {SIMPREC_PARAMETER_SPEC_STRUCT_SIZE, "causal",
                                            SIMPREC_VALUE_BOOL, 0, "false",
                                            "top-left aligned causal mask"};
static const SimprecParameterSpec* const parameters[] = {&causal};
static const SimprecDimensionSpec head_dim = {SIMPREC_DIMENSION_SPEC_STRUCT_SIZE, "D", 1, kMaxD, 1};
static const SimprecDimensionSpec* const dimensions[] = {&head_dim};

static const SimprecKernel kernel = {
    .struct_size = SIMPREC_KERNEL_STRUCT_SIZE,
    .name = "exp2_blocks48",
    .kind = SIMPREC_KERNEL_ATTENTION_FORWARD,
    .flags = 0,
    .description = "bf16, keys in blocks of 48, exp2 of the scaled score times log2 e, O / l",
    .emulation_model = NULL,
    .operand_count = 5,
    .operands = operands,
    .dimension_count = 1,
    .dimensions = dimensions,
    .parameter_count = 1,
    .parameters = parameters,
    .attribute_count = 0,
    .attributes = NULL,
    .run = run,
};

STRANGER_PLUGIN("exp2_blocks48", "a stranger's bf16 kernel (examples/discover)", kernel)
