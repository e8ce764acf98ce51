// Live check on a GPU (ctest label `gpu`): loads the gpu_probe plugin through its C ABI, runs
// every tensor-core kernel on stitched test tiles (chained over K) and compares every output
// with the emulation model; runs the element-wise kernels and compares them with the rounding
// kernel and with the ground truth recorded in tests/data/tensor_core.
// The plugin is looked for in $SIMPREC_GPU_PROBE_PLUGIN, else in <build>/plugins/lib/gpu_probe.so
// next to this test's bin/ folder. Without a plugin or a GPU the tests are skipped.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "emulation/round.hpp"
#include "emulation/tensor_core.hpp"
#include "emulation/tensor_core_vectors.hpp"
#include "plugins/simprec_plugin.h"

namespace simprec {
namespace {

namespace tcv = tc_vectors;

// $SIMPREC_TC_DATA overrides the source tree's copy (for a test binary run on another machine).
const std::filesystem::path kDataDir =
    std::getenv("SIMPREC_TC_DATA")
        ? std::filesystem::path(std::getenv("SIMPREC_TC_DATA"))
        : std::filesystem::path(SIMPREC_SOURCE_DIR) / "tests" / "data" / "tensor_core";

std::filesystem::path plugin_path() {
  if (const char* env = std::getenv("SIMPREC_GPU_PROBE_PLUGIN")) return env;
  return std::filesystem::read_symlink("/proc/self/exe").parent_path().parent_path() / "plugins" /
         "lib" / "gpu_probe.so";
}

class GpuProbe : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::filesystem::path path = plugin_path();
    handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) {
      skip_reason_ = "no gpu_probe plugin at " + path.string() + ": " + dlerror();
      return;
    }
    auto entry =
        reinterpret_cast<SimprecEntryFunction>(dlsym(handle_, SIMPREC_PLUGIN_ENTRY_SYMBOL));
    ASSERT_NE(entry, nullptr);
    char error[256] = {};
    SimprecEntryArgs args{SIMPREC_ENTRY_ARGS_STRUCT_SIZE,
                          SIMPREC_PLUGIN_ABI_MAJOR,
                          SIMPREC_PLUGIN_ABI_MINOR,
                          nullptr,
                          error,
                          sizeof error};
    ASSERT_EQ(entry(&args), SIMPREC_OK) << error;
    plugin_ = args.plugin;
  }
  void SetUp() override {
    if (!plugin_) GTEST_SKIP() << skip_reason_;
  }
  static const SimprecKernel* kernel(const std::string& name) {
    for (size_t i = 0; i < plugin_->kernel_count; ++i)
      if (name == plugin_->kernels[i]->name) return plugin_->kernels[i];
    return nullptr;
  }
  // Runs a kernel; skips the test when the plugin reports no (suitable) device.
  static SimprecStatus run(const SimprecKernel* k, std::vector<SimprecTensor>& tensors,
                           std::string& error) {
    std::vector<const SimprecTensor*> pointers;
    for (const SimprecTensor& t : tensors) pointers.push_back(&t);
    char message[512] = {};
    SimprecRunArgs args{SIMPREC_RUN_ARGS_STRUCT_SIZE,
                        k,
                        pointers.size(),
                        pointers.data(),
                        0,
                        nullptr,
                        message,
                        sizeof message};
    const SimprecStatus status = k->run(&args);
    error = message;
    return status;
  }
  static inline void* handle_ = nullptr;
  static inline const SimprecPlugin* plugin_ = nullptr;
  static inline std::string skip_reason_;
};

struct Owned {
  std::vector<int64_t> shape;
  DLTensor tensor{};
  Owned(void* data, std::vector<int64_t> s, uint8_t code, uint8_t bits) : shape(std::move(s)) {
    tensor.data = data;
    tensor.device = {kDLCPU, 0};
    tensor.ndim = static_cast<int32_t>(shape.size());
    tensor.dtype = {code, bits, 1};
    tensor.shape = shape.data();
  }
};

