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

static void attend_row(const void* q_row, const void* k_rows, const void* v_rows, int64_t visible,
                       int64_t d, float scale, void* o_row, float* lse) {
  const uint16_t* q = q_row;
  const uint16_t* k = k_rows;
  const uint16_t* v = v_rows;
  uint16_t* o = o_row;
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

STRANGER_PLUGIN(
    "glibc_fp16", "a stranger's fp16 kernel with glibc's expf (examples/discover)",
    "fp16 online softmax with glibc's expf and logf, key blocks of 32, P to fp16 toward "
    "zero, O = acc (1/l)",
    "fp16", 2, "fp16", 2, kMaxD, 1, attend_row)
