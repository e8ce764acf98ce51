// The flash backward pass's structural options (config.hpp: delta_sum, query_order, dq,
// grad_scale, ds_p, lse_log2e, bwd_exp_impl, and the forward's rowsum_block, lse_impl,
// rescale=exp2-diff), each against an independent computation: the D orders against float
// arithmetic written out here, the split-keys order against runs with the blocks swapped in the
// inputs, block partials against per-block runs. Their agreement with PyTorch's kernels is
// tests/torch_sdpa_test.cpp.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "lib/attention/attention.hpp"
#include "lib/attention/config.hpp"
#include "lib/attention/preset.hpp"
#include "lib/inputs/generators.hpp"

namespace {

using namespace simprec;
using namespace simprec::attention;

TEST(BackwardOptions, KeysParseRejectUnknownValuesAndShowInTheReport) {
  AttentionConfig c = make_preset("fa2", formats::bf16);
  const nlohmann::json plain = to_json(c);
  for (const char* key : {"delta_sum", "query_order", "split_ties", "dq", "grad_scale", "ds_p",
                          "lse_log2e", "bwd_exp_impl", "rowsum_block", "lse_impl"}) {
    EXPECT_FALSE(plain.contains(key)) << key;  // defaults are not reported
    EXPECT_THROW(apply_override(c, std::string(key) + "=nonsense"), std::invalid_argument) << key;
  }
  for (const char* set :
       {"delta_sum=fa2", "query_order=split-keys", "split_ties=shuffled", "dq=block-partials",
        "grad_scale=ds", "ds_p=cast", "lse_log2e=fp32", "bwd_exp_impl=natural",
        "rowsum_block=warp-groups", "lse_impl=fma-log", "rescale=exp2-diff"}) {
    apply_override(c, set);
  }
  const nlohmann::json j = to_json(c);
  EXPECT_EQ(j["delta_sum"], "fa2");
  EXPECT_EQ(j["query_order"], "split-keys");
  EXPECT_EQ(j["split_ties"], "shuffled");
  EXPECT_EQ(j["dq"], "block-partials");
  EXPECT_EQ(j["grad_scale"], "ds");
  EXPECT_EQ(j["ds_p"], "cast");
  EXPECT_EQ(j["lse_log2e"], "fp32");
  EXPECT_EQ(j["bwd_exp_impl"], "natural");
  EXPECT_EQ(j["rowsum_block"], "warp-groups");
  EXPECT_EQ(j["lse_impl"], "fma-log");
  EXPECT_EQ(j["rescale"], "exp2-diff");
  apply_override(c, "bwd_exp_impl=same");
  EXPECT_FALSE(to_json(c).contains("bwd_exp_impl"));
}

AttentionInputs inputs(int64_t n, int64_t d, uint64_t seed) {
  return round_inputs(inputs::generate("normal", {1, 1, n, n, d, d}, seed, true),
                      make_preset("fp32", formats::bf16));
}

// D of row i as FlashAttention-2's dot_do_o (T threads over chunks of 8, butterfly T/2..1) or
// the memory-efficient kernel's computeDelta (butterfly 1..T/2), in float.
float threaded_delta(const double* dorow, const double* orow, int dv, int threads, bool down) {
  std::vector<float> part(threads, 0.0f);
  for (int t = 0; t < threads; ++t) {
    for (int c0 = 8 * t; c0 < dv; c0 += 8 * threads) {
      for (int c = c0; c < c0 + 8 && c < dv; ++c) {
        part[t] = std::fma(static_cast<float>(dorow[c]), static_cast<float>(orow[c]), part[t]);
      }
    }
  }
  std::vector<int> offsets;
  for (int o = 1; o < threads; o *= 2) offsets.push_back(o);
  if (down) std::reverse(offsets.begin(), offsets.end());
  for (int o : offsets) {
    std::vector<float> next(threads);
    for (int t = 0; t < threads; ++t) next[t] = part[t] + part[t ^ o];
    part = next;
  }
  return part[0];
}

TEST(BackwardOptions, DeltaSumOrdersAreTheKernelsThreadReductions) {
  for (const int dv : {64, 128, 96}) {
    AttentionInputs in = inputs(70, dv, 3);
    // FlashAttention-2's dot_do_o: kBlockKSmem / 8 threads per row, kBlockKSmem = 64 for head
    // dimensions that are multiples of 64, else 32 (kernel_traits.h).
    for (const auto& [name, threads, down] :
         {std::tuple{"fa2", dv % 64 == 0 ? 8 : 4, true}, std::tuple{"mem-eff", 2, false}}) {
      AttentionConfig c = make_preset("fp32", formats::bf16);
      apply_override(c, std::string("delta_sum=") + name);
      const AttentionOutputs out = run_attention(in, c);
      for (int64_t i = 0; i < in.shape.nq; ++i) {
        const float expected =
            threaded_delta(in.d_out.data() + i * dv, out.o.data() + i * dv, dv, threads, down);
        ASSERT_EQ(static_cast<float>(out.delta[i]), expected)
            << name << " dv " << dv << " row " << i;
      }
    }
  }
}

// Backward passes from one fixed forward pass (O, LSE), so that permuting blocks of the inputs
// changes only the order of the backward pass's accumulations.
struct Fixed {
  AttentionInputs in;
  explicit Fixed(const AttentionConfig& c) : in(inputs(128, 64, 7)) {
    const AttentionOutputs fwd = run_attention(in, c);
    in.o = fwd.o;
    in.lse = fwd.lse;
  }
};

// Swaps rows [0, 64) and [64, 128) of a (128 x width) tensor.
void swap_blocks(std::vector<double>& x, int64_t width) {
  for (int64_t r = 0; r < 64; ++r) {
    for (int64_t c = 0; c < width; ++c) std::swap(x[r * width + c], x[(r + 64) * width + c]);
  }
}

TEST(BackwardOptions, SplitKeysOrderIsTheRotatedScheduleOfTheKernel) {
  AttentionConfig split = make_preset("fa2", formats::bf16);
  apply_override(split, "query_order=split-keys");
  apply_override(split, "grad_out=fp64");  // the accumulators, scaled by 1/8 exactly
  AttentionConfig ascending = split;
  apply_override(ascending, "query_order=ascending");
  const Fixed f(split);
  const AttentionOutputs s = run_attention(f.in, split);
  const AttentionOutputs a = run_attention(f.in, ascending);
  // Key blocks swapped: dQ of query block 1 then sees key block 1 first, as with split keys.
  AttentionInputs kswap = f.in;
  swap_blocks(kswap.k, 64);
  swap_blocks(kswap.v, 64);
  const AttentionOutputs k = run_attention(kswap, ascending);
  // Query blocks swapped: key block 1 then takes query block 1 first, as with split keys.
  AttentionInputs qswap = f.in;
  swap_blocks(qswap.q, 64);
  swap_blocks(qswap.d_out, 64);
  swap_blocks(qswap.o, 64);
  swap_blocks(qswap.lse, 1);
  const AttentionOutputs q = run_attention(qswap, ascending);
  for (int64_t x = 0; x < 64 * 64; ++x) {
    ASSERT_EQ(s.dq[x], a.dq[x]) << x;                      // query block 0: key blocks 0, 1
    ASSERT_EQ(s.dq[64 * 64 + x], k.dq[64 * 64 + x]) << x;  // query block 1: key blocks 1, 0
    ASSERT_EQ(s.dk[x], a.dk[x]) << x;                      // key block 0: query blocks 0, 1
    ASSERT_EQ(s.dv[x], a.dv[x]) << x;
    ASSERT_EQ(s.dk[64 * 64 + x], q.dk[64 * 64 + x]) << x;  // key block 1: query blocks 1, 0
    ASSERT_EQ(s.dv[64 * 64 + x], q.dv[64 * 64 + x]) << x;
  }
  // The order matters somewhere, or the test would show nothing.
  int differ = 0;
  for (size_t x = 0; x < s.dq.size(); ++x) differ += s.dq[x] != a.dq[x];
  EXPECT_GT(differ, 0);
}

// The inputs with key/value block b taken from block order[b] (64 keys per block).
AttentionInputs permute_key_blocks(const AttentionInputs& in, const std::vector<int64_t>& order) {
  AttentionInputs out = in;
  const int64_t d = in.shape.d, block = 64 * d;
  for (size_t b = 0; b < order.size(); ++b) {
    std::copy_n(in.k.begin() + order[b] * block, block, out.k.begin() + b * block);
    std::copy_n(in.v.begin() + order[b] * block, block, out.v.begin() + b * block);
  }
  return out;
}

TEST(BackwardOptions, SplitKeysTiesAddTheHigherKeyBlockFirst) {
  // One query block and three key blocks: with split keys all three reach it at step 0, and
  // dQ chains them in split_ties' order, which the ascending order shows on permuted keys.
  AttentionConfig split = make_preset("fa2", formats::bf16);
  apply_override(split, "query_order=split-keys");
  apply_override(split, "grad_out=fp64");
  AttentionInputs in = round_inputs(inputs::generate("normal", {1, 1, 64, 192, 64, 64}, 5, true),
                                    make_preset("fp32", formats::bf16));
  const AttentionOutputs fwd = run_attention(in, split);
  in.o = fwd.o;
  in.lse = fwd.lse;
  AttentionConfig ascending = split;
  apply_override(ascending, "query_order=ascending");
  const auto dq_in_order = [&](const std::vector<int64_t>& order) {
    return run_attention(permute_key_blocks(in, order), ascending).dq;
  };
  const AttentionOutputs higher_first = run_attention(in, split);
  EXPECT_EQ(higher_first.dq, dq_in_order({2, 1, 0}));
  AttentionConfig lower = split;
  apply_override(lower, "split_ties=ascending");
  const std::vector<double> lower_first = run_attention(in, lower).dq;
  EXPECT_EQ(lower_first, dq_in_order({0, 1, 2}));
  EXPECT_NE(lower_first, higher_first.dq);  // the order shows in dQ's bits
  // Shuffled: for each seed, one of the six orders.
  AttentionConfig shuffled = split;
  apply_override(shuffled, "split_ties=shuffled");
  std::vector<std::vector<double>> orders;
  std::vector<int64_t> order{0, 1, 2};
  do {
    orders.push_back(dq_in_order(order));
  } while (std::next_permutation(order.begin(), order.end()));
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    shuffled.seed = seed;
    const std::vector<double> dq = run_attention(in, shuffled).dq;
    EXPECT_EQ(std::count(orders.begin(), orders.end(), dq), 1) << "seed " << seed;
  }
}