struct KernelCase {
  const char* kernel;
  const char* probe;
  const char* model;
};
const KernelCase kCases[] = {
    {"mma_bf16_f32", "mma_bf16_f32", "tc:sm90-mma-bf16"},
    {"mma_fp16_f32", "mma_fp16_f32", "tc:sm90-mma-fp16"},
    {"mma_fp16_f16", "mma_fp16_f16", "tc:sm90-mma-fp16acc"},
    {"mma_e4m3_f32", "mma_e4m3_f32", "tc:sm90-mma-e4m3"},
    {"mma_e5m2_f32", "mma_e5m2_f32", "tc:sm90-mma-e5m2"},
    {"mma_e4m3_f16", "mma_e4m3_f16", "tc:sm90-mma-e4m3-fp16acc"},
    {"wgmma_bf16_f32", "wgmma_bf16_f32", "tc:sm90-wgmma-bf16"},
    {"wgmma_fp16_f32", "wgmma_fp16_f32", "tc:sm90-wgmma-fp16"},
    {"wgmma_fp16_f16", "wgmma_fp16_f16", "tc:sm90-wgmma-fp16acc"},
    {"wgmma_e4m3_f32", "wgmma_e4m3_f32", "tc:sm90-wgmma-e4m3"},
    {"wgmma_e5m2_f32", "wgmma_e5m2_f32", "tc:sm90-wgmma-e5m2"},
    {"wgmma_e4m3_f16", "wgmma_e4m3_f16", "tc:sm90-wgmma-e4m3-fp16acc"},
};

class GpuMatmul : public GpuProbe, public ::testing::WithParamInterface<KernelCase> {};

// A (M x K), B (K x N), C (M x N) stitched from the probe's tiles: row block r of A and column
// block c of B come from different tiles (all classes), K chains `chain` instructions.
TEST_P(GpuMatmul, EveryOutputMatchesTheModel) {
  const KernelCase& kc = GetParam();
  const SimprecKernel* k = kernel(kc.kernel);
  ASSERT_NE(k, nullptr) << kc.kernel;
  const TensorCoreModel& model = tensor_core_model(kc.model);
  EXPECT_STREQ(k->emulation_model, kc.model);
  const tcv::Probe* probe = nullptr;
  for (const tcv::Probe& p : tcv::kProbes)
    if (std::string(kc.probe) == p.name) probe = &p;
  ASSERT_NE(probe, nullptr);
  const int row_blocks = probe->m == 16 ? 64 : 16, col_blocks = 64, chain = 4;
  const int M = probe->m * row_blocks, N = 8 * col_blocks, K = probe->k * chain;
  std::vector<uint16_t> a(static_cast<size_t>(M) * K), b(static_cast<size_t>(K) * N);
  std::vector<uint32_t> c(static_cast<size_t>(M) * N);
  std::vector<uint16_t> ta(probe->m * probe->k), tb(probe->k * probe->n);
  std::vector<uint32_t> tc(probe->m * probe->n);
  int tile = 0;
  for (int r = 0; r < row_blocks; ++r)
    for (int s = 0; s < chain; ++s) {
      tcv::generate_tile(*probe, tile++ % probe->tiles, ta.data(), tb.data(), tc.data());
      for (int i = 0; i < probe->m; ++i)
        for (int kk = 0; kk < probe->k; ++kk)
          a[static_cast<size_t>(r * probe->m + i) * K + s * probe->k + kk] = ta[i * probe->k + kk];
    }
  for (int cb = 0; cb < col_blocks; ++cb)
    for (int s = 0; s < chain; ++s) {
      tcv::generate_tile(*probe, tile++ % probe->tiles, ta.data(), tb.data(), tc.data());
      for (int kk = 0; kk < probe->k; ++kk)
        for (int j = 0; j < 8; ++j)
          b[static_cast<size_t>(s * probe->k + kk) * N + cb * 8 + j] = tb[kk * 8 + j];
    }
  for (int r = 0; r < row_blocks; ++r)
    for (int cb = 0; cb < col_blocks; cb += 1) {
      tcv::generate_tile(*probe, tile++ % probe->tiles, ta.data(), tb.data(), tc.data());
      for (int i = 0; i < probe->m; ++i)
        for (int j = 0; j < 8; ++j)
          c[static_cast<size_t>(r * probe->m + i) * N + cb * 8 + j] = tc[i * 8 + j];
    }
  const bool in8 = model.input_a.width() == 8, acc16 = model.accumulator.width() == 16;
  std::vector<uint8_t> a8(a.begin(), a.end()), b8(b.begin(), b.end());
  std::vector<uint16_t> c16(c.begin(), c.end()), d16(c.size());
  std::vector<uint32_t> d32(c.size());
  Owned ta_(in8 ? static_cast<void*>(a8.data()) : a.data(), {M, K}, kDLUInt, in8 ? 8 : 16);
  Owned tb_(in8 ? static_cast<void*>(b8.data()) : b.data(), {K, N}, kDLUInt, in8 ? 8 : 16);
  Owned tc_(acc16 ? static_cast<void*>(c16.data()) : c.data(), {M, N}, acc16 ? kDLUInt : kDLFloat,
            acc16 ? 16 : 32);
  Owned td_(acc16 ? static_cast<void*>(d16.data()) : d32.data(), {M, N}, acc16 ? kDLUInt : kDLFloat,
            acc16 ? 16 : 32);
  const std::string a_name = model.input_a.name(), b_name = model.input_b.name(),
                    acc_name = model.accumulator.name();
  std::vector<SimprecTensor> tensors = {
      {SIMPREC_TENSOR_STRUCT_SIZE, "A", a_name.c_str(), &ta_.tensor},
      {SIMPREC_TENSOR_STRUCT_SIZE, "B", b_name.c_str(), &tb_.tensor},
      {SIMPREC_TENSOR_STRUCT_SIZE, "C", acc_name.c_str(), &tc_.tensor},
      {SIMPREC_TENSOR_STRUCT_SIZE, "D", acc_name.c_str(), &td_.tensor}};
  std::string error;
  const SimprecStatus status = run(k, tensors, error);
  if (status == SIMPREC_ERROR_DEVICE || status == SIMPREC_ERROR_UNSUPPORTED) GTEST_SKIP() << error;
  ASSERT_EQ(status, SIMPREC_OK) << error;
  const std::vector<uint32_t> want = tensor_core_gemm(model, a, b, c, M, N, K, 0);
  size_t bad = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const uint32_t got = acc16 ? d16[i] : d32[i];
    if (got != want[i] && bad++ < 5) {
      ADD_FAILURE() << kc.kernel << " output (" << i / N << ", " << i % N << "): hardware 0x"
                    << std::hex << got << ", model 0x" << want[i];
    }
  }
  EXPECT_EQ(bad, 0u) << "of " << want.size() << " outputs";
  RecordProperty("outputs_compared", static_cast<int>(want.size()));
}

