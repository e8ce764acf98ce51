// The torch-flash, torch-efficient and torch-math presets against PyTorch's own SDPA outputs,
// recorded on an H100 (scripts/torch_sdpa_dump.py: PyTorch 2.11, CUDA 13.0, B=2, H=2, N=128,
// d=64, bf16, seed 1, in tests/data/torch_sdpa/; BACKEND_lse.npy is the forward pass's fp32 LSE,
// recorded by the same PyTorch). The hardware output is the oracle; the thresholds are issue 5's
// target (>= 99% of elements bit-identical) or tighter where the emulation does better.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>

#include "emulation/round.hpp"
#include "lib/attention/attention.hpp"
#include "lib/attention/numerics_spec.hpp"
#include "lib/attention/preset.hpp"
#include "lib/inputs/generators.hpp"
#include "lib/npy/npy.hpp"

namespace {

using namespace simprec;
namespace fs = std::filesystem;

const fs::path kData = fs::path(SIMPREC_SOURCE_DIR) / "tests" / "data" / "torch_sdpa";

// Share of the emulated bf16 values whose bits equal PyTorch's.
double identical_share(const std::vector<double>& emulated, const fs::path& recorded) {
  const NpyArray a = read_npy(recorded);
  const auto bits = a.as<uint16_t>();
  EXPECT_EQ(bits.size(), emulated.size()) << recorded;
  size_t same = 0;
  for (size_t i = 0; i < emulated.size() && i < bits.size(); ++i) {
    same += round_to_format(formats::bf16, unrounded_from_double(emulated[i]), {}) == bits[i];
  }
  return static_cast<double>(same) / static_cast<double>(emulated.size());
}

attention::AttentionInputs load(const std::string& kind) {
  const fs::path dir = kData / kind;
  return inputs::load_inputs(dir / "q.npy", dir / "k.npy", dir / "v.npy", dir / "do.npy",
                             formats::bf16);
}

attention::AttentionOutputs run(const std::string& kind, const std::string& preset) {
  return attention::run_attention(load(kind), attention::make_preset(preset, formats::bf16));
}

// The backward pass alone, from the forward pass PyTorch's backend saved (its O and LSE).
attention::AttentionOutputs run_backward(const std::string& kind, const std::string& preset,
                                         const std::string& backend) {
  const attention::AttentionConfig config = attention::make_preset(preset, formats::bf16);
  attention::AttentionInputs in = attention::round_inputs(load(kind), config);
  const fs::path dir = kData / kind;
  in.o = read_npy(dir / (backend + "_o.npy")).to_doubles();
  for (double& x : in.o) x = decode(formats::bf16, static_cast<uint64_t>(x));
  in.lse = read_npy(dir / (backend + "_lse.npy")).to_doubles();
  return attention::run_attention(in, config);
}

struct Expectation {
  const char* kind;
  double o, dq, dk, dv;  // least shares of identical elements
};

void expect_agreement(const attention::AttentionOutputs& out, const std::string& backend,
                      const Expectation& e, bool check_o = true) {
  const fs::path dir = kData / e.kind;
  if (check_o) {
    EXPECT_GE(identical_share(out.o, dir / (backend + "_o.npy")), e.o) << e.kind;
  }
  EXPECT_GE(identical_share(out.dq, dir / (backend + "_dq.npy")), e.dq) << e.kind;
  EXPECT_GE(identical_share(out.dk, dir / (backend + "_dk.npy")), e.dk) << e.kind;
  EXPECT_GE(identical_share(out.dv, dir / (backend + "_dv.npy")), e.dv) << e.kind;
}

// Every LSE value of `backend`'s recorded forward pass, as fp32 bits.
void expect_lse_identical(const attention::AttentionOutputs& out, const std::string& backend,
                          const char* kind) {
  const std::vector<double> lse = read_npy(kData / kind / (backend + "_lse.npy")).to_doubles();
  ASSERT_EQ(lse.size(), out.lse.size()) << kind;
  size_t same = 0;
  for (size_t i = 0; i < lse.size(); ++i)
    same += static_cast<float>(out.lse[i]) == static_cast<float>(lse[i]);
  EXPECT_EQ(same, lse.size()) << kind << ": LSE";
}

TEST(TorchSdpa, TorchFlashPresetMatchesThePyTorchFlashBackend) {
  // Measured: O 100%; dQ 99.88%, 99.80%, 99.96%; dK 99.89%, 99.88%, 99.96%; dV 99.97%, 100%,
  // 99.95% (normal, repeated-max, low-rank). What remains is the device's exp2 and __logf.
  for (const Expectation e : {Expectation{"normal", 1.0, 0.998, 0.998, 0.999},
                              Expectation{"repeated-max", 1.0, 0.998, 0.998, 1.0},
                              Expectation{"low-rank", 1.0, 0.999, 0.999, 0.999}}) {
    expect_agreement(run(e.kind, "torch-flash"), "flash", e);
  }
}

// With the H100's own ex2.approx and __logf (device_math=sm90, emulation/device_math/): every
// element of O, dQ, dK, dV and every LSE value of the three recorded kinds, bit for bit.
TEST(TorchSdpa, TorchFlashWithTheH100sDeviceMathIsBitIdentical) {
  const attention::AttentionConfig config =
      attention::parse_numerics("torch-flash,device_math=sm90", formats::bf16);
  for (const char* kind : {"normal", "repeated-max", "low-rank"}) {
    const attention::AttentionOutputs out = attention::run_attention(load(kind), config);
    expect_agreement(out, "flash", Expectation{kind, 1.0, 1.0, 1.0, 1.0});
    expect_lse_identical(out, "flash", kind);
  }
}

TEST(TorchSdpa, TorchFlashBackwardFromPyTorchsForwardPass) {
  // Measured from PyTorch's O and LSE: every dQ, dK, dV element but 2 to 6 per kind (the
  // device's exp2 is not correctly rounded; with its values all are identical).
  for (const Expectation e : {Expectation{"normal", 1.0, 1.0, 1.0, 0.9997},
                              Expectation{"repeated-max", 1.0, 1.0, 1.0, 1.0},
                              Expectation{"low-rank", 1.0, 0.9996, 0.9996, 1.0}}) {
    expect_agreement(run_backward(e.kind, "torch-flash", "flash"), "flash", e, false);
  }
}

// With the H100's ex2.approx, libdevice's expf and logf, and the scores scaled before the
// times-log2(e) (device_math=sm90, exp_impl=exp2-scaled, the preset's defaults): every element of
// O, dQ, dK, dV and every LSE value of the three recorded kinds, bit for bit.
TEST(TorchSdpa, TorchEfficientPresetIsBitIdenticalToTheEfficientBackend) {
  for (const char* kind : {"normal", "repeated-max", "low-rank"}) {
    const attention::AttentionOutputs out = run(kind, "torch-efficient");
    expect_agreement(out, "efficient", Expectation{kind, 1.0, 1.0, 1.0, 1.0});
    expect_lse_identical(out, "efficient", kind);
  }
}

TEST(TorchSdpa, TorchEfficientBackwardFromPyTorchsForwardPassIsBitIdentical) {
  for (const char* kind : {"normal", "repeated-max", "low-rank"}) {
    expect_agreement(run_backward(kind, "torch-efficient", "efficient"), "efficient",
                     Expectation{kind, 1.0, 1.0, 1.0, 1.0}, false);
  }
}

TEST(TorchSdpa, TorchMathPresetMatchesThePyTorchMathBackend) {
  // Measured: O 99.98-100%; dQ on repeated maxima only 16.8% (the order of PyTorch's fp32 GEMM
  // shows in near-cancelling sums), so that one is not checked here.
  for (const char* kind : {"normal", "repeated-max", "low-rank"}) {
    const auto out = run(kind, "torch-math");
    EXPECT_GE(identical_share(out.o, kData / kind / "math_o.npy"), 0.999) << kind;
    EXPECT_GE(identical_share(out.dk, kData / kind / "math_dk.npy"), 0.99) << kind;
    EXPECT_GE(identical_share(out.dv, kData / kind / "math_dv.npy"), 0.99) << kind;
    if (std::string(kind) != "repeated-max") {
      EXPECT_GE(identical_share(out.dq, kData / kind / "math_dq.npy"), 0.99) << kind;
    }
  }
}

TEST(TorchSdpa, ControlsWithoutTheKernelsStructureAgreeLess) {
  // The agreement above depends on modelling the kernels, not on luck: fa2 with 64x64 tiles
  // (rescaling between two key tiles) misses O, and torch-efficient with the k = 16 mma.sync
  // model, or with dS from the un-cast P, misses the gradients.
  const auto inputs = load("normal");
  attention::AttentionConfig flash = attention::make_preset("torch-flash", formats::bf16);
  flash.block_rows = flash.block_cols = 64;
  EXPECT_LT(
      identical_share(attention::run_attention(inputs, flash).o, kData / "normal" / "flash_o.npy"),
      0.9);
  attention::AttentionConfig k16 = attention::make_preset("torch-efficient", formats::bf16);
  for (const char* site : {"s", "pv_acc", "dp", "dq_acc", "dk_acc", "dv_acc"}) {
    attention::apply_override(k16, std::string(site) + "=fp32:rne:tc:sm90-mma-bf16");
  }
  EXPECT_LT(identical_share(attention::run_attention(load("low-rank"), k16).dk,
                            kData / "low-rank" / "efficient_dk.npy"),
            0.95);
  attention::AttentionConfig uncast = attention::make_preset("torch-efficient", formats::bf16);
  attention::apply_override(uncast, "ds_p=exp");
  EXPECT_LT(identical_share(attention::run_attention(inputs, uncast).dq,
                            kData / "normal" / "efficient_dq.npy"),
            0.6);
}

}  // namespace

