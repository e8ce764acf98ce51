// Emulated attention: presets against the exact reference, the reference against an independent
// multiprecision oracle and finite differences, the rounding sites against the rounding kernel,
// thread-count invariance, and errors for bad configurations and inputs.
#include <gtest/gtest.h>

#include <boost/multiprecision/cpp_bin_float.hpp>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "emulation/accumulation.hpp"
#include "emulation/arithmetic.hpp"
#include "emulation/random.hpp"
#include "emulation/round.hpp"
#include "lib/attention/attention.hpp"
#include "lib/attention/model.hpp"
#include "lib/attention/preset.hpp"
#include "lib/attention/product.hpp"
#include "lib/inputs/generators.hpp"

namespace simprec::attention {
namespace {

double max_rel(const std::vector<double>& a, const std::vector<double>& b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    num = std::max(num, std::fabs(a[i] - b[i]));
    den = std::max(den, std::fabs(b[i]));
  }
  return num / den;
}

AttentionShape shape(int64_t b, int64_t h, int64_t n, int64_t d) {
  return {b, h, n, n, d, d};
}

// Item 3: every preset with F = fp64 computes in fp64 only and agrees with the reference.
TEST(AttentionPresets, Fp64FormatAgreesWithReferenceTo1e12) {
  const auto in = inputs::generate("normal", shape(2, 2, 100, 24), 7, true);
  for (const bool causal : {false, true}) {
    for (const auto& name : preset_names()) {
      // A model of one input format (the Triton example: bf16) has no fp64 form.
      if (!find_builtin_model(name)->only_formats.empty() && name != "sage") {
        EXPECT_THROW(make_preset(name, formats::fp64), std::invalid_argument) << name;
        continue;
      }
      // The presets that quantise their inputs (sage, sage2: INT8 Q and K) cannot agree with
      // the reference at any F, and compute the forward pass only: they refuse dO (their forward
      // pass is checked against scalar references in sage_attention_test.cpp).
      if (make_preset(name, formats::fp16).quant.active()) {
        SCOPED_TRACE(name);
        EXPECT_THROW(run_attention(in, make_preset(name, formats::fp16)), std::invalid_argument);
        continue;
      }
      AttentionConfig c = make_preset(name, formats::fp64);
      c.causal = causal;
      c.block_rows = 32;
      c.block_cols = 48;  // tiles that do not divide N
      const auto out = run_attention(in, c);
      // The scale as the preset holds it (the PyTorch presets round it to fp32, as the kernels
      // receive it).
      const double scale = c.softmax_scale->scale(softmax_scale(c, in.shape));
      const auto ref = reference_attention(round_inputs(in, c), scale, causal);
      SCOPED_TRACE(name + (causal ? " causal" : ""));
      EXPECT_LT(max_rel(out.o, ref.o), 1e-12);
      EXPECT_LT(max_rel(out.dq, ref.dq), 1e-12);
      EXPECT_LT(max_rel(out.dk, ref.dk), 1e-12);
      EXPECT_LT(max_rel(out.dv, ref.dv), 1e-12);
      EXPECT_LT(max_rel(out.lse, ref.lse), 1e-12);
    }
  }
}

// The double reference against standard attention in 50-digit arithmetic, written out here.
TEST(AttentionReference, AgreesWithMultiprecisionStandardAttention) {
  using Big = boost::multiprecision::cpp_bin_float_50;
  const auto in = inputs::generate("peaky", shape(1, 1, 13, 5), 3, true);
  const int64_t n = 13, d = 5;
  const double scale = 0.37;
  const auto ref = reference_attention(in, scale, false);
  std::vector<Big> p(n * n), o(n * d, Big(0));
  for (int64_t i = 0; i < n; ++i) {
    std::vector<Big> s(n);
    Big m = -1e300, l = 0;
    for (int64_t j = 0; j < n; ++j) {
      Big acc = 0;
      for (int64_t c = 0; c < d; ++c) acc += Big(in.q[i * d + c]) * Big(in.k[j * d + c]);
      s[j] = acc * Big(scale);
      m = std::max(m, s[j]);
    }
    for (int64_t j = 0; j < n; ++j) l += (p[i * n + j] = boost::multiprecision::exp(s[j] - m));
    for (int64_t j = 0; j < n; ++j) p[i * n + j] /= l;
    for (int64_t c = 0; c < d; ++c) {
      for (int64_t j = 0; j < n; ++j) o[i * d + c] += p[i * n + j] * Big(in.v[j * d + c]);
      EXPECT_NEAR(ref.o[i * d + c], static_cast<double>(o[i * d + c]),
                  1e-14 * (1 + std::fabs(ref.o[i * d + c])));
    }
  }
  // dV = P^T dO
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t c = 0; c < d; ++c) {
      Big acc = 0;
      for (int64_t i = 0; i < n; ++i) acc += p[i * n + j] * Big(in.d_out[i * d + c]);
      EXPECT_NEAR(ref.dv[j * d + c], static_cast<double>(acc),
                  1e-14 * (1 + std::fabs(ref.dv[j * d + c])));
    }
  }
}

