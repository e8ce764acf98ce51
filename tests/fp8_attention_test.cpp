// The FP8 attention numerics (docs/fp8_attention.md) against an independent scalar
// implementation written from their description (tests/fp8_reference.hpp), one query row at a
// time: the fa3-fp8 preset (wgmma fp8 chains over the key blocks, P times 256 cast to e4m3, O in
// fp32 then bf16), its two-level variant (pv_promote), FlashAttention-4's lazy rescaling; and the
// query-row sample that the long-context study runs on.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <string>
#include <vector>

#include "lib/attention/attention.hpp"
#include "lib/attention/numerics_spec.hpp"
#include "lib/attention/preset.hpp"
#include "lib/inputs/generators.hpp"
#include "lib/inputs/query_rows.hpp"
#include "tests/fp8_reference.hpp"

namespace {

using namespace simprec;
using namespace simprec::attention;
using fp8_reference::fp8_forward;
using fp8_reference::Fp8Spec;

// Normal inputs with the keys' scale growing along the sequence, so that the row max grows
// over the key blocks by small and large steps (rescales taken and, lazily, skipped).
AttentionInputs growing_inputs(int64_t nq, int64_t nk, int64_t d, uint64_t seed,
                               double last_key_scale = 4) {
  // The generators make Nq = Nk: nq of the rows as queries.
  AttentionInputs in =
      inputs::select_query_rows(inputs::generate("normal", {1, 1, nk, nk, d, d}, seed, false), nq);
  for (int64_t j = 0; j < nk; ++j) {
    const double growth =
        1.0 + (last_key_scale - 1) * static_cast<double>(j) / static_cast<double>(nk);
    for (int64_t x = 0; x < d; ++x) in.k[j * d + x] *= growth;
  }
  return in;
}

void expect_matches_reference(const std::string& spec_text, Fp8Spec spec,
                              const AttentionInputs& raw) {
  const AttentionConfig c = parse_numerics(spec_text, formats::e4m3fn);
  const AttentionInputs in = round_inputs(raw, c);
  const AttentionOutputs out = run_attention(raw, c);
  const AttentionShape& s = in.shape;
  spec.scale = softmax_scale(c, s);
  const std::vector<double> expected =
      fp8_forward(spec, s.nq, s.nk, s.d, in.q.data(), in.k.data(), in.v.data());
  int64_t differ = 0;
  for (size_t x = 0; x < expected.size(); ++x) differ += out.o[x] != expected[x];
  EXPECT_EQ(differ, 0) << spec_text << ": " << differ << " of " << expected.size()
                       << " values differ";
}

TEST(Fp8Attention, PresetIsWhatTheDocsSay) {
  const AttentionConfig c = make_preset("fa3-fp8", formats::e4m3fn);
  EXPECT_EQ(c.site(Site::kPvAcc).accumulation, "tc:sm90-wgmma-e4m3");
  EXPECT_EQ(c.site(Site::kS).accumulation, "tc:sm90-wgmma-e4m3");
  EXPECT_EQ(c.site(Site::kPCast).format, formats::e4m3fn);
  EXPECT_EQ(c.site(Site::kOOut).format, formats::bf16);
  EXPECT_EQ(c.site(Site::kONorm).format, formats::fp32);
  EXPECT_EQ(c.p_scale, 256.0);
  EXPECT_EQ(c.pv_promote_blocks, 0);
  EXPECT_EQ(c.block_cols, 128);
}

TEST(Fp8Attention, OneLevelMatchesTheScalarReference) {
  Fp8Spec spec;
  spec.block_cols = 32;
  expect_matches_reference("fa3-fp8,tile=16x32", spec, growing_inputs(24, 200, 32, 1));
}

TEST(Fp8Attention, TwoLevelMatchesTheScalarReference) {
  Fp8Spec spec;
  spec.block_cols = 32;
  for (int promote : {1, 3}) {
    spec.promote = promote;
    expect_matches_reference("fa3-fp8,tile=16x32,pv_promote=" + std::to_string(promote), spec,
                             growing_inputs(24, 200, 32, 2));
  }
}

TEST(Fp8Attention, LazyRescaleMatchesTheScalarReference) {
  Fp8Spec spec;
  spec.block_cols = 32;
  spec.lazy = 8;
  // P up to 2^8: unscaled, as 256 * 2^8 would overflow e4m3. Keys up to 12 times larger: the
  // max grows past the threshold in some blocks and within it in others.
  spec.p_scale = 1;
  const AttentionInputs raw = growing_inputs(24, 200, 32, 3, 12);
  expect_matches_reference("fa3-fp8,tile=16x32,lazy_rescale=8,p_scale=1", spec, raw);
  // Some rescale was skipped on these inputs (else the comparison says nothing of laziness).
  const auto o_of = [&](const std::string& text) {
    return run_attention(raw, parse_numerics(text, formats::e4m3fn)).o;
  };
  EXPECT_NE(o_of("fa3-fp8,tile=16x32,lazy_rescale=8,p_scale=1"),
            o_of("fa3-fp8,tile=16x32,p_scale=1"));
}

TEST(Fp8Attention, TwoLevelAndPScaleChangeTheResult) {
  // The options reach the computation: with them ignored, the reference tests above would
  // compare two computations that both ignore them.
  const AttentionInputs raw = growing_inputs(8, 1024, 32, 4);
  const auto o_of = [&](const std::string& text) {
    return run_attention(raw, parse_numerics(text, formats::e4m3fn)).o;
  };
  const std::vector<double> one = o_of("fa3-fp8,tile=16x32");
  EXPECT_NE(one, o_of("fa3-fp8,tile=16x32,pv_promote=1"));
  EXPECT_NE(one, o_of("fa3-fp8,tile=16x32,p_scale=1"));
}

TEST(Fp8Attention, LazyRescaleLetsPExceedOne) {
  // Two keys, the second scoring higher by less than the threshold: with lazy rescaling its P
  // is exp2 of the growth (> 1) and no rescale happens; O is the same weighted mean within the
  // fp32 roundings.
  AttentionInputs in;
  in.shape = {1, 1, 1, 2, 1, 1};
  in.q = {1.0};
  in.k = {1.0, 4.0};
  in.v = {1.0, 2.0};
  AttentionConfig c = parse_numerics("fp32,tile=1x1,lazy_rescale=8", formats::fp32);
  c.trace = true;
  const AttentionOutputs lazy = run_attention(in, c);
  c = parse_numerics("fp32,tile=1x1", formats::fp32);
  c.trace = true;
  const AttentionOutputs eager = run_attention(in, c);
  const auto rescales = [](const AttentionOutputs& out) {
    return out.traces[static_cast<int>(Site::kORescale)].count;
  };
  EXPECT_EQ(rescales(lazy), 0u);
  EXPECT_GT(rescales(eager), 0u);
  const double w = std::exp(3.0);  // the second key's weight relative to the first
  EXPECT_NEAR(lazy.o[0], (1 + 2 * w) / (1 + w), 1e-6);
  EXPECT_NEAR(eager.o[0], (1 + 2 * w) / (1 + w), 1e-6);
  EXPECT_NEAR(lazy.lse[0], eager.lse[0], 1e-6);
}

// SageAttention's bound for FP8 P.V with fp16 accumulators: a partial sum of n products p*v
// overflows fp16 once it reaches 65520 (the rounding midpoint above 65504). With every score
// equal, P = 1, P cast as 256 (p_scale) and V = v everywhere, a chain of n keys sums to
// 256 n v exactly: 128-key chains overflow from v = 2 (65536), 32-key chains (one wgmma k32
// each, 128x32 tiles) from v = 8, and 1.875 and 7.5 stay finite (61440).
TEST(Fp8Attention, Fp16AccumulatorOverflowsAtTheBound) {
  const auto o_of = [](const std::string& tile, double v) {
    AttentionInputs in;
    in.shape = {1, 1, 2, 256, 32, 32};
    in.q.assign(2 * 32, 0.0);
    in.k.assign(256 * 32, 1.0);
    in.v.assign(256 * 32, v);
    const AttentionConfig c = parse_numerics(
        "fa3-fp8,tile=" + tile + ",pv_promote=1,pv_acc=fp16:rne:tc:sm90-wgmma-e4m3-fp16acc",
        formats::e4m3fn);
    return run_attention(in, c).o[0];
  };
  EXPECT_EQ(o_of("128x128", 1.875), 1.875);
  EXPECT_TRUE(std::isinf(o_of("128x128", 2.0)));
  EXPECT_EQ(o_of("128x32", 7.5), 7.5);
  EXPECT_TRUE(std::isinf(o_of("128x32", 8.0)));
}

TEST(Fp8Attention, QueryRowSampleIsTheFullProblemsRows) {
  const AttentionInputs raw = inputs::generate("normal", {2, 1, 96, 96, 32, 32}, 5, false);
  const AttentionConfig c = parse_numerics("fa3-fp8,tile=16x32", formats::e4m3fn);
  const AttentionOutputs full = run_attention(raw, c);
  const AttentionInputs sample = inputs::select_query_rows(raw, 7);
  ASSERT_EQ(sample.shape.nq, 7);
  const AttentionOutputs part = run_attention(sample, c);
  for (int64_t p = 0; p < 2; ++p) {
    for (int64_t r = 0; r < 7; ++r) {
      const int64_t row = r * 96 / 7;
      for (int64_t x = 0; x < 32; ++x) {
        EXPECT_EQ(part.o[(p * 7 + r) * 32 + x], full.o[(p * 96 + row) * 32 + x])
            << "problem " << p << " sample row " << r;
      }
      EXPECT_EQ(part.lse[p * 7 + r], full.lse[p * 96 + row]);
    }
  }
  EXPECT_EQ(inputs::select_query_rows(raw, 1000).shape.nq, 96);  // at most every row
  EXPECT_THROW(inputs::select_query_rows(raw, 0), std::invalid_argument);
  const AttentionInputs with_grad = inputs::generate("normal", {1, 1, 8, 8, 4, 4}, 5, true);
  EXPECT_THROW(inputs::select_query_rows(with_grad, 2), std::invalid_argument);
}

TEST(Fp8Attention, OptionsAreCheckedAndCanonical) {
  EXPECT_EQ(canonical_numerics(parse_numerics("fa3-fp8,pv_promote=4", formats::e4m3fn)),
            "fa3-fp8,format=e4m3fn,pv_promote=4");
  for (const char* bad : {"fa3-fp8,pv_promote=-1", "fa3-fp8,pv_promote=x", "fa3-fp8,p_scale=3",
                          "fa3-fp8,p_scale=0", "fa3-fp8,p_scale=1e9", "fa2,lazy_rescale=-1",
                          "fa2,lazy_rescale=nan", "fa2,lazy_rescale=65"}) {
    EXPECT_THROW(parse_numerics(bad, formats::e4m3fn), std::invalid_argument) << bad;
  }
  const AttentionInputs raw = inputs::generate("normal", {1, 1, 8, 8, 4, 4}, 5, false);
  EXPECT_THROW(run_attention(raw, parse_numerics("paper-a,pv_promote=2", formats::bf16)),
               std::invalid_argument);
}

}  // namespace