INSTANTIATE_TEST_SUITE_P(H100, GpuMatmul, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<KernelCase>& info) {
                           return std::string(info.param.kernel);
                         });

// Overflow of opposite signs in consecutive instructions of a chain: the second instruction's
// C (an infinity) meets the other infinity. Prints both encodings when they differ.
TEST_F(GpuProbe, ChainedOverflowsOfOppositeSign) {
  for (const char* name : {"mma_e4m3_f16", "mma_fp16_f16", "wgmma_e4m3_f16", "wgmma_fp16_f16"}) {
    const SimprecKernel* k = kernel(name);
    ASSERT_NE(k, nullptr);
    const TensorCoreModel& model = tensor_core_model(k->emulation_model);
    const bool fp8 = model.input_a.width() == 8, wg = model.m == 64;
    const int M = wg ? 64 : 16, N = 8, K = 2 * model.k;
    const uint16_t big = fp8 ? 0x7e : 0x5bff, big_negative = fp8 ? 0xfe : 0xdbff;  // 448, 255.9
    std::vector<uint16_t> a(static_cast<size_t>(M) * K, big), b(static_cast<size_t>(K) * N);
    for (int kk = 0; kk < K; ++kk)
      for (int j = 0; j < N; ++j) {
        // column j: first instruction positive, second negative (j even) or the reverse;
        // columns 4..7 also give C of the other sign.
        const bool first = kk < model.k;
        b[kk * N + j] = (first == (j % 2 == 0)) ? big : big_negative;
      }
    std::vector<uint32_t> c(static_cast<size_t>(M) * N, 0);
    for (int i = 0; i < M; ++i)
      for (int j = 4; j < N; ++j) c[i * N + j] = j % 2 == 0 ? 0xfc00u : 0x7c00u;  // -inf / +inf
    std::vector<uint8_t> a8(a.begin(), a.end()), b8(b.begin(), b.end());
    std::vector<uint16_t> c16(c.begin(), c.end()), d16(c.size());
    Owned ta(fp8 ? static_cast<void*>(a8.data()) : a.data(), {M, K}, kDLUInt, fp8 ? 8 : 16);
    Owned tb(fp8 ? static_cast<void*>(b8.data()) : b.data(), {K, N}, kDLUInt, fp8 ? 8 : 16);
    Owned tc(c16.data(), {M, N}, kDLUInt, 16);
    Owned td(d16.data(), {M, N}, kDLUInt, 16);
    const std::string a_name = model.input_a.name(), b_name = model.input_b.name();
    std::vector<SimprecTensor> tensors = {
        {SIMPREC_TENSOR_STRUCT_SIZE, "A", a_name.c_str(), &ta.tensor},
        {SIMPREC_TENSOR_STRUCT_SIZE, "B", b_name.c_str(), &tb.tensor},
        {SIMPREC_TENSOR_STRUCT_SIZE, "C", "fp16", &tc.tensor},
        {SIMPREC_TENSOR_STRUCT_SIZE, "D", "fp16", &td.tensor}};
    std::string error;
    const SimprecStatus status = run(k, tensors, error);
    if (status == SIMPREC_ERROR_DEVICE || status == SIMPREC_ERROR_UNSUPPORTED)
      GTEST_SKIP() << error;
    ASSERT_EQ(status, SIMPREC_OK) << error;
    const std::vector<uint32_t> want = tensor_core_gemm(model, a, b, c, M, N, K, 1);
    for (int j = 0; j < N; ++j)
      EXPECT_EQ(d16[j], want[j]) << name << " column " << j << ": hardware 0x" << std::hex << d16[j]
                                 << ", model 0x" << want[j];
  }
}

