// The cuda-fa2 preset against an independent scalar implementation of the kernel numerics
// (cuda_fa2_reference.hpp): four partial row sums, alpha from the exponent shifts, the device's
// exp2 through a table, tiled random bits for stochastic P, and the backward pass from a given
// O and LSE. Also the device-function driver: it converges, uses the table, and its results do
// not depend on the thread count.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "lib/attention/attention.hpp"
#include "lib/attention/preset.hpp"
#include "lib/inputs/generators.hpp"
#include "tests/cuda_fa2_reference.hpp"

namespace {

using namespace simprec;
using namespace simprec::attention;
using simprec::testing::FlashSpec;

// A stand-in for the GPU's exp2: correctly rounded, with the last bit flipped for about a third
// of the arguments (a fixed hash of their bits), so that a run that ignores the table differs.
float fake_device_exp2(float x) {
  const float y = simprec::testing::correctly_rounded_exp2(x);
  uint32_t h = std::bit_cast<uint32_t>(x) * 0x9E3779B1u;
  h ^= h >> 15;
  if (y == 0 || !std::isfinite(y) || h % 3 != 0) return y;
  return std::bit_cast<float>(std::bit_cast<uint32_t>(y) ^ 1u);
}

struct CountingDevice {
  std::function<float(float)> f;
  int calls = 0;
  std::vector<uint32_t> arguments{};  // every argument evaluated, in call order
  DeviceFunction function() {
    return [this](const std::vector<uint32_t>& args) {
      ++calls;
      arguments.insert(arguments.end(), args.begin(), args.end());
      std::vector<uint32_t> out(args.size());
      for (size_t i = 0; i < args.size(); ++i)
        out[i] = std::bit_cast<uint32_t>(f(std::bit_cast<float>(args[i])));
      return out;
    };
  }
};

AttentionInputs inputs_in(const Format& f, const AttentionShape& shape, uint64_t seed,
                          bool with_grad, const char* kind = "normal") {
  AttentionConfig c = make_preset("cuda-fa2", f);
  return round_inputs(inputs::generate(kind, shape, seed, with_grad), c);
}

FlashSpec spec_of(const AttentionConfig& c, const AttentionShape& s) {
  FlashSpec spec;
  spec.f = c.low_precision;
  spec.out = c.site(Site::kOOut).format;
  spec.block_rows = c.block_rows;
  spec.block_cols = c.block_cols;
  spec.causal = c.causal;
  spec.scale = softmax_scale(c, s);
  spec.beta_rowmax = c.beta_rowmax.enabled;
  spec.beta = c.beta_rowmax.beta;
  spec.eps = c.beta_rowmax.eps;
  spec.sr_bits = c.tiled_random ? c.site(Site::kPCast).rounding.sr_bits : 0;
  spec.seed = c.seed;
  spec.exp2 = fake_device_exp2;
  return spec;
}

// The scalar forward of every problem.
void reference_forward(const FlashSpec& spec, const AttentionInputs& in, std::vector<double>& o,
                       std::vector<double>& lse) {
  const AttentionShape& s = in.shape;
  o.assign(s.problems() * s.nq * s.d, 0.0);
  lse.assign(s.problems() * s.nq, 0.0);
  std::vector<float> l32(s.nq);
  for (int64_t p = 0; p < s.problems(); ++p) {
    simprec::testing::flash_forward(spec, static_cast<uint32_t>(p), s.nq, s.nk, s.d,
                                    in.q.data() + p * s.nq * s.d, in.k.data() + p * s.nk * s.d,
                                    in.v.data() + p * s.nk * s.d, o.data() + p * s.nq * s.d,
                                    l32.data());
    for (int64_t i = 0; i < s.nq; ++i) lse[p * s.nq + i] = l32[i];
  }
}

int64_t differences(const std::vector<double>& a, const std::vector<double>& b) {
  EXPECT_EQ(a.size(), b.size());
  int64_t n = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    n += std::bit_cast<uint64_t>(a[i]) != std::bit_cast<uint64_t>(b[i]);
  }
  return n;
}

