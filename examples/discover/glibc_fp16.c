/* A stranger's kernel, the one of issue 29's trial: fp16 online softmax with the C library's own
 * expf and logf (glibc's, not correctly rounded), key blocks of 32, P cast to fp16 toward zero,
 * O = acc * (1/l). Per query row, in fp32:
 *   s = q . k            one fmaf per term, in D order
 *   t = fp32(s * scale), m = max t over the keys seen; where a block raises it:
 *     alpha = expf(fp32(m_old - m)), l = fp32(l * alpha), acc = fp32(acc * alpha)
 *   p = expf(fp32(t - m)), l = fp32(l + p), acc += fp16_rtz(p) * v (fmaf per key)
 *   O = fp16(fp32(acc * fp32(1 / l))) to nearest even,  LSE = fp32(m + logf(l))
 * The scale is a float, 1/sqrt(D). */
#include "stranger_kit.h"

enum { kKeyBlock = 32, kMaxD = 256 };

static void attend_row(const uint16_t* q, const uint16_t* k, const uint16_t* v, int64_t visible,
                       int64_t d, float scale, uint16_t* o, float* lse) {
  float acc[kMaxD] = {0};
  float m = -INFINITY, l = 0.0f;
  for (int64_t j0 = 0; j0 < visible; j0 += kKeyBlock) {
    const int64_t j1 = j0 + kKeyBlock < visible ? j0 + kKeyBlock : visible;
    float t[kKeyBlock];
    float m_new = m;
    for (int64_t j = j0; j < j1; ++j) {
      float s = 0.0f;
      for (int64_t i = 0; i < d; ++i) s = fmaf(half_to_float(q[i]), half_to_float(k[j * d + i]), s);
      t[j - j0] = s * scale;
      if (t[j - j0] > m_new) m_new = t[j - j0];
    }
    if (m != -INFINITY && m_new != m) {
      const float alpha = expf(m - m_new);
      l *= alpha;
      for (int64_t i = 0; i < d; ++i) acc[i] *= alpha;
    }
    m = m_new;
    for (int64_t j = j0; j < j1; ++j) {
      const float p = expf(t[j - j0] - m);
      l += p;
      const float p16 = half_to_float(float_to_half(p, 1));
      for (int64_t i = 0; i < d; ++i) acc[i] = fmaf(p16, half_to_float(v[j * d + i]), acc[i]);
    }
  }
  const float inverse = 1.0f / l;
  for (int64_t i = 0; i < d; ++i) o[i] = float_to_half(acc[i] * inverse, 0);
  *lse = m + logf(l);
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
                                     0, "fp16", "B,H,Sq,D"};
static const SimprecOperandSpec k = {SIMPREC_OPERAND_SPEC_STRUCT_SIZE, "K", SIMPREC_OPERAND_INPUT,
                                     0, "fp16", "B,H,Sk,D"};
static const SimprecOperandSpec v = {SIMPREC_OPERAND_SPEC_STRUCT_SIZE, "V", SIMPREC_OPERAND_INPUT,
                                     0, "fp16", "B,H,Sk,D"};
static const SimprecOperandSpec o = {SIMPREC_OPERAND_SPEC_STRUCT_SIZE, "O", SIMPREC_OPERAND_OUTPUT,
                                     0, "fp16", "B,H,Sq,D"};
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
    .name = "glibc_fp16",
    .kind = SIMPREC_KERNEL_ATTENTION_FORWARD,
    .flags = 0,
    .description = "fp16 online softmax with glibc's expf and logf, key blocks of 32, P to fp16 "
                   "toward zero, O = acc (1/l)",
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

STRANGER_PLUGIN("glibc_fp16", "a stranger's fp16 kernel with glibc's expf (examples/discover)",
                kernel)
