// Masks, biases, windows and grouped heads in the site-by-site engine (lib/attention/masking.hpp,
// kv_heads.hpp): bit-for-bit identities that hold whatever the rounding (a causal mask given as
// a tensor computes what the causal flag computes, though the first visits every key block that
// a row of its block sees and the second stops at the diagonal; a bias of zeros changes no bit;
// one key/value head per query head is no grouping), what each kernel model does with grouped
// heads, and clear errors for masks that do not fit.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "lib/attention/attention.hpp"
#include "lib/attention/numerics_spec.hpp"
#include "lib/inputs/generators.hpp"

namespace simprec::attention {
namespace {

AttentionConfig config_of(const std::string& spec) {
  AttentionConfig c = make_config(parse_numerics_spec(spec), formats::bf16);
  c.threads = 2;
  return c;
}

void expect_same_bits(const std::vector<double>& a, const std::vector<double>& b,
                      const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  size_t differ = 0;
  for (size_t i = 0; i < a.size(); ++i)
    differ += std::bit_cast<uint64_t>(a[i]) != std::bit_cast<uint64_t>(b[i]);
  EXPECT_EQ(differ, 0u) << what;
}

void expect_same_outputs(const AttentionOutputs& a, const AttentionOutputs& b,
                         const std::string& what) {
  expect_same_bits(a.o, b.o, what + " O");
  expect_same_bits(a.lse, b.lse, what + " LSE");
  expect_same_bits(a.dq, b.dq, what + " dQ");
  expect_same_bits(a.dk, b.dk, what + " dK");
  expect_same_bits(a.dv, b.dv, what + " dV");
}

AttentionInputs inputs_of(AttentionShape s, uint64_t seed) {
  return inputs::generate("normal", s, seed, /*backward=*/true);
}

std::shared_ptr<const BroadcastTensor> causal_tensor(int64_t nq, int64_t nk, int64_t offset) {
  auto t = std::make_shared<BroadcastTensor>();
  t->nq = nq;
  t->nk = nk;
  for (int64_t i = 0; i < nq; ++i)
    for (int64_t j = 0; j < nk; ++j) t->values.push_back(j <= i + offset ? 1.0 : 0.0);
  return t;
}

// For each kernel model: the causal mask as a tensor against the causal flag, top-left and
// bottom-right, Nq != Nk, ragged tiles, forward and backward. Not the memory-efficient kernel's
// bottom-right mask: its split-keys backward starts each key block at the first query block that
// sees it when it knows the mask is causal, and at the key block's own index when it is given a
// mask (a bias): a different order of dK's and dV's additions.
TEST(AttentionMasking, ACausalMaskTensorComputesWhatTheCausalFlagDoes) {
  for (const char* spec : {"fa2", "torch-flash", "torch-efficient", "torch-flex", "torch-math"}) {
    for (const bool bottom_right : {false, true}) {
      if (bottom_right && std::string(spec) == "torch-efficient") continue;
      const AttentionShape s{1, 2, 150, 200, 32, 32};
      const AttentionInputs in = inputs_of(s, 11);
      AttentionConfig flag = config_of(spec);
      flag.causal = true;
      if (bottom_right) flag.masking.causal_align = CausalAlign::kBottomRight;
      AttentionConfig tensor = config_of(spec);
      tensor.masking.mask = causal_tensor(s.nq, s.nk, bottom_right ? s.nk - s.nq : 0);
      expect_same_outputs(run_attention(in, flag), run_attention(in, tensor),
                          std::string(spec) + (bottom_right ? " bottom-right" : " top-left"));
    }
  }
}

// Adding a zero bias to the scaled scores changes nothing where the scale is applied first
// (the memory-efficient and FlexAttention models, whose exponent argument takes the scaled score).
TEST(AttentionMasking, AZeroBiasChangesNoBit) {
  for (const char* spec : {"torch-efficient", "torch-flex"}) {
    const AttentionShape s{2, 2, 96, 80, 64, 64};
    const AttentionInputs in = inputs_of(s, 12);
    AttentionConfig zero = config_of(spec);
    auto bias = std::make_shared<BroadcastTensor>();
    bias->nq = s.nq;
    bias->nk = s.nk;
    bias->values.assign(s.nq * s.nk, 0.0);
    zero.masking.bias = bias;
    expect_same_outputs(run_attention(in, config_of(spec)), run_attention(in, zero), spec);
  }
}

// Grouped heads with one query head per key/value head are no grouping; with two, the model's
// rule: PyTorch's flash backend sums each head's cast dK (torch-flash), FlexAttention carries
// its accumulators across the group (torch-flex), and the two give different bits.
TEST(AttentionMasking, GroupedHeads) {
  AttentionShape s{1, 4, 64, 64, 32, 32};
  const AttentionInputs full = inputs_of(s, 13);
  // K, V of heads 0 and 2 only, as two key/value heads of two query heads each.
  AttentionInputs grouped = full;
  grouped.shape.heads_kv = 2;
  grouped.k.clear();
  grouped.v.clear();
  const int64_t block = s.nk * s.d;
  for (const int64_t h : {0, 2}) {
    grouped.k.insert(grouped.k.end(), full.k.begin() + h * block, full.k.begin() + (h + 1) * block);
    grouped.v.insert(grouped.v.end(), full.v.begin() + h * block, full.v.begin() + (h + 1) * block);
  }
  // The expanded run: K, V of head 0 for heads 0 and 1, of head 2 for heads 2 and 3.
  AttentionInputs expanded = full;
  for (const int64_t h : {1, 3}) {
    std::copy_n(full.k.begin() + (h - 1) * block, block, expanded.k.begin() + h * block);
    std::copy_n(full.v.begin() + (h - 1) * block, block, expanded.v.begin() + h * block);
  }
  const AttentionOutputs e = run_attention(expanded, config_of("torch-flash"));
  const AttentionOutputs g = run_attention(grouped, config_of("torch-flash"));
  expect_same_bits(e.o, g.o, "O");
  expect_same_bits(e.dq, g.dq, "dQ");
  ASSERT_EQ(g.dk.size(), static_cast<size_t>(2 * block));
  // dK of key/value head 0: fp32(dK_0 + dK_1) rounded to bf16, each head's already bf16.
  for (int64_t x = 0; x < block; ++x) {
    const float sum = static_cast<float>(e.dk[x]) + static_cast<float>(e.dk[block + x]);
    const double expected = std::bit_cast<float>(
        (std::bit_cast<uint32_t>(sum) + 0x7fffu + ((std::bit_cast<uint32_t>(sum) >> 16) & 1u)) &
        0xffff0000u);
    ASSERT_EQ(g.dk[x], expected) << x;
  }
  const AttentionOutputs chained = run_attention(grouped, config_of("torch-flex"));
  AttentionConfig summed = config_of("torch-flex");
  apply_override(summed, "kv_group_sum=cast-then-sum");
  const AttentionOutputs cast = run_attention(grouped, summed);
  expect_same_bits(chained.o, cast.o, "flex O");
  size_t differ = 0;
  for (size_t x = 0; x < chained.dk.size(); ++x) differ += chained.dk[x] != cast.dk[x];
  EXPECT_GT(differ, 0u) << "chained and summed dK are the same: the test shows nothing";
  // No grouping: heads_kv equal to heads.
  AttentionInputs same = full;
  same.shape.heads_kv = s.heads;
  expect_same_outputs(run_attention(full, config_of("torch-flex")),
                      run_attention(same, config_of("torch-flex")), "heads_kv = heads");
}

TEST(AttentionMasking, MasksThatDoNotFitAreRefused) {
  const AttentionShape s{2, 2, 16, 24, 8, 8};
  const AttentionInputs in = inputs_of(s, 14);
  AttentionConfig c = config_of("fa2");
  auto wrong = std::make_shared<BroadcastTensor>(*causal_tensor(16, 16, 0));
  c.masking.mask = wrong;
  EXPECT_THROW(
      {
        try {
          run_attention(in, c);
        } catch (const std::invalid_argument& e) {
          EXPECT_NE(std::string(e.what()).find("mask: shape (1, 1, 16, 16) does not broadcast"),
                    std::string::npos)
              << e.what();
          throw;
        }
      },
      std::invalid_argument);
  c = config_of("fa2");
  c.masking.alibi_slopes = {0.5};
  EXPECT_THROW(run_attention(in, c), std::invalid_argument);
  c = config_of("fa2");
  c.masking.softcap = -1;
  EXPECT_THROW(run_attention(in, c), std::invalid_argument);
  AttentionInputs grouped = in;
  grouped.shape.heads_kv = 3;
  EXPECT_THROW(run_attention(grouped, config_of("fa2")), std::invalid_argument);
}

}  // namespace
}  // namespace simprec::attention