// Generated square inputs cut to nq queries and nk keys.
AttentionInputs ragged_inputs(const Format& f, int64_t nq, int64_t nk, int64_t d, uint64_t seed,
                              bool with_grad, const char* kind = "normal") {
  const int64_t n = std::max(nq, nk);
  AttentionInputs square = inputs_in(f, {2, 2, n, n, d, d}, seed, with_grad, kind);
  AttentionInputs in;
  in.shape = {2, 2, nq, nk, d, d};
  for (int64_t p = 0; p < 4; ++p) {
    const auto rows = [&](const std::vector<double>& x, int64_t count, std::vector<double>& to) {
      to.insert(to.end(), x.begin() + p * n * d, x.begin() + p * n * d + count * d);
    };
    rows(square.q, nq, in.q);
    rows(square.k, nk, in.k);
    rows(square.v, nk, in.v);
    if (with_grad) rows(square.d_out, nq, in.d_out);
  }
  return in;
}

struct ForwardCase {
  const Format* format;
  bool causal;
  const char* mitigation;  // nullptr: none
  const char* kind;
};

TEST(CudaFa2, ForwardIsTheScalarKernelBitForBit) {
  const ForwardCase cases[] = {
      {&formats::bf16, false, nullptr, "normal"},
      {&formats::bf16, true, nullptr, "normal"},
      {&formats::fp16, true, nullptr, "peaky"},
      {&formats::e4m3fn, false, nullptr, "normal"},
      {&formats::bf16, false, "beta-rowmax", "repeated-max"},
      {&formats::bf16, true, "sr-p-tiled:8", "normal"},
      {&formats::fp16, false, "sr-p-tiled:16", "normal"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.format->name() + (c.causal ? " causal " : " ") +
                 (c.mitigation ? c.mitigation : "") + " " + c.kind);
    AttentionConfig config = make_preset("cuda-fa2", *c.format);
    config.block_rows = 32;
    config.block_cols = 24;  // not a multiple of 8: the lanes follow the block's own columns
    config.causal = c.causal;
    config.seed = 11;
    if (c.mitigation) apply_mitigation(config, c.mitigation);
    const AttentionInputs in = ragged_inputs(*c.format, 70, 61, 32, 3, false, c.kind);
    CountingDevice device{fake_device_exp2};
    const AttentionOutputs out =
        run_attention_with_device_functions(in, config, {.exp2 = device.function()});
    EXPECT_EQ(device.calls, 1);  // the forward's arguments do not depend on exp2 values
    std::vector<double> o, lse;
    reference_forward(spec_of(config, in.shape), in, o, lse);
    EXPECT_EQ(differences(out.o, o), 0);
    EXPECT_EQ(differences(out.lse, lse), 0);
  }
}

TEST(CudaFa2, TheTestIsSensitiveToLanesRescaleAndTable) {
  AttentionConfig config = make_preset("cuda-fa2", formats::bf16);
  config.block_rows = config.block_cols = 32;
  const AttentionInputs in = ragged_inputs(formats::bf16, 64, 128, 32, 5, false);
  CountingDevice device{fake_device_exp2};
  const AttentionOutputs base =
      run_attention_with_device_functions(in, config, {.exp2 = device.function()});
  AttentionConfig sequential = config;
  sequential.rowsum_lanes = 1;
  AttentionConfig exact_alpha = config;
  exact_alpha.rescale = find_strategy<Rescale>("exact");
  const auto lse_differences = [&](const AttentionConfig& other) {
    return differences(
        run_attention_with_device_functions(in, other, {.exp2 = device.function()}).lse, base.lse);
  };
  EXPECT_GT(lse_differences(sequential), 0);
  EXPECT_GT(lse_differences(exact_alpha), 0);
  // Without the table: correctly rounded exp2, which the fake differs from.
  EXPECT_GT(differences(run_attention(in, config).lse, base.lse), 0);
}