TEST(BackwardOptions, BlockPartialsAddEachKeyBlocksChainOnceInFp32) {
  AttentionConfig c = make_preset("fa2", formats::bf16);
  apply_override(c, "dq=block-partials");
  apply_override(c, "grad_out=fp64");  // dQ = acc / 8 exactly
  const Fixed f(c);
  const AttentionOutputs full = run_attention(f.in, c);
  // Each key block alone (its K and V rows, the same O and LSE): its chain from zero.
  std::vector<double> partial[2];
  for (int block = 0; block < 2; ++block) {
    AttentionInputs half = f.in;
    half.shape.nk = 64;
    half.k.assign(f.in.k.begin() + block * 64 * 64, f.in.k.begin() + (block + 1) * 64 * 64);
    half.v.assign(f.in.v.begin() + block * 64 * 64, f.in.v.begin() + (block + 1) * 64 * 64);
    partial[block] = run_attention(half, c).dq;
  }
  for (size_t x = 0; x < full.dq.size(); ++x) {
    const float sum = static_cast<float>(partial[0][x] * 8) + static_cast<float>(partial[1][x] * 8);
    ASSERT_EQ(full.dq[x] * 8, static_cast<double>(sum)) << x;
  }
}

TEST(BackwardOptions, GradScaleFp32ThenCastRoundsTheScaledAccumulatorToFp32First) {
  // A scale that is not a power of two, so that the placements differ.
  AttentionConfig c = make_preset("fa2", formats::bf16);
  c.scale = 0.3;
  apply_override(c, "grad_out=fp64");
  const AttentionInputs in = inputs(40, 16, 5);
  AttentionConfig fp32_then = c;
  apply_override(fp32_then, "grad_scale=fp32-then-cast");
  const AttentionOutputs exact = run_attention(in, c);  // scale*acc rounded once (fp64)
  const AttentionOutputs then = run_attention(in, fp32_then);
  int differ = 0;
  for (size_t x = 0; x < exact.dq.size(); ++x) {
    ASSERT_EQ(then.dq[x], static_cast<double>(static_cast<float>(exact.dq[x]))) << x;
    differ += then.dq[x] != exact.dq[x];
  }
  EXPECT_GT(differ, 0);
}

}  // namespace