// The reference backward pass against central differences of the reference forward pass.
TEST(AttentionReference, GradientsMatchFiniteDifferences) {
  auto in = inputs::generate("normal", shape(1, 1, 6, 4), 11, true);
  const double scale = 0.5;
  const auto ref = reference_attention(in, scale, true);
  const auto loss = [&](const AttentionInputs& x) {
    const auto o = reference_attention(x, scale, true).o;
    double l = 0;
    for (size_t i = 0; i < o.size(); ++i) l += o[i] * x.d_out[i];
    return l;
  };
  const double h = 1e-6;
  for (const char* which : {"q", "k", "v"}) {
    std::vector<double>& x = which[0] == 'q' ? in.q : which[0] == 'k' ? in.k : in.v;
    const std::vector<double>& g = which[0] == 'q' ? ref.dq : which[0] == 'k' ? ref.dk : ref.dv;
    for (size_t i = 0; i < x.size(); ++i) {
      const double keep = x[i];
      x[i] = keep + h;
      const double up = loss(in);
      x[i] = keep - h;
      const double down = loss(in);
      x[i] = keep;
      EXPECT_NEAR(g[i], (up - down) / (2 * h), 1e-7) << which << "[" << i << "]";
    }
  }
}

TEST(AttentionFlash, TilingAndShiftDoNotChangeTheFp64Result) {
  const auto in = inputs::generate("repeated-max", shape(2, 1, 70, 16), 5, true);
  AttentionConfig base = make_preset("fp64", formats::fp64);
  const auto ref = run_attention(in, base);
  for (const auto& [br, bc] : {std::pair{1, 1}, {16, 8}, {70, 70}, {128, 3}}) {
    AttentionConfig c = base;
    c.block_rows = br;
    c.block_cols = bc;
    apply_mitigation(c, "beta-rowmax:2");  // shift invariance of softmax
    const auto out = run_attention(in, c);
    EXPECT_LT(max_rel(out.o, ref.o), 1e-13) << br << "x" << bc;
    EXPECT_LT(max_rel(out.dq, ref.dq), 1e-12) << br << "x" << bc;
  }
}

TEST(AttentionFlash, CausalFirstRowIsFirstValue) {
  const auto in = inputs::generate("normal", shape(1, 1, 20, 8), 2, false);
  for (const auto& name : {"fa2", "paper-a", "baseline-lp", "torch-math"}) {
    AttentionConfig c = make_preset(name);
    c.causal = true;
    const auto out = run_attention(in, c);
    const auto rounded = round_inputs(in, c);
    for (int c2 = 0; c2 < 8; ++c2) EXPECT_EQ(out.o[c2], rounded.v[c2]) << name;
  }
}

// Outputs are representable in their site formats, and stochastic rounding draws from streams
// keyed by (seed, site, element): any thread count gives the same bits.
TEST(AttentionFlash, ThreadCountInvarianceAndOutputFormat) {
  const auto in = inputs::generate("normal", shape(3, 2, 40, 8), 9, true);
  AttentionConfig c = make_preset("fa2");
  apply_mitigation(c, "sr-p:12");
  apply_override(c, "dq_acc=fp32:sr:sequential");
  c.block_rows = 16;
  c.block_cols = 16;
  c.threads = 1;
  const auto one = run_attention(in, c);
  c.threads = 4;
  const auto four = run_attention(in, c);
  EXPECT_EQ(one.o, four.o);
  EXPECT_EQ(one.dq, four.dq);
  EXPECT_EQ(one.dk, four.dk);
  c.seed = 1;
  EXPECT_NE(run_attention(in, c).o, one.o);  // the seed reaches the stochastic sites
  for (double x : one.o)
    EXPECT_EQ(decode(formats::bf16, round_to_format(formats::bf16, unrounded_from_double(x), {})),
              x);
}