TEST(CudaFa2, BackwardFromAGivenForwardIsTheScalarKernel) {
  for (const Format* f : {&formats::bf16, &formats::fp16, &formats::e4m3fn}) {
    for (bool causal : {false, true}) {
      SCOPED_TRACE(f->name() + (causal ? " causal" : ""));
      AttentionConfig config = make_preset("cuda-fa2", *f);
      config.block_rows = 16;
      config.block_cols = 32;
      config.causal = causal;
      AttentionInputs in = ragged_inputs(*f, 40, 72, 16, 9, true);
      const FlashSpec spec = spec_of(config, in.shape);
      reference_forward(spec, in, in.o, in.lse);
      CountingDevice device{fake_device_exp2};
      const AttentionOutputs out =
          run_attention_with_device_functions(in, config, {.exp2 = device.function()});
      EXPECT_EQ(device.calls, 1);  // P's arguments come from the given LSE
      EXPECT_EQ(out.o, in.o);
      const AttentionShape& s = in.shape;
      std::vector<double> dq(in.q.size()), dk(in.k.size()), dv(in.v.size());
      for (int64_t p = 0; p < s.problems(); ++p) {
        std::vector<float> lse(in.lse.begin() + p * s.nq, in.lse.begin() + (p + 1) * s.nq);
        simprec::testing::flash_backward(
            spec, s.nq, s.nk, s.d, in.q.data() + p * s.nq * s.d, in.k.data() + p * s.nk * s.d,
            in.v.data() + p * s.nk * s.d, in.o.data() + p * s.nq * s.d,
            in.d_out.data() + p * s.nq * s.d, lse.data(), dq.data() + p * s.nq * s.d,
            dk.data() + p * s.nk * s.d, dv.data() + p * s.nk * s.d);
      }
      EXPECT_EQ(differences(out.dq, dq), 0);
      EXPECT_EQ(differences(out.dk, dk), 0);
      EXPECT_EQ(differences(out.dv, dv), 0);
    }
  }
}

TEST(DeviceExp2, DriverConvergesUsesTheTableAndIgnoresThreads) {
  AttentionConfig config = make_preset("cuda-fa2", formats::bf16);
  config.block_rows = config.block_cols = 32;
  config.causal = true;
  const AttentionInputs in = ragged_inputs(formats::bf16, 96, 96, 32, 2, true);

  // A device that is correctly rounded changes nothing.
  CountingDevice exact{simprec::testing::correctly_rounded_exp2};
  const AttentionOutputs untabled = run_attention(in, config);
  const AttentionOutputs same =
      run_attention_with_device_functions(in, config, {.exp2 = exact.function()});
  EXPECT_EQ(differences(same.o, untabled.o), 0);
  EXPECT_EQ(differences(same.dq, untabled.dq), 0);
  EXPECT_EQ(untabled.device_misses[static_cast<int>(DeviceFn::kExp2)].size(),
            0u);  // no table, nothing to miss

  // The fake device changes the outputs; the backward's arguments depend on exp2 values through
  // the recomputed LSE, so its first run misses more than the forward's.
  std::vector<AttentionOutputs> runs;
  std::vector<std::vector<uint32_t>> evaluated;
  for (unsigned threads : {1u, 3u}) {
    config.threads = threads;
    CountingDevice device{fake_device_exp2};
    runs.push_back(run_attention_with_device_functions(in, config, {.exp2 = device.function()}));
    EXPECT_GE(device.calls, 2);
    EXPECT_LE(device.calls, 3);
    evaluated.push_back(device.arguments);
  }
  EXPECT_EQ(evaluated[0], evaluated[1]);
  EXPECT_EQ(differences(runs[0].o, runs[1].o), 0);
  EXPECT_EQ(differences(runs[0].lse, runs[1].lse), 0);
  EXPECT_EQ(differences(runs[0].dq, runs[1].dq), 0);
  EXPECT_EQ(differences(runs[0].dk, runs[1].dk), 0);
  EXPECT_EQ(differences(runs[0].dv, runs[1].dv), 0);
  // The fp32 LSE shows the flipped exp2 bits; the bf16 outputs rarely do.
  EXPECT_GT(differences(runs[0].lse, untabled.lse), 0);
  EXPECT_TRUE(runs[0].device_misses[static_cast<int>(DeviceFn::kExp2)].empty());

  // The forward of the converged backward run is the scalar kernel's.
  std::vector<double> o, lse;
  reference_forward(spec_of(config, in.shape), in, o, lse);
  EXPECT_EQ(differences(runs[0].o, o), 0);
  EXPECT_EQ(differences(runs[0].lse, lse), 0);
}