std::vector<uint8_t> read_file(const std::filesystem::path& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}

TEST_F(GpuProbe, ElementwiseInstructionsMatchTheRecordedGroundTruth) {
  std::vector<uint32_t> x(tcv::kElementSubset);
  for (uint32_t i = 0; i < tcv::kElementSubset; ++i)
    x[i] = tcv::elementwise_input(tcv::kElementSeed, i);
  const struct {
    const char* kernel;
    const char* file;
    const char* format;
    int bits;
  } cases[] = {{"ex2_approx_f32", "ex2_approx.first", "fp32", 32},
               {"ex2_approx_ftz_f32", "ex2_approx_ftz.first", "fp32", 32},
               {"cvt_rn_bf16x2_f32", "cvt_bf16x2.first", "bf16", 16},
               {"cvt_rn_satfinite_e4m3x2_f32", "cvt_e4m3x2.first", "e4m3fn", 8},
               {"cvt_rn_satfinite_e5m2x2_f32", "cvt_e5m2x2.first", "e5m2", 8}};
  for (const auto& cs : cases) {
    const SimprecKernel* k = kernel(cs.kernel);
    ASSERT_NE(k, nullptr) << cs.kernel;
    std::vector<uint8_t> y(x.size() * cs.bits / 8);
    Owned tx(x.data(), {static_cast<int64_t>(x.size())}, kDLFloat, 32);
    Owned ty(y.data(), {static_cast<int64_t>(x.size())}, cs.bits == 32 ? kDLFloat : kDLUInt,
             static_cast<uint8_t>(cs.bits));
    std::vector<SimprecTensor> tensors = {{SIMPREC_TENSOR_STRUCT_SIZE, "x", "fp32", &tx.tensor},
                                          {SIMPREC_TENSOR_STRUCT_SIZE, "y", cs.format, &ty.tensor}};
    std::string error;
    const SimprecStatus status = run(k, tensors, error);
    if (status == SIMPREC_ERROR_DEVICE) GTEST_SKIP() << error;
    ASSERT_EQ(status, SIMPREC_OK) << error;
    const std::vector<uint8_t> recorded = read_file(kDataDir / cs.file);
    ASSERT_EQ(recorded.size(), y.size()) << cs.file;
    EXPECT_TRUE(recorded == y) << cs.kernel << " differs from the recorded H100 output";
  }
}

}  // namespace
}  // namespace simprec
