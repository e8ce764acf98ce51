// The float fast path of flash attention (lib/attention/float_flash.hpp) against the
// site-by-site path (run_attention with FastPath::kSiteBySite), bit for bit: forward and
// backward, random, peaky (exp underflowing to subnormals and 0) and repeated-max inputs, causal
// or not, ragged tiles, Nq != Nk and dv != d, 1 and 3 threads, a backward pass from a given O
// and LSE; which configurations take it; and its order-preserving float GEMM against fmaf loops.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "lib/attention/attention.hpp"
#include "lib/attention/device_function.hpp"
#include "lib/attention/float_flash.hpp"
#include "lib/attention/preset.hpp"
#include "lib/attention/product.hpp"
#include "lib/inputs/generators.hpp"

namespace simprec::attention {
namespace {

// Bit-identical, -0 and +0 told apart.
void expect_same_bits(const std::vector<double>& fast, const std::vector<double>& general,
                      const std::string& what) {
  ASSERT_EQ(fast.size(), general.size()) << what;
  size_t differ = 0, first = 0;
  for (size_t i = 0; i < fast.size(); ++i) {
    if (std::bit_cast<uint64_t>(fast[i]) != std::bit_cast<uint64_t>(general[i])) {
      if (differ++ == 0) first = i;
    }
  }
  EXPECT_EQ(differ, 0u) << what << ": first at " << first << ": " << fast[first] << " vs "
                        << general[first];
}

void expect_same_outputs(const AttentionOutputs& fast, const AttentionOutputs& general,
                         const std::string& what) {
  expect_same_bits(fast.o, general.o, what + " O");
  expect_same_bits(fast.lse, general.lse, what + " LSE");
  expect_same_bits(fast.dq, general.dq, what + " dQ");
  expect_same_bits(fast.dk, general.dk, what + " dK");
  expect_same_bits(fast.dv, general.dv, what + " dV");
  expect_same_bits(fast.delta, general.delta, what + " D");
}

// Inputs of shape (batch, heads, nq, nk, d, dv), each tensor drawn by the generator `kind`.
AttentionInputs make_inputs(const std::string& kind, AttentionShape s, uint64_t seed) {
  AttentionInputs in = inputs::generate(kind, {s.batch, s.heads, s.nq, s.nq, s.d, s.d}, seed, true);
  if (s.nk != s.nq || s.dv != s.d) {
    in.k = inputs::generate(kind, {s.batch, s.heads, s.nk, s.nk, s.d, s.d}, seed + 1, false).k;
    in.v = inputs::generate(kind, {s.batch, s.heads, s.nk, s.nk, s.dv, s.dv}, seed + 2, false).v;
    in.d_out =
        inputs::generate(kind, {s.batch, s.heads, s.nq, s.nq, s.dv, s.dv}, seed + 3, true).d_out;
    in.shape = s;
  }
  return in;
}

// The fast path takes every problem of these inputs (so the comparison is not general vs
// general).
void expect_fast_path_taken(const AttentionInputs& in, const AttentionConfig& c) {
  ASSERT_TRUE(float_flash_applies(c));
  const AttentionInputs rounded = round_inputs(in, c);
  const AttentionShape& s = in.shape;
  AttentionOutputs out;
  out.o.assign(s.problems() * s.nq * s.dv, 0.0);
  out.lse.assign(s.problems() * s.nq, 0.0);
  out.dq.assign(s.problems() * s.nq * s.d, 0.0);
  out.dk.assign(s.problems() * s.nk * s.d, 0.0);
  out.dv.assign(s.problems() * s.nk * s.dv, 0.0);
  out.delta.assign(s.problems() * s.nq, 0.0);
  for (int64_t p = 0; p < s.problems(); ++p) EXPECT_TRUE(run_float_flash(c, rounded, out, p));
}

// The fast path (which must take every problem) against the site-by-site path, bit for bit:
// forward and backward with 1 and 3 threads, forward only, and when `from_given` a backward pass
// from the site-by-site path's O and LSE.
void expect_fast_path_equals_site_by_site(const AttentionInputs& in, AttentionConfig c,
                                          const std::string& what, bool from_given = false) {
  expect_fast_path_taken(in, c);
  c.threads = 1;
  const AttentionOutputs general = run_attention(in, c, FastPath::kSiteBySite);
  for (const unsigned threads : {1u, 3u}) {
    c.threads = threads;
    expect_same_outputs(run_attention(in, c), general,
                        what + " threads " + std::to_string(threads));
  }
  AttentionInputs forward_only = in;
  forward_only.d_out.clear();
  expect_same_outputs(run_attention(forward_only, c),
                      run_attention(forward_only, c, FastPath::kSiteBySite),
                      what + " forward only");
  if (!from_given) return;
  AttentionInputs given = in;
  given.o = general.o;
  given.lse = general.lse;
  expect_same_outputs(run_attention(given, c), run_attention(given, c, FastPath::kSiteBySite),
                      what + " given O and LSE");
}

struct Case {
  std::string kind;
  AttentionShape shape;
  int br, bc;
  Format format;
  double scale;  // 0: the default 1/sqrt(d)
};

// Sets the case's tiles, causal flag and scale in c; returns the case's label for traces.
std::string configure(const Case& k, bool causal, AttentionConfig& c) {
  c.block_rows = k.br;
  c.block_cols = k.bc;
  c.causal = causal;
  if (k.scale != 0) c.scale = k.scale;
  return k.kind + " " + std::to_string(k.shape.nq) + "x" + std::to_string(k.shape.nk) + " tiles " +
         std::to_string(k.br) + "x" + std::to_string(k.bc) + " " + k.format.name() +
         (causal ? " causal" : "");
}

TEST(FloatFlash, ForwardAndBackwardBitIdenticalToSiteBySite) {
  const Case cases[] = {
      {"normal", {2, 2, 150, 150, 48, 48}, 64, 64, formats::bf16, 0},
      {"normal", {1, 2, 150, 230, 40, 24}, 32, 48, formats::bf16, 0},
      {"normal", {1, 2, 230, 150, 40, 24}, 48, 32, formats::fp16, 0},
      {"normal", {1, 1, 130, 130, 64, 64}, 64, 64, formats::fp32, 0},
      // Scores up to ~40 times the scale: arguments below -87 and -104 (subnormal and zero P).
      {"peaky", {2, 1, 200, 200, 64, 64}, 64, 64, formats::bf16, 3.0},
      {"repeated-max", {2, 1, 192, 192, 64, 64}, 64, 64, formats::bf16, 0},
      {"sinks", {1, 1, 100, 100, 32, 32}, 16, 128, formats::bf16, 0},
  };
  int index = 0;
  for (const Case& k : cases) {
    for (const bool causal : {false, true}) {
      const AttentionInputs in = make_inputs(k.kind, k.shape, 40 + index++);
      AttentionConfig c = make_preset("fp32", k.format);
      const std::string what = configure(k, causal, c);
      SCOPED_TRACE(what);
      expect_fast_path_equals_site_by_site(in, c, what);
    }
  }
}

// The fa2 preset at F = bf16, its products accumulated one fmaf per term (`sequential`) and with
// its tensor-core model: bit-identical to the site-by-site path, forward and backward, causal or
// not, 1 and 3 threads, forward only, and a backward pass from a given O and LSE.
TEST(FloatFlash, Fa2BitIdenticalToSiteBySite) {
  const Case cases[] = {
      {"normal", {2, 2, 150, 150, 48, 48}, 64, 64, formats::bf16, 0},
      {"normal", {1, 2, 150, 230, 40, 24}, 32, 48, formats::bf16, 0},
      {"peaky", {2, 1, 200, 200, 64, 64}, 64, 64, formats::bf16, 3.0},
      {"repeated-max", {2, 1, 192, 192, 64, 64}, 64, 64, formats::bf16, 0},
      {"sinks", {1, 1, 100, 100, 32, 32}, 16, 128, formats::bf16, 0},
  };
  int index = 0;
  for (const bool tensor_core : {false, true}) {
    for (const Case& k : cases) {
      for (const bool causal : {false, true}) {
        const AttentionInputs in = make_inputs(k.kind, k.shape, 70 + index++);
        AttentionConfig c = make_preset("fa2", k.format);
        if (!tensor_core) {
          for (const char* site : {"s", "pv_acc", "dp", "dq_acc", "dk_acc", "dv_acc"}) {
            apply_override(c, std::string(site) + "=fp32:rne:sequential");
          }
        }
        const std::string what =
            std::string(tensor_core ? "tensor core " : "fmaf ") + configure(k, causal, c);
        SCOPED_TRACE(what);
        expect_fast_path_equals_site_by_site(in, c, what, true);
      }
    }
  }
}

// A backward pass from a given O and LSE: the fast path's, and where O is not all floats, the
// site-by-site path's (the fast path declines).
TEST(FloatFlash, BackwardFromAGivenForwardPass) {
  AttentionInputs in = make_inputs("normal", {2, 1, 140, 140, 32, 32}, 9);
  AttentionConfig c = make_preset("fp32");
  c.block_rows = 48;
  c.block_cols = 32;
  c.causal = true;
  const AttentionOutputs forward = run_attention(in, c);
  in.o = forward.o;
  in.lse = forward.lse;
  expect_same_outputs(run_attention(in, c), run_attention(in, c, FastPath::kSiteBySite),
                      "given O and LSE");
  AttentionInputs not_floats = in;
  for (double& x : not_floats.o) x += 0x1p-40;
  const AttentionOutputs general = run_attention(not_floats, c, FastPath::kSiteBySite);
  AttentionOutputs declined;
  declined.o = not_floats.o;
  declined.lse = not_floats.lse;
  declined.dq.assign(not_floats.q.size(), 0.0);
  declined.dk.assign(not_floats.k.size(), 0.0);
  declined.dv.assign(not_floats.v.size(), 0.0);
  declined.delta.assign(not_floats.lse.size(), 0.0);
  EXPECT_FALSE(run_float_flash(c, round_inputs(not_floats, c), declined, 0));
  expect_same_outputs(run_attention(not_floats, c), general, "given O not floats");
}

TEST(FloatFlash, AppliesToTheFp32AndBf16Fa2Presets) {
  AttentionConfig fa2 = make_preset("fa2");
  EXPECT_TRUE(float_flash_applies(fa2));
  for (const char* site : {"s", "pv_acc", "dp", "dq_acc", "dk_acc", "dv_acc"}) {
    apply_override(fa2, std::string(site) + "=fp32:rne:sequential");
  }
  EXPECT_TRUE(float_flash_applies(fa2));
  for (const char* change : {"s=fp32:rne:tc:sm90-mma-bf16", "p_cast=bf16:sr", "exp_impl=exp2",
                             "rescale=exp2-shift", "bwd_exp_impl=natural", "lse_log2e=fp32",
                             "grad_out=fp16", "p_cast=fp32", "rowsum_lanes=4"}) {
    AttentionConfig c = fa2;
    apply_override(c, change);
    EXPECT_FALSE(float_flash_applies(c)) << change;
  }
  AttentionConfig with_table = make_preset("fa2");
  with_table.device_tables[static_cast<int>(DeviceFn::kExp2)] =
      std::make_shared<DeviceFunctionTable>();
  EXPECT_FALSE(float_flash_applies(with_table));
  // The natural exp calls no exp2, but every other supplied function keeps it site by site.
  for (const DeviceFn fn : kDeviceFns) {
    AttentionConfig c = make_preset("fp32");
    c.device_tables[static_cast<int>(fn)] = std::make_shared<DeviceFunctionTable>();
    EXPECT_EQ(float_flash_applies(c), fn == DeviceFn::kExp2) << device_fn_name(fn);
  }
  EXPECT_FALSE(float_flash_applies(make_preset("fa2", formats::fp16)));
  for (const Format& f : {formats::bf16, formats::fp16, formats::e4m3fn, formats::fp32}) {
    AttentionConfig c = make_preset("fp32", f);
    EXPECT_TRUE(float_flash_applies(c)) << f.name();
    c.causal = true;
    c.block_rows = 17;
    c.scale = 0.3;
    c.seed = 5;
    EXPECT_TRUE(float_flash_applies(c)) << f.name();
  }
  EXPECT_FALSE(float_flash_applies(make_preset("fp32", formats::fp64)));
  for (const char* preset : {"fp64", "torch-math", "paper-a", "flash-lp", "cuda-fa2", "torch-flash",
                             "torch-efficient"}) {
    EXPECT_FALSE(float_flash_applies(make_preset(preset))) << preset;
  }
  AttentionConfig traced = make_preset("fp32");
  traced.trace = true;
  EXPECT_FALSE(float_flash_applies(traced));
  for (const char* change : {"exp_impl=exp2",
                             "exp_impl=exact",
                             "algorithm=standard",
                             "pv_mode=per-block",
                             "norm=divide",
                             "rowsum_lanes=4",
                             "p_cast=bf16",
                             "o_out=bf16",
                             "exp=fp32:rtz",
                             "s=fp32:rne:pairwise",
                             "rowsum=fp32:rne:kahan",
                             "dq_acc=fp32:sr",
                             "p_norm=fp64",
                             "rowsum_block=warp-groups",
                             "lse_impl=fma-log",
                             "bwd_exp_impl=exp2",
                             "delta_sum=fa2",
                             "query_order=descending",
                             "dq=block-partials",
                             "grad_scale=fp32-then-cast",
                             "ds_p=cast",
                             "lse_log2e=fp32",
                             "rescale=exp2-diff"}) {
    AttentionConfig c = make_preset("fp32");
    apply_override(c, change);
    EXPECT_FALSE(float_flash_applies(c)) << change;
  }
  for (const char* mitigation : {"beta-rowmax", "sr-p", "delta-dpp", "hp:exp"}) {
    AttentionConfig c = make_preset("fp32");
    apply_mitigation(c, mitigation);
    EXPECT_FALSE(float_flash_applies(c)) << mitigation;
  }
}

// c += A B in order of k for every output, A read with both layouts, C with a wider row stride.
TEST(FloatSequentialStrided, EqualsFmafLoops) {
  std::mt19937 rng(3);
  std::normal_distribution<float> normal;
  const struct {
    int64_t m, n, k;
  } shapes[] = {{1, 1, 1},     {7, 5, 3},     {8, 32, 17}, {13, 45, 64},
                {64, 64, 128}, {64, 128, 64}, {9, 33, 0},  {17, 16, 5}};
  for (const auto& s : shapes) {
    for (const bool transposed : {false, true}) {
      const int64_t ldc = s.n + 3, ldb = s.n + 1;
      std::vector<float> a(s.m * s.k + 1), b(s.k * ldb + 1), c(s.m * ldc), expected;
      for (float& x : a) x = normal(rng);
      for (float& x : b) x = normal(rng);
      for (float& x : c) x = normal(rng);
      const int64_t a_row = transposed ? 1 : s.k, a_col = transposed ? s.m : 1;
      expected = c;
      for (int64_t i = 0; i < s.m; ++i) {
        for (int64_t j = 0; j < s.n; ++j) {
          float acc = expected[i * ldc + j];
          for (int64_t kk = 0; kk < s.k; ++kk) {
            acc = std::fmaf(a[i * a_row + kk * a_col], b[kk * ldb + j], acc);
          }
          expected[i * ldc + j] = acc;
        }
      }
      float_sequential_strided(s.m, s.n, s.k, a.data(), a_row, a_col, b.data(), ldb, c.data(), ldc);
      EXPECT_EQ(std::memcmp(c.data(), expected.data(), c.size() * sizeof(float)), 0)
          << s.m << "x" << s.n << "x" << s.k << (transposed ? " transposed" : "");
    }
  }
}

}  // namespace
}  // namespace simprec::attention
