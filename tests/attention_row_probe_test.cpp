// The row probe (lib/attention/row_probe.hpp): what it records of a row is what a plain float
// online softmax computes for that row, step by step (the kernel of
// examples/plugin/online_softmax.c, written again here in key blocks of 8), and a run with a
// probe gives the outputs of a run without one, for each kind of forward pass.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "lib/attention/attention.hpp"
#include "lib/attention/numerics_spec.hpp"
#include "lib/attention/row_probe.hpp"
#include "lib/inputs/generators.hpp"

namespace simprec::attention {
namespace {

constexpr int64_t kBlock = 8;
constexpr float kScale = 0.25f;  // 1/sqrt(16)

float expf_rounded(float x) {
  return static_cast<float>(std::exp(static_cast<double>(x)));
}
float logf_rounded(float x) {
  return static_cast<float>(std::log(static_cast<double>(x)));
}

float bf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  bits = (bits + 0x7fff + ((bits >> 16) & 1)) & 0xffff0000u;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

const AttentionShape kShape{1, 2, 40, 40, 16, 16};

AttentionConfig plugin_numerics() {
  return parse_numerics(
      "fp32,p_cast=bf16:rne,o_out=bf16:rne,tile=16x8,rescale=natural-shift,lse_impl=shift-log",
      formats::bf16);
}

// Problem p's scores of query row i, as the kernel computes them: one fmaf per term.
std::vector<float> scores(const AttentionInputs& in, int64_t p, int64_t i) {
  const int64_t d = kShape.d, n = kShape.nk;
  const double* q = in.q.data() + (p * kShape.nq + i) * d;
  const double* k = in.k.data() + p * n * d;
  std::vector<float> s(n);
  for (int64_t j = 0; j < n; ++j) {
    float x = 0.0f;
    for (int64_t c = 0; c < d; ++c) {
      x = std::fma(static_cast<float>(q[c]), static_cast<float>(k[j * d + c]), x);
    }
    s[j] = x;
  }
  return s;
}

// A row whose max grows after its first key block, so that alpha is formed.
int64_t growing_row(const AttentionInputs& in, int64_t p) {
  for (int64_t i = 0; i < kShape.nq; ++i) {
    const std::vector<float> s = scores(in, p, i);
    float first = -INFINITY, later = -INFINITY;
    for (int64_t j = 0; j < kShape.nk; ++j) {
      float& m = j < kBlock ? first : later;
      m = std::max(m, s[j]);
    }
    if (later > first) return i;
  }
  return -1;
}

TEST(RowProbe, RecordsWhatAFloatOnlineSoftmaxComputesForTheRow) {
  const AttentionConfig config = plugin_numerics();
  const AttentionInputs in = round_inputs(inputs::generate("outliers", kShape, 10, false), config);
  const int64_t p = 1, row = growing_row(in, p);
  ASSERT_GE(row, 0);
  RowProbe probe;
  probe.problem = p;
  probe.row = row;
  RunOptions options;
  options.probe = &probe;
  (void)run_attention(in, config, options);
  ASSERT_TRUE(probe.recorded);

  const int64_t n = kShape.nk, dv = kShape.dv;
  const std::vector<float> s = scores(in, p, row);
  const double* v = in.v.data() + p * n * dv;
  float m = -INFINITY, l = 0.0f;
  std::vector<float> acc(dv, 0.0f);
  int rescales = 0;
  ASSERT_EQ(probe.blocks.size(), static_cast<size_t>((n + kBlock - 1) / kBlock));
  for (int64_t j0 = 0, b = 0; j0 < n; j0 += kBlock, ++b) {
    SCOPED_TRACE("block " + std::to_string(b));
    const ProbedBlock& block = probe.blocks[b];
    const int64_t j1 = std::min(n, j0 + kBlock);
    EXPECT_EQ(block.tile, b);
    EXPECT_EQ(block.first_key, j0);
    EXPECT_EQ(block.keys, j1 - j0);
    float m_new = m, s_max = -INFINITY;
    for (int64_t j = j0; j < j1; ++j) {
      m_new = std::max(m_new, s[j] * kScale);
      s_max = std::max(s_max, s[j]);
    }
    EXPECT_EQ(block.m_new * kScale, m_new);  // the max of the scores, and its scaled form
    EXPECT_EQ(block.shift, m_new);
    EXPECT_EQ(block.rescaled, m != -INFINITY && m_new != m);
    if (m != -INFINITY && m_new != m) {
      const float alpha = expf_rounded(m - m_new);
      EXPECT_EQ(block.alpha, alpha);
      ASSERT_EQ(block.alpha_steps.size(), 2u);
      EXPECT_EQ(block.alpha_steps[0].value, m - m_new);
      EXPECT_EQ(block.alpha_steps[1].value, alpha);
      l *= alpha;
      for (float& x : acc) x *= alpha;
      ++rescales;
    }
    m = m_new;
    for (int64_t j = j0; j < j1; ++j) {
      SCOPED_TRACE("key " + std::to_string(j));
      const ProbedKey& key = block.key_values[j - j0];
      const float t = s[j] * kScale, arg = t - m, pj = expf_rounded(arg);
      EXPECT_EQ(key.key, j);
      EXPECT_EQ(key.score, s[j]);
      ASSERT_EQ(key.steps.size(), 3u);  // exp_impl=natural: S scale, the argument, exp
      EXPECT_EQ(key.steps[0].site, Site::kExpArg);
      EXPECT_EQ(key.steps[0].value, t);
      EXPECT_EQ(key.steps[1].value, arg);
      EXPECT_EQ(key.steps[2].site, Site::kExp);
      EXPECT_EQ(key.steps[2].value, pj);
      EXPECT_EQ(key.p, pj);
      EXPECT_EQ(key.p_cast, bf16(pj));
      l += pj;
      for (int64_t c = 0; c < dv; ++c) {
        acc[c] = std::fma(bf16(pj), static_cast<float>(v[j * dv + c]), acc[c]);
      }
    }
    ASSERT_EQ(block.l.size(), 1u);
    EXPECT_EQ(block.l[0], l);
    ASSERT_EQ(block.acc.size(), static_cast<size_t>(dv));
    for (int64_t c = 0; c < dv; ++c) EXPECT_EQ(block.acc[c], acc[c]) << "column " << c;
  }
  EXPECT_GT(rescales, 0);
  EXPECT_EQ(probe.l, l);
  const float inverse = 1.0f / l;
  ASSERT_EQ(probe.o.size(), static_cast<size_t>(dv));
  for (int64_t c = 0; c < dv; ++c) {
    EXPECT_EQ(probe.o_norm[c], acc[c] * inverse);
    EXPECT_EQ(probe.o[c], bf16(acc[c] * inverse));
  }
  const float log_l = logf_rounded(l);
  EXPECT_EQ(probe.lse, m + log_l);
  ASSERT_EQ(probe.lse_steps.size(), 2u);
  EXPECT_EQ(probe.lse_steps[0].value, log_l);
  EXPECT_EQ(probe.lse_steps[1].value, m + log_l);
}

// Every forward pass with a probe gives the outputs it gives without, and the probe's O and LSE
// are the row's.
TEST(RowProbe, ChangesNoOutput) {
  for (const char* spec : {"fp32,p_cast=bf16:rne,tile=16x8", "fa2", "fa2,kv_splits=2,tile=16x8",
                           "fa2,flash_state=normalised,tile=16x8", "torch-math"}) {
    SCOPED_TRACE(spec);
    const AttentionConfig config = parse_numerics(spec, formats::bf16);
    const AttentionInputs in = inputs::generate("normal", kShape, 3, false);
    const AttentionOutputs plain = run_attention(in, config);
    RowProbe probe;
    probe.problem = 1;
    probe.row = 21;
    RunOptions options;
    options.probe = &probe;
    const AttentionOutputs probed = run_attention(in, config, options);
    EXPECT_EQ(probed.o, plain.o);
    EXPECT_EQ(probed.lse, plain.lse);
    ASSERT_TRUE(probe.recorded);
    const int64_t at = kShape.nq + probe.row;
    EXPECT_EQ(probe.lse, plain.lse[at]);
    ASSERT_EQ(probe.o.size(), static_cast<size_t>(kShape.dv));
    for (int64_t c = 0; c < kShape.dv; ++c) EXPECT_EQ(probe.o[c], plain.o[at * kShape.dv + c]);
    // One problem alone: the same values for it, zeros elsewhere.
    RunOptions one;
    one.only_problem = 1;
    const AttentionOutputs alone = run_attention(in, config, one);
    for (int64_t x = 0; x < kShape.nq; ++x) {
      EXPECT_EQ(alone.lse[x], 0.0);
      EXPECT_EQ(alone.lse[kShape.nq + x], plain.lse[kShape.nq + x]);
    }
  }
}

TEST(RowProbe, RecordsEveryKeyBlockAndSplit) {
  const AttentionInputs in = inputs::generate("normal", kShape, 3, false);
  const auto probed = [&](const char* spec, bool causal = false) {
    RowProbe probe;
    probe.row = 30;
    RunOptions options;
    options.probe = &probe;
    AttentionConfig config = parse_numerics(spec, formats::bf16);
    config.causal = causal;
    (void)run_attention(in, config, options);
    return probe;
  };
  // Standard attention: one block of every key.
  const RowProbe standard = probed("torch-math");
  ASSERT_EQ(standard.blocks.size(), 1u);
  EXPECT_EQ(standard.blocks[0].keys, kShape.nk);
  EXPECT_EQ(standard.blocks[0].key_values.size(), static_cast<size_t>(kShape.nk));
  // Two splits of 5 key blocks of 8, each starting its own softmax.
  const RowProbe split = probed("fa2,kv_splits=2,tile=16x8");
  ASSERT_EQ(split.blocks.size(), 5u);
  EXPECT_EQ(split.blocks[0].split, 0);
  EXPECT_EQ(split.blocks.back().split, 1);
  int starts = 0;
  for (const ProbedBlock& b : split.blocks) starts += b.m_old == -INFINITY;
  EXPECT_EQ(starts, 2);
  // A causal row visits the key blocks that hold its keys 0..30.
  const RowProbe causal = probed("fa2,tile=16x8", true);
  ASSERT_EQ(causal.blocks.size(), 4u);
  EXPECT_EQ(causal.blocks.back().first_key + causal.blocks.back().keys, 32);
  EXPECT_EQ(causal.blocks.back().key_values.back().score, -INFINITY);
}

TEST(RowProbe, ARowOutsideTheRunIsRefused) {
  const AttentionInputs in = inputs::generate("normal", kShape, 3, false);
  RowProbe probe;
  probe.row = kShape.nq;
  RunOptions options;
  options.probe = &probe;
  EXPECT_THROW(run_attention(in, parse_numerics("fa2", formats::bf16), options),
               std::invalid_argument);
}

}  // namespace
}  // namespace simprec::attention
