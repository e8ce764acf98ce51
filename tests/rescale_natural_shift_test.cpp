// rescale=natural-shift against a plain float online softmax written here: a natural-exp kernel
// that keeps each row's max as m = fp32(max S scale) and rescales by expf(fp32(m_old - m_new)),
// in key blocks of 8, every operation an fp32 operation (exp correctly rounded from double, which
// is correctly rounded for every float argument: elementary_heavy_test.cpp). The emulation must
// give its O bit for bit; exact rescaling must not (on inputs where the max grows).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "lib/attention/attention.hpp"
#include "lib/attention/numerics_spec.hpp"
#include "lib/inputs/generators.hpp"

namespace simprec::attention {
namespace {

constexpr int64_t kBlock = 8;

float expf_rounded(float x) {
  return static_cast<float>(std::exp(static_cast<double>(x)));
}

// O of every row of one problem (Q, K, V as floats, [n, d]), by the online softmax above.
std::vector<float> online_softmax(const std::vector<double>& q, const std::vector<double>& k,
                                  const std::vector<double>& v, int64_t n, int64_t d, float scale) {
  std::vector<float> o(n * d);
  for (int64_t i = 0; i < n; ++i) {
    float m = -INFINITY, l = 0.0f;
    std::vector<float> acc(d, 0.0f);
    for (int64_t j0 = 0; j0 < n; j0 += kBlock) {
      const int64_t j1 = std::min(n, j0 + kBlock);
      std::vector<float> t(j1 - j0);
      float m_block = -INFINITY;
      for (int64_t j = j0; j < j1; ++j) {
        float s = 0.0f;
        for (int64_t c = 0; c < d; ++c) {
          s = std::fma(static_cast<float>(q[i * d + c]), static_cast<float>(k[j * d + c]), s);
        }
        t[j - j0] = s * scale;
        m_block = std::max(m_block, t[j - j0]);
      }
      const float m_new = std::max(m, m_block);
      if (m != -INFINITY && m_new != m) {
        const float alpha = expf_rounded(m - m_new);
        l *= alpha;
        for (float& x : acc) x *= alpha;
      }
      m = m_new;
      for (int64_t j = j0; j < j1; ++j) {
        const float p = expf_rounded(t[j - j0] - m);
        l += p;
        for (int64_t c = 0; c < d; ++c)
          acc[c] = std::fma(p, static_cast<float>(v[j * d + c]), acc[c]);
      }
    }
    const float inv = 1.0f / l;
    for (int64_t c = 0; c < d; ++c) o[i * d + c] = acc[c] * inv;
  }
  return o;
}

TEST(RescaleNaturalShift, IsTheFloatOnlineSoftmaxOfRoundedScaledMaxima) {
  // Peaky inputs: rows whose max grows across key blocks, so alpha is formed often.
  const AttentionShape shape{1, 2, 61, 61, 16, 16};
  const AttentionInputs in = inputs::generate("peaky", shape, 5, false);
  AttentionConfig c = parse_numerics("fp32,tile=16x8,rescale=natural-shift", formats::bf16);
  const AttentionOutputs out = run_attention(in, c, FastPath::kSiteBySite);
  AttentionConfig exact = parse_numerics("fp32,tile=16x8,rescale=exact", formats::bf16);
  const AttentionOutputs exact_out = run_attention(in, exact, FastPath::kSiteBySite);
  const AttentionInputs rounded = round_inputs(in, c);
  int64_t equal = 0, exact_equal = 0, total = 0;
  for (int64_t p = 0; p < shape.problems(); ++p) {
    const int64_t off = p * shape.nq * shape.d;
    const auto slice = [&](const std::vector<double>& x) {
      return std::vector<double>(x.begin() + off, x.begin() + off + shape.nq * shape.d);
    };
    const std::vector<float> o = online_softmax(slice(rounded.q), slice(rounded.k),
                                                slice(rounded.v), shape.nq, shape.d, 0.25f);
    for (int64_t x = 0; x < shape.nq * shape.d; ++x) {
      equal += out.o[off + x] == static_cast<double>(o[x]);
      exact_equal += exact_out.o[off + x] == static_cast<double>(o[x]);
      ++total;
    }
  }
  EXPECT_EQ(equal, total);
  EXPECT_LT(exact_equal, total);  // the strategy is what makes the difference
}

TEST(RescaleNaturalShift, NeedsANaturalExponent) {
  try {
    (void)parse_numerics("fa2,rescale=natural-shift", formats::bf16);
    FAIL() << "accepted natural-shift with exp_impl=exp2-fma";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("rescale=natural-shift needs exp_impl=natural"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace simprec::attention