// The site rounder's fast paths against the rounding kernel, on random doubles of every range.
TEST(AttentionSites, RounderMatchesRoundingKernel) {
  const RandomStream rs{42, 1};
  for (const Format f : {formats::bf16, formats::fp16, formats::e4m3fn, formats::e5m2,
                         formats::fp32, formats::tf32}) {
    for (const char* mode : {"rne", "rtz", "sr8"}) {
      const SiteSpec spec = parse_site_spec(f.name() + ":" + mode);
      const SiteRounder r(spec, 3, Site::kPCast);
      for (uint64_t i = 0; i < 20000; ++i) {
        const uint64_t bits = (uint64_t{random_bits(rs, 2 * i)} << 32) | random_bits(rs, 2 * i + 1);
        // Exponents spread over the format's range and beyond (overflow, subnormals).
        const double x = std::ldexp(1.0 + static_cast<double>(bits >> 12) * 0x1p-52,
                                    static_cast<int>(bits % 80) - 40) *
                         ((bits & 2048) ? -1 : 1);
        const uint32_t random =
            uses_random_bits(spec.rounding.mode) ? random_bits(r.stream(), i) : 0;
        const double expect =
            decode(f, round_to_format(f, unrounded_from_double(x), spec.rounding, random));
        const double got = r(x, i);
        ASSERT_TRUE(got == expect || (std::isnan(got) && std::isnan(expect)))
            << f.name() << " " << mode << " " << x;
        // hi + lo pairs: the exact sum rounded once.
        const double lo = std::ldexp(static_cast<double>(bits & 0xff) - 128.0, std::ilogb(x) - 60);
        double h, l;
        two_sum(x, lo, h, l);
        const double pair_expect =
            decode(f, round_to_format(f,
                                      exact_add(unrounded_from_double(h), unrounded_from_double(l),
                                                spec.rounding.mode),
                                      spec.rounding, random));
        const double pair_got = r.round_exact(h, l, i);
        ASSERT_TRUE(pair_got == pair_expect || (std::isnan(pair_got) && std::isnan(pair_expect)))
            << f.name() << " " << mode << " " << h << " + " << l;
      }
    }
  }
}

// The native fp32 and Dot2 fast paths of product sites against the registry's models, on shapes
// that exercise the register-blocked kernel (4 x 32 blocks) and its row and column remainders.
class ProductFastPaths : public ::testing::TestWithParam<std::tuple<int, int, int>> {};
TEST_P(ProductFastPaths, MatchAccumulationModels) {
  const RandomStream rs{5, 5};
  const auto [m, n, k] = GetParam();
  std::vector<double> a(m * k), b(k * n), c0(m * n);
  uint64_t next = 0;
  const auto value = [&](int spread) {
    const double u = (static_cast<double>(random_bits(rs, next++)) - 2147483648.0) * 0x1p-31;
    return decode(formats::bf16,
                  round_to_format(formats::bf16,
                                  unrounded_from_double(std::ldexp(
                                      u, static_cast<int>(random_bits(rs, next++) % spread))),
                                  {}));
  };
  for (auto& x : a) x = value(12);
  for (auto& x : b) x = value(12);
  for (auto& x : c0) x = value(4);
  for (const char* spec_text : {"fp32:rne:sequential", "bf16:rne:exact", "fp16:rtz:exact",
                                "fp32:rne:exact", "bf16:rne:sequential", "fp32:rne:pairwise",
                                "fp32:rne:tc:sm90-mma-bf16", "fp32:rne:tc:sm80-mma-bf16"}) {
    const SiteSpec spec = parse_site_spec(spec_text);
    const ProductSite site(Site::kPvAcc, spec, 0);
    std::vector<double> c = c0;
    site.gemm(m, n, k, a.data(), k, b.data(), n, c.data(), n, true, IndexMap{}, nullptr);
    const auto model = make_accumulation(spec.accumulation);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        std::vector<double> col(k);
        for (int64_t x = 0; x < k; ++x) col[x] = b[x * n + j];
        RoundingContext ctx(spec.format, spec.rounding);
        const double expect =
            model->dot({a.data() + i * k, static_cast<size_t>(k)}, col, c0[i * n + j], ctx);
        EXPECT_EQ(c[i * n + j], expect) << spec_text << " (" << i << "," << j << ")";
      }
    }
  }
}
INSTANTIATE_TEST_SUITE_P(Shapes, ProductFastPaths,
                         ::testing::Values(std::tuple{3, 5, 37}, std::tuple{9, 70, 37},
                                           std::tuple{8, 64, 5}));

TEST(AttentionConfigErrors, UnknownNamesAndBadValuesThrow) {
  AttentionConfig c = make_preset("fa2");
  EXPECT_THROW(make_preset("fa3"), std::invalid_argument);
  EXPECT_THROW(apply_override(c, "nosuchsite=bf16"), std::invalid_argument);
  EXPECT_THROW(apply_override(c, "p_cast=bf17"), std::invalid_argument);
  EXPECT_THROW(apply_override(c, "p_cast=bf16:nearest-ish"), std::invalid_argument);
  EXPECT_THROW(apply_override(c, "s=fp32:rne:no-such-model"), std::invalid_argument);
  EXPECT_THROW(apply_override(c, "p_cast"), std::invalid_argument);
  EXPECT_THROW(apply_mitigation(c, "beta-rowmax:0.5"), std::invalid_argument);
  EXPECT_THROW(apply_mitigation(c, "sr-p:64"), std::invalid_argument);
  EXPECT_THROW(apply_mitigation(c, "magic"), std::invalid_argument);
  apply_override(c, "p_cast=e4m3fn:sr16");
  EXPECT_EQ(c.site(Site::kPCast).format, formats::e4m3fn);
  EXPECT_EQ(c.site(Site::kPCast).rounding.sr_bits, 16);
}

