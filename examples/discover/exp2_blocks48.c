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

static void attend_row(const void* q_row, const void* k_rows, const void* v_rows, int64_t visible,
                       int64_t d, float scale, void* o_row, float* lse) {
  const uint16_t* q = q_row;
  const uint16_t* k = k_rows;
  const uint16_t* v = v_rows;
  uint16_t* o = o_row;
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

STRANGER_PLUGIN("exp2_blocks48", "a stranger's bf16 kernel (examples/discover)",
                "bf16, keys in blocks of 48, exp2 of the scaled score times log2 e, O / l", "bf16",
                2, "bf16", 2, kMaxD, 1, attend_row)