TEST(DeviceExp2, DriverFailures) {
  AttentionConfig config = make_preset("cuda-fa2", formats::bf16);
  const AttentionInputs in = ragged_inputs(formats::bf16, 16, 16, 16, 1, true);
  CountingDevice device{fake_device_exp2};
  EXPECT_THROW(run_attention_with_device_functions(in, config, {.exp2 = device.function()}, 1),
               std::runtime_error);
  const DeviceFunction short_answer = [](const std::vector<uint32_t>& args) {
    return std::vector<uint32_t>(args.size() - 1);
  };
  EXPECT_THROW(run_attention_with_device_functions(in, config, {.exp2 = short_answer}),
               std::runtime_error);
}

TEST(CudaFa2, ConfigurationErrors) {
  AttentionConfig config = make_preset("cuda-fa2", formats::bf16);
  EXPECT_THROW(apply_override(config, "rowsum_lanes=3"), std::invalid_argument);
  EXPECT_THROW(apply_override(config, "rescale=exp"), std::invalid_argument);
  EXPECT_THROW(apply_mitigation(config, "sr-p-tiled:3"), std::invalid_argument);
  const AttentionInputs in = ragged_inputs(formats::bf16, 16, 16, 16, 1, false);
  AttentionConfig natural = config;
  apply_override(natural, "exp_impl=natural");
  EXPECT_THROW(run_attention(in, natural), std::invalid_argument);
  AttentionConfig per_block = config;
  apply_override(per_block, "pv_mode=per-block");
  EXPECT_THROW(run_attention(in, per_block), std::invalid_argument);
  AttentionConfig tiled = config;
  tiled.tiled_random = true;
  apply_override(tiled, "p_cast=bf16:sr3");
  EXPECT_THROW(run_attention(in, tiled), std::invalid_argument);
  // The standard algorithm has no lanes or rescale: the same preset runs as standard attention.
  AttentionConfig standard = config;
  standard.algorithm = find_strategy<Algorithm>("standard");
  EXPECT_NO_THROW(run_attention(in, standard));
  // O and LSE without dO.
  AttentionInputs forward_only = in;
  forward_only.o.assign(in.q.size(), 0.0);
  forward_only.lse.assign(in.q.size() / 16, 0.0);
  EXPECT_THROW(run_attention(forward_only, config), std::invalid_argument);
}

TEST(CudaFa2, PresetSites) {
  const AttentionConfig bf16 = make_preset("cuda-fa2", formats::bf16);
  EXPECT_EQ(bf16.site(Site::kS).accumulation, "tc:sm90-mma-bf16");
  EXPECT_EQ(bf16.site(Site::kDkAcc).accumulation, "tc:sm90-mma-bf16");
  EXPECT_EQ(bf16.rowsum_lanes, 4);
  EXPECT_EQ(bf16.rescale.name(), "exp2-shift");
  EXPECT_EQ(bf16.block_rows, 64);
  EXPECT_EQ(bf16.block_cols, 64);
  const AttentionConfig e4m3 = make_preset("cuda-fa2", formats::e4m3fn);
  EXPECT_EQ(e4m3.site(Site::kPvAcc).accumulation, "tc:sm90-mma-e4m3");
  EXPECT_EQ(e4m3.site(Site::kOOut).format, formats::bf16);
  EXPECT_EQ(e4m3.site(Site::kPCast).format, formats::e4m3fn);
  EXPECT_EQ(make_preset("cuda-fa2", formats::fp16).site(Site::kOOut).format, formats::fp16);
}

}  // namespace