TEST(AttentionConfigErrors, RowsumRescaleFmaNeedsFourLanes) {
  const auto in = inputs::generate("normal", shape(1, 1, 8, 4), 1, true);
  AttentionConfig c = make_preset("fa2");
  apply_override(c, "rowsum_rescale=fma");
  try {
    run_attention(in, c);
    ADD_FAILURE() << "rowsum_rescale=fma with one lane ran";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("rowsum_rescale=fma needs rowsum_lanes=4"),
              std::string::npos)
        << e.what();
  }
  apply_override(c, "rowsum_lanes=4");
  EXPECT_NO_THROW(run_attention(in, c));
}

// rowsum_rescale=fma rescales every lane of l, also a lane that a short key block gives no
// term: 8x8 tiles, 11 keys, so the second block's 3 columns reach lanes 0 and 1 only, and its key
// 10 raises every row's max far (alpha ~ e^-30). The fused and the separate rescale differ by an
// fp32 rounding of l, not by the unscaled lanes 2 and 3.
TEST(AttentionFlash, RowsumRescaleFmaRescalesLanesWithoutTerms) {
  auto in = inputs::generate("normal", shape(1, 1, 11, 4), 5, false);
  for (int64_t j = 0; j < 4; ++j) {
    for (int64_t i = 0; i < 11; ++i) in.q[i * 4 + j] = 1.0;
    in.k[10 * 4 + j] = 16.0;
  }
  std::vector<std::vector<double>> o;
  for (const char* rescale : {"rowsum_rescale=fma", "rowsum_rescale=mul"}) {
    AttentionConfig c = make_preset("fa2");
    for (const char* set : {"rowsum_lanes=4", "tile=8x8", rescale}) apply_override(c, set);
    o.push_back(run_attention(in, c).o);
  }
  ASSERT_EQ(o[0].size(), o[1].size());
  for (size_t x = 0; x < o[0].size(); ++x) {
    EXPECT_NEAR(o[0][x], o[1][x], 1e-2 * std::abs(o[1][x]) + 1e-6) << x;
  }
}

TEST(AttentionInputsErrors, ShapeMismatchThrowsNonFiniteValuesPropagate) {
  auto in = inputs::generate("normal", shape(1, 1, 8, 4), 1, true);
  const AttentionConfig c = make_preset("fa2");
  auto bad = in;
  bad.v.pop_back();
  EXPECT_THROW(run_attention(bad, c), std::invalid_argument);
  EXPECT_THROW(inputs::generate("uniformish", shape(1, 1, 8, 4), 1, false), std::invalid_argument);
  // NaN and infinite inputs are computed with, as SDPA computes with them. A NaN in Q's row 0
  // makes that row of O NaN and no other.
  bad = in;
  bad.q[3] = std::nan("");
  const std::vector<double> o = run_attention(bad, c).o;
  for (size_t x = 0; x < o.size(); ++x) EXPECT_EQ(std::isnan(o[x]), x < 4) << x;
  // An infinite K: the emulation's NaNs and infinities are where the fp64 reference has them.
  for (const double special : {INFINITY, -INFINITY}) {
    bad = in;
    bad.k[0] = special;
    const std::vector<double> e = run_attention(bad, c).o;
    const std::vector<double> r = reference_attention(bad, softmax_scale(c, bad.shape), false, 1).o;
    size_t nan = 0;
    for (size_t x = 0; x < e.size(); ++x) {
      EXPECT_EQ(std::isnan(e[x]), std::isnan(r[x])) << special << " " << x;
      EXPECT_EQ(std::isinf(e[x]), std::isinf(r[x])) << special << " " << x;
      nan += std::isnan(e[x]);
    }
    EXPECT_GT(nan, 0u) << special;  // Q's column 0 has both signs: some scores are +inf
  }
}

// Low precision is worse than fp32, and fp32 worse than fp64: a sanity ladder on the same inputs.
TEST(AttentionPresets, ErrorGrowsAsPrecisionFalls) {
  const auto in = inputs::generate("normal", shape(2, 1, 64, 16), 4, false);
  double previous = 0;
  for (const auto& name : {"fp64", "fp32", "fa2", "baseline-lp"}) {
    const AttentionConfig c = make_preset(name);
    const auto out = run_attention(in, c);
    const auto ref = reference_attention(round_inputs(in, c), softmax_scale(c, in.shape), false);
    const double err = max_rel(out.o, ref.o);
    EXPECT_GT(err, previous) << name;
    previous = err;
  }
}

}  // namespace
}  // namespace simprec::attention
