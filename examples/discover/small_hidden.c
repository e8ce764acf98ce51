/* The smallest stranger: fp32 attention (fp32 inputs) with three choices no preset makes, for the
 * default test tier's search (tests/discover_cli_test.cpp): key blocks of 16, P rounded to bf16
 * toward zero before P.V, O divided by the row sum. Head dimensions up to 16 keep the search's
 * probes small. Per query row, in fp32: t = fp32(fp32(q . k) * scale) (one fmaf per term), m = max
 * t; where a block raises it, alpha = exp(fp32(m_old - m)) rescales l and acc; p = exp(fp32(t -
 * m)), l = fp32(l + p), acc = fmaf(bf16_rtz(p), v, acc); O = fp32(acc / l) in fp32, LSE = fp32(m +
 * log(l)). exp and log rounded once from double. */
#include "stranger_kit.h"

enum { kKeyBlock = 16, kMaxD = 16 };

static float bf16_toward_zero(float p) {
  uint32_t bits;
  memcpy(&bits, &p, sizeof bits);
  bits &= 0xffff0000u;
  memcpy(&p, &bits, sizeof p);
  return p;
}

static void attend_row(const void* q_row, const void* k_rows, const void* v_rows, int64_t sk,
                       int64_t d, float scale, void* o_row, float* lse) {
  const float* q = q_row;
  const float* k = k_rows;
  const float* v = v_rows;
  float* o = o_row;
  float acc[kMaxD] = {0};
  float m = -INFINITY, l = 0.0f;
  for (int64_t j0 = 0; j0 < sk; j0 += kKeyBlock) {
    const int64_t j1 = j0 + kKeyBlock < sk ? j0 + kKeyBlock : sk;
    float t[kKeyBlock];
    float m_new = m;
    for (int64_t j = j0; j < j1; ++j) {
      float s = 0.0f;
      for (int64_t i = 0; i < d; ++i) s = fmaf(q[i], k[j * d + i], s);
      t[j - j0] = s * scale;
      if (t[j - j0] > m_new) m_new = t[j - j0];
    }
    if (m != -INFINITY && m_new != m) {
      const float alpha = exp_cr(m - m_new);
      l *= alpha;
      for (int64_t i = 0; i < d; ++i) acc[i] *= alpha;
    }
    m = m_new;
    for (int64_t j = j0; j < j1; ++j) {
      const float p = exp_cr(t[j - j0] - m);
      l += p;
      const float pc = bf16_toward_zero(p);
      for (int64_t i = 0; i < d; ++i) acc[i] = fmaf(pc, v[j * d + i], acc[i]);
    }
  }
  for (int64_t i = 0; i < d; ++i) o[i] = acc[i] / l;
  *lse = m + log_cr(l);
}

STRANGER_PLUGIN("small_hidden", "the default tier's stranger (examples/discover)",
                "fp32 attention, key blocks of 16, P to bf16 toward zero, O / l; D <= 16", "fp32",
                4, "fp32", 4, kMaxD, 0, attend_row)
