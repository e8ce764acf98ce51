// The tensor-core presets marked verified against what an H100 produced (tests/data/tensor_core,
// measured by scripts/gpu_probe.sh): 1,048,576 outputs per instruction and format (and 131,072
// per chain of instructions over K = 256), inputs
// regenerated from emulation/tensor_core_vectors.hpp. Every output is compared through the
// per-chunk hashes of the hardware's outputs; the stored subset (ten tiles of every 320) is
// compared output by output and printed with its operands on a mismatch.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "emulation/format.hpp"
#include "emulation/round.hpp"
#include "emulation/tensor_core.hpp"
#include "emulation/tensor_core_vectors.hpp"

namespace simprec {
namespace {

namespace tcv = tc_vectors;

const std::filesystem::path kDataDir =
    std::filesystem::path(SIMPREC_SOURCE_DIR) / "tests" / "data" / "tensor_core";

std::vector<uint8_t> read_file(const std::filesystem::path& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot read " + path.string());
  return {std::istreambuf_iterator<char>(f), {}};
}

struct ProbePreset {
  const char* probe;
  const char* model;
};
const ProbePreset kMeasured[] = {
    {"mma_bf16_f32", "tc:sm90-mma-bf16"},
    {"mma_fp16_f32", "tc:sm90-mma-fp16"},
    {"mma_fp16_f16", "tc:sm90-mma-fp16acc"},
    {"mma_e4m3_f32", "tc:sm90-mma-e4m3"},
    {"mma_e5m2_f32", "tc:sm90-mma-e5m2"},
    {"mma_e4m3_f16", "tc:sm90-mma-e4m3-fp16acc"},
    {"wgmma_bf16_f32", "tc:sm90-wgmma-bf16"},
    {"wgmma_fp16_f32", "tc:sm90-wgmma-fp16"},
    {"wgmma_fp16_f16", "tc:sm90-wgmma-fp16acc"},
    {"wgmma_e4m3_f32", "tc:sm90-wgmma-e4m3"},
    {"wgmma_e5m2_f32", "tc:sm90-wgmma-e5m2"},
    {"wgmma_e4m3_f16", "tc:sm90-wgmma-e4m3-fp16acc"},
    // Chains of instructions over K = 256 (131,072 outputs each).
    {"mma_bf16_f32_k256", "tc:sm90-mma-bf16"},
    {"mma_e4m3_f32_k256", "tc:sm90-mma-e4m3"},
    {"wgmma_bf16_f32_k256", "tc:sm90-wgmma-bf16"},
    {"wgmma_e4m3_f32_k256", "tc:sm90-wgmma-e4m3"},
};

const tcv::Probe& probe_named(const std::string& name) {
  for (const tcv::Probe& p : tcv::kProbes)
    if (name == p.name) return p;
  throw std::invalid_argument("no probe " + name);
}

std::string describe_output(const tcv::Probe& p, const TensorCoreModel& model, int tile, int i,
                            int j, const std::vector<uint16_t>& a, const std::vector<uint16_t>& b,
                            const std::vector<uint32_t>& c, uint32_t hw, uint32_t emulated) {
  char line[256];
  std::snprintf(line, sizeof line,
                "tile %d (%s) row %d col %d: hardware 0x%x (%.9g), model 0x%x (%.9g), C 0x%x\n",
                tile, tcv::tile_class_name(tile % tcv::kClassCount), i, j, hw,
                decode(model.accumulator, hw), emulated, decode(model.accumulator, emulated),
                c[i * p.n + j]);
  std::string s = line;
  for (int kk = 0; kk < p.k; ++kk) {
    std::snprintf(line, sizeof line, "  k=%2d a=0x%04x b=0x%04x  a*b=%a\n", kk, a[i * p.k + kk],
                  b[kk * p.n + j],
                  decode(model.input_a, a[i * p.k + kk]) * decode(model.input_b, b[kk * p.n + j]));
    s += line;
  }
  return s;
}

class HardwareAgreement : public ::testing::TestWithParam<ProbePreset> {};

TEST_P(HardwareAgreement, EveryOutputMatchesTheH100) {
  const tcv::Probe& p = probe_named(GetParam().probe);
  const TensorCoreModel& model = tensor_core_model(GetParam().model);
  ASSERT_TRUE(model.verified) << model.name;
  const std::vector<uint8_t> hashes = read_file(kDataDir / (std::string(p.name) + ".hashes"));
  const std::vector<uint8_t> subset = read_file(kDataDir / (std::string(p.name) + ".subset"));
  const size_t ob = p.output_bytes();
  const size_t tile_outputs = static_cast<size_t>(p.m) * p.n;
  ASSERT_EQ(hashes.size(), static_cast<size_t>(p.outputs()) / tcv::kHashChunkOutputs * 8);

  std::vector<uint8_t> emulated_bytes(static_cast<size_t>(p.outputs()) * ob);
  // Tiles are emulated four at a time as one GEMM: A of the four stacked (4M x K), B and C side
  // by side (K x 4N, 4M x 4N); the diagonal blocks are the probe's outputs. So the vectorised
  // GEMM path (32 columns, 4 rows at a time) is what the hardware is compared with. Models
  // without that path (fp8, fp16 accumulators) take one tile at a time.
  const bool vectorised = model.input_a.width() == 16 && model.accumulator == formats::fp32;
  const int kGroup = vectorised ? 4 : 1;
  const int gm = kGroup * p.m, gn = kGroup * p.n;
  std::vector<uint16_t> ga(static_cast<size_t>(gm) * p.k), gb(static_cast<size_t>(p.k) * gn);
  std::vector<uint32_t> gc(static_cast<size_t>(gm) * gn);
  std::vector<std::vector<uint16_t>> a(kGroup), b(kGroup);
  std::vector<std::vector<uint32_t>> c(kGroup);
  size_t subset_offset = 0, subset_compared = 0;
  int reported = 0;
  ASSERT_EQ(p.tiles % kGroup, 0);
  for (int t0 = 0; t0 < p.tiles; t0 += kGroup) {
    std::fill(gc.begin(), gc.end(), 0u);
    for (int g = 0; g < kGroup; ++g) {
      a[g].resize(static_cast<size_t>(p.m) * p.k);
      b[g].resize(static_cast<size_t>(p.k) * p.n);
      c[g].resize(tile_outputs);
      tcv::generate_tile(p, t0 + g, a[g].data(), b[g].data(), c[g].data());
      for (int i = 0; i < p.m; ++i)
        for (int kk = 0; kk < p.k; ++kk)
          ga[static_cast<size_t>(g * p.m + i) * p.k + kk] = a[g][i * p.k + kk];
      for (int kk = 0; kk < p.k; ++kk)
        for (int j = 0; j < p.n; ++j)
          gb[static_cast<size_t>(kk) * gn + g * p.n + j] = b[g][kk * p.n + j];
      for (int i = 0; i < p.m; ++i)
        for (int j = 0; j < p.n; ++j)
          gc[static_cast<size_t>(g * p.m + i) * gn + g * p.n + j] = c[g][i * p.n + j];
    }
    const std::vector<uint32_t> gd = tensor_core_gemm(model, ga, gb, gc, gm, gn, p.k);
    for (int g = 0; g < kGroup; ++g) {
      const int t = t0 + g;
      std::vector<uint32_t> d(tile_outputs);
      for (int i = 0; i < p.m; ++i)
        for (int j = 0; j < p.n; ++j)
          d[i * p.n + j] = gd[static_cast<size_t>(g * p.m + i) * gn + g * p.n + j];
      for (size_t o = 0; o < tile_outputs; ++o)
        std::memcpy(&emulated_bytes[(t * tile_outputs + o) * ob], &d[o], ob);
      if (!tcv::tile_in_subset(t)) continue;
      for (size_t o = 0; o < tile_outputs; ++o, ++subset_compared) {
        uint32_t hw = 0;
        std::memcpy(&hw, &subset[subset_offset + o * ob], ob);
        // The subset also checks the integer reference path against the hardware.
        const int i = static_cast<int>(o) / p.n, j = static_cast<int>(o) % p.n;
        const uint32_t by_dot =
            tensor_core_dot(model, &a[g][i * p.k], 1, &b[g][j], p.n, p.k, c[g][o]);
        EXPECT_EQ(d[o], by_dot) << "gemm and dot paths differ at tile " << t << " output " << o;
        if (hw != d[o] && reported++ < 5) {
          ADD_FAILURE() << describe_output(p, model, t, i, j, a[g], b[g], c[g], hw, d[o]);
        }
      }
      subset_offset += tile_outputs * ob;
    }
  }
  EXPECT_EQ(subset_offset, subset.size());
  size_t bad_chunks = 0;
  for (size_t chunk = 0; chunk < hashes.size() / 8; ++chunk) {
    uint64_t stored = 0;
    for (int i = 0; i < 8; ++i) stored |= static_cast<uint64_t>(hashes[chunk * 8 + i]) << (8 * i);
    const uint64_t mine = tcv::fnv1a64(&emulated_bytes[chunk * tcv::kHashChunkOutputs * ob],
                                       tcv::kHashChunkOutputs * ob);
    if (stored != mine && bad_chunks++ < 5) {
      const size_t first = chunk * tcv::kHashChunkOutputs;
      ADD_FAILURE() << p.name << ": outputs " << first << ".." << first + tcv::kHashChunkOutputs - 1
                    << " (tile " << first / tile_outputs << ", class "
                    << tcv::tile_class_name(static_cast<int>(first / tile_outputs) %
                                            tcv::kClassCount)
                    << ") differ from the hardware's";
    }
  }
  EXPECT_EQ(bad_chunks, 0u) << "of " << hashes.size() / 8 << " chunks of " << tcv::kHashChunkOutputs
                            << " outputs";
  RecordProperty("outputs_compared", p.outputs());
  RecordProperty("subset_outputs_compared", static_cast<int>(subset_compared));
}

INSTANTIATE_TEST_SUITE_P(H100, HardwareAgreement, ::testing::ValuesIn(kMeasured),
                         [](const ::testing::TestParamInfo<ProbePreset>& info) {
                           return std::string(info.param.probe);
                         });

TEST(HardwareAgreement, EveryVerifiedPresetHasGroundTruth) {
  for (const TensorCoreModel& m : tensor_core_models()) {
    if (!m.verified) continue;
    bool found = false;
    for (const ProbePreset& pp : kMeasured) found |= m.name == pp.model;
    EXPECT_TRUE(found) << m.name << " is marked verified but no measurement checks it";
  }
}

// The conversions the H100 performed agree with simprec's rounding kernel (round to nearest
// even; satfinite saturates to the largest finite value; NaN gives 0x7fff / 0x7f).
TEST(HardwareAgreement, ConversionsMatchTheRoundingKernel) {
  const std::vector<uint8_t> bf16 = read_file(kDataDir / "cvt_bf16x2.first");
  const std::vector<uint8_t> e4m3 = read_file(kDataDir / "cvt_e4m3x2.first");
  const std::vector<uint8_t> e5m2 = read_file(kDataDir / "cvt_e5m2x2.first");
  ASSERT_EQ(bf16.size(), 2 * tcv::kElementSubset);
  ASSERT_EQ(e4m3.size(), tcv::kElementSubset);
  ASSERT_EQ(e5m2.size(), tcv::kElementSubset);
  Format e4m3_sat = formats::e4m3fn;
  e4m3_sat.overflow = OverflowPolicy::kSaturate;
  Format e5m2_sat = formats::e5m2;
  e5m2_sat.overflow = OverflowPolicy::kSaturate;
  int bad = 0;
  for (uint32_t i = 0; i < tcv::kElementSubset; ++i) {
    const uint32_t x = tcv::elementwise_input(tcv::kElementSeed, i);
    float xf;
    std::memcpy(&xf, &x, 4);
    const bool nan = xf != xf, inf = std::isinf(xf);
    const Unrounded u = unrounded_from_float(xf);
    uint32_t want_bf16 =
        nan ? 0x7fff : static_cast<uint32_t>(round_to_format(formats::bf16, u, Rounding{}));
    uint32_t want_e4m3 =
        nan ? 0x7f : static_cast<uint32_t>(round_to_format(e4m3_sat, u, Rounding{}));
    uint32_t want_e5m2 =
        nan ? 0x7f : static_cast<uint32_t>(round_to_format(e5m2_sat, u, Rounding{}));
    if (inf) {  // satfinite: infinity gives the largest finite value
      want_e4m3 = (xf < 0 ? 0x80u : 0u) | 0x7e;
      want_e5m2 = (xf < 0 ? 0x80u : 0u) | 0x7b;
    }
    const uint32_t got_bf16 = bf16[2 * i] | (bf16[2 * i + 1] << 8);
    if (got_bf16 != want_bf16 && bad++ < 10)
      ADD_FAILURE() << std::hex << "bf16 of 0x" << x << ": hw 0x" << got_bf16 << " want 0x"
                    << want_bf16;
    if (e4m3[i] != want_e4m3 && bad++ < 10)
      ADD_FAILURE() << std::hex << "e4m3 of 0x" << x << ": hw 0x" << int(e4m3[i]) << " want 0x"
                    << want_e4m3;
    if (e5m2[i] != want_e5m2 && bad++ < 10)
      ADD_FAILURE() << std::hex << "e5m2 of 0x" << x << ": hw 0x" << int(e5m2[i]) << " want 0x"
                    << want_e5m2;
  }
  EXPECT_EQ(bad, 0);
}

}  // namespace
}  // namespace simprec
