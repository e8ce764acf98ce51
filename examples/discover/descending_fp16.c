/* A stranger's kernel: fp16 attention that walks the keys in blocks of 128 from the last block
 * to the first, folds the scale into log2(e) and the max into one fused multiply-add, keeps P in
 * fp16 for P.V and writes O in fp32 through a reciprocal of the row sum. Per query row, in fp32:
 *   c = fp32(scale * log2e) with scale = (float)(1/sqrt(D))
 *   s = q . k            one fmaf per term, in D order
 *   m = max s over the keys seen; where a block raises it:
 *     alpha = exp2(fp32(fp32(m_old - m) * c)), l = fp32(l * alpha), acc = fp32(acc * alpha)
 *   p = exp2(fmaf(s, c, -fp32(m * c))), l = fp32(l + p), acc += fp16(p) * v (fmaf per key)
 *   O = fp32(acc * fp32(1 / l)),  LSE = fmaf(m, scale, log(l))
 * exp2 and log rounded once from double, fp16 to nearest even. */
#include "stranger_kit.h"

enum { kKeyBlock = 128, kMaxD = 256 };

static void attend_row(const void* q_row, const void* k_rows, const void* v_rows, int64_t visible,
                       int64_t d, float scale, void* o_row, float* lse) {
  const uint16_t* q = q_row;
  const uint16_t* k = k_rows;
  const uint16_t* v = v_rows;
  float* o = o_row;
  const float c = (float)((double)scale * M_LOG2E);
  float acc[kMaxD] = {0};
  float m = -INFINITY, l = 0.0f;
  const int64_t blocks = (visible + kKeyBlock - 1) / kKeyBlock;
  for (int64_t block = blocks - 1; block >= 0; --block) {
    const int64_t j0 = block * kKeyBlock;
    const int64_t j1 = j0 + kKeyBlock < visible ? j0 + kKeyBlock : visible;
    float s[kKeyBlock];
    float m_new = m;
    for (int64_t j = j0; j < j1; ++j) {
      float x = 0.0f;
      for (int64_t i = 0; i < d; ++i) x = fmaf(half_to_float(q[i]), half_to_float(k[j * d + i]), x);
      s[j - j0] = x;
      if (x > m_new) m_new = x;
    }
    if (m != -INFINITY && m_new != m) {
      const float difference = m - m_new;
      const float alpha = exp2_cr(difference * c);
      l *= alpha;
      for (int64_t i = 0; i < d; ++i) acc[i] *= alpha;
    }
    m = m_new;
    const float mc = m * c;
    for (int64_t j = j0; j < j1; ++j) {
      const float p = exp2_cr(fmaf(s[j - j0], c, -mc));
      l += p;
      const float p16 = half_to_float(float_to_half(p, 0));
      for (int64_t i = 0; i < d; ++i) acc[i] = fmaf(p16, half_to_float(v[j * d + i]), acc[i]);
    }
  }
  const float inverse = 1.0f / l;
  for (int64_t i = 0; i < d; ++i) o[i] = acc[i] * inverse;
  *lse = fmaf(m, scale, log_cr(l));
}

STRANGER_PLUGIN("descending_fp16", "a stranger's fp16 kernel (examples/discover)",
                "fp16, keys in blocks of 128 last to first, exp2 by one fma, O = acc (1/l) in fp32",
                "fp16", 2, "fp32", 4, kMaxD, 0, attend_row)