// Bias: PyTorch's mean signed error against the exact reference, beside what its preset
// predicts, on every input kind and output. With >= 99% of the elements bit-identical the two
// means may differ only by a fraction of their spread; the spread used is the standard error of
// the mean over elements (errors within a row are correlated, so it is a scale, not a test of
// significance). Printed for docs/findings.md.
TEST(TorchSdpa, PresetsPredictPyTorchsBias) {
  struct Pair {
    const char* backend;
    const char* preset;
  };
  for (const Pair& pair : {Pair{"flash", "torch-flash"}, Pair{"efficient", "torch-efficient"},
                           Pair{"cudnn", "torch-flash"}}) {
    for (const char* kind : {"normal", "repeated-max", "low-rank"}) {
      const attention::AttentionConfig config = attention::make_preset(pair.preset, formats::bf16);
      const attention::AttentionInputs rounded = attention::round_inputs(load(kind), config);
      const attention::AttentionOutputs ref = attention::reference_attention(
          rounded, attention::softmax_scale(config, rounded.shape), false);
      const attention::AttentionOutputs emu = attention::run_attention(load(kind), config);
      const fs::path dir = kData / kind;
      const std::pair<const char*, const std::vector<double>*> outputs[] = {
          {"o", &emu.o}, {"dq", &emu.dq}, {"dk", &emu.dk}, {"dv", &emu.dv}};
      const std::vector<double>* refs[] = {&ref.o, &ref.dq, &ref.dk, &ref.dv};
      for (size_t k = 0; k < 4; ++k) {
        const auto& [name, emulated] = outputs[k];
        std::vector<double> torch =
            read_npy(dir / (std::string(pair.backend) + "_" + name + ".npy")).to_doubles();
        for (double& x : torch) x = decode(formats::bf16, static_cast<uint64_t>(x));
        const std::vector<double>& exact = *refs[k];
        ASSERT_EQ(torch.size(), exact.size());
        double sum_t = 0, sum_e = 0, sum_sq = 0;
        for (size_t i = 0; i < exact.size(); ++i) {
          const double et = torch[i] - exact[i], ee = (*emulated)[i] - exact[i];
          sum_t += et;
          sum_e += ee;
          sum_sq += et * et;
        }
        const double n = static_cast<double>(exact.size());
        const double bias_t = sum_t / n, bias_e = sum_e / n;
        const double se = std::sqrt(std::max(0.0, sum_sq / n - bias_t * bias_t) / n);
        std::printf("bias %-9s %-12s %-2s pytorch %+.4e emulated %+.4e (se %.2e)\n", pair.backend,
                    kind, name, bias_t, bias_e, se);
        EXPECT_LE(std::abs(bias_t - bias_e), 0.25 * se)
            << pair.backend << " " << kind << " " << name;
      }
    }
  }
}
