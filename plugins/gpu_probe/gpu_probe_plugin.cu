// The GPU probe plugin: runs single tensor-core instructions (chained over K) and single
// element-wise instructions on the GPU and returns exactly the bits the hardware produced, so
// that the emulation models (emulation/tensor_core.hpp) can be checked against a live device.
// Kernels (kernels/tc_probe_kernels.cuh):
//   mma_<in>_<acc>    mma.sync m16n8k16 (bf16, fp16) / m16n8k32 (e4m3, e5m2), one warp per 16x8
//   tile wgmma_<in>_<acc>  wgmma m64n8k16 / m64n8k32 (sm_90a), one warpgroup per 64x8 tile
//   ex2_approx_f32, ex2_approx_ftz_f32, cvt_rn_bf16x2_f32, cvt_rn_satfinite_e4m3x2_f32,
//   cvt_rn_satfinite_e5m2x2_f32: y = instruction(x) on fp32 inputs.
// Matmul D = A*B + C: A [M,K], B [K,N] as bit patterns, C [M,N] optional (zeros), D [M,N];
// M a multiple of 16 (64 for wgmma), N of 8, K of the instruction's K.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/tc_probe_kernels.cuh"
#include "plugins/cuda_plugin_kit.hpp"
#include "plugins/simprec_plugin.h"

namespace simprec::gpu_probe {
namespace {

namespace sk = simprec::kernels;

using Failure = plugin_kit::KernelFailure;
using plugin_kit::bytes_of;
using plugin_kit::check_cuda;
using plugin_kit::DeviceBuffer;
using plugin_kit::find_tensor;
using plugin_kit::guarded;
using plugin_kit::operand;
using plugin_kit::require_tensor;
using plugin_kit::string_value;

void require_sm90() {
  int device = 0, major = 0, minor = 0;
  check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  check_cuda(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device),
             "compute capability");
  check_cuda(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device),
             "compute capability");
  if (major != 9 || minor != 0) {
    throw Failure(SIMPREC_ERROR_UNSUPPORTED,
                  "gpu_probe is built for sm_90a (H100/H200); this device is sm_" +
                      std::to_string(major) + std::to_string(minor));
  }
}

SimprecStatus run_matmul(const SimprecRunArgs* args, sk::ProbeOp op) {
  return guarded(args, [&] {
    require_sm90();
    const bool wg = op >= sk::ProbeOp::kWgmmaBf16F32;
    const int in_bits = sk::is_16bit_input(op) ? 16 : 8;
    const int acc_bits = sk::is_fp16_accumulator(op) ? 16 : 32;
    const DLTensor& a = require_tensor(args, "A", 2, in_bits);
    const DLTensor& b = require_tensor(args, "B", 2, in_bits);
    const DLTensor& d = require_tensor(args, "D", 2, acc_bits);
    const int64_t m = a.shape[0], k = a.shape[1], n = b.shape[1];
    if (b.shape[0] != k || d.shape[0] != m || d.shape[1] != n)
      throw Failure(SIMPREC_ERROR_INVALID_ARGUMENT, "shapes of A, B, D disagree");
    if (m % (wg ? 64 : 16) || n % 8 || k % sk::instruction_k(op)) {
      throw Failure(SIMPREC_ERROR_INVALID_ARGUMENT,
                    "M must be a multiple of " + std::to_string(wg ? 64 : 16) + ", N of 8, K of " +
                        std::to_string(sk::instruction_k(op)));
    }
    const SimprecTensor* c = find_tensor(args, "C");
    DeviceBuffer da(bytes_of(a)), db(bytes_of(b)), dc(bytes_of(d)), dd(bytes_of(d));
    check_cuda(cudaMemcpy(da.ptr, a.data, bytes_of(a), cudaMemcpyHostToDevice), "copy A");
    check_cuda(cudaMemcpy(db.ptr, b.data, bytes_of(b), cudaMemcpyHostToDevice), "copy B");
    if (c && c->tensor) {
      const DLTensor& ct = require_tensor(args, "C", 2, acc_bits);
      if (ct.shape[0] != m || ct.shape[1] != n)
        throw Failure(SIMPREC_ERROR_INVALID_ARGUMENT, "C must be [M,N]");
      check_cuda(cudaMemcpy(dc.ptr, ct.data, bytes_of(ct), cudaMemcpyHostToDevice), "copy C");
    } else {
      check_cuda(cudaMemset(dc.ptr, 0, bytes_of(d)), "zero C");
    }
    const sk::GemmArgs g{da.ptr,
                         db.ptr,
                         dc.ptr,
                         dd.ptr,
                         1,
                         static_cast<int>(m),
                         static_cast<int>(n),
                         static_cast<int>(k),
                         128,
                         256};
    check_cuda(sk::launch_gemm(op, g), "tensor-core kernel");
    check_cuda(cudaMemcpy(d.data, dd.ptr, bytes_of(d), cudaMemcpyDeviceToHost), "copy D");
  });
}

SimprecStatus run_function(const SimprecRunArgs* args, sk::ElementOp op, int out_bits) {
  return guarded(args, [&] {
    const DLTensor& x = require_tensor(args, "x", 1, 32);
    const DLTensor& y = require_tensor(args, "y", 1, out_bits);
    if (x.shape[0] != y.shape[0])
      throw Failure(SIMPREC_ERROR_INVALID_ARGUMENT, "x and y differ in length");
    const size_t count = static_cast<size_t>(x.shape[0]);
    DeviceBuffer din(count * 4), dout(count * 4);
    check_cuda(cudaMemcpy(din.ptr, x.data, count * 4, cudaMemcpyHostToDevice), "copy x");
    check_cuda(sk::launch_elementwise(op, static_cast<const uint32_t*>(din.ptr),
                                      static_cast<uint32_t*>(dout.ptr), count),
               "element-wise kernel");
    std::vector<uint32_t> out(count);
    check_cuda(cudaMemcpy(out.data(), dout.ptr, count * 4, cudaMemcpyDeviceToHost), "copy y");
    for (size_t i = 0; i < count; ++i) {
      if (out_bits == 32)
        static_cast<uint32_t*>(y.data)[i] = out[i];
      else if (out_bits == 16)
        static_cast<uint16_t*>(y.data)[i] = static_cast<uint16_t>(out[i]);
      else
        static_cast<uint8_t*>(y.data)[i] = static_cast<uint8_t>(out[i]);
    }
  });
}

// ---- descriptors ----

struct MatmulEntry {
  const char* name;
  sk::ProbeOp op;
  const char* input;
  const char* accumulator;
  const char* model;
  bool verified;
  const char* description;
};
template <sk::ProbeOp kOp>
SimprecStatus run_matmul_op(const SimprecRunArgs* args) {
  return run_matmul(args, kOp);
}

#define MATMUL(NAME, OP, IN, ACC, MODEL, VERIFIED, DESC) \
  { NAME, sk::ProbeOp::OP, IN, ACC, MODEL, VERIFIED, DESC }
const MatmulEntry kMatmuls[] = {
    MATMUL("mma_bf16_f32", kMmaBf16F32, "bf16", "fp32", "tc:sm90-mma-bf16", true,
           "mma.sync.m16n8k16 f32.bf16.bf16.f32"),
    MATMUL("mma_fp16_f32", kMmaFp16F32, "fp16", "fp32", "tc:sm90-mma-fp16", true,
           "mma.sync.m16n8k16 f32.f16.f16.f32"),
    MATMUL("mma_fp16_f16", kMmaFp16F16, "fp16", "fp16", "tc:sm90-mma-fp16acc", true,
           "mma.sync.m16n8k16 f16.f16.f16.f16"),
    MATMUL("mma_e4m3_f32", kMmaE4m3F32, "e4m3fn", "fp32", "tc:sm90-mma-e4m3", true,
           "mma.sync.m16n8k32 f32.e4m3.e4m3.f32"),
    MATMUL("mma_e5m2_f32", kMmaE5m2F32, "e5m2", "fp32", "tc:sm90-mma-e5m2", true,
           "mma.sync.m16n8k32 f32.e5m2.e5m2.f32"),
    MATMUL("mma_e4m3_f16", kMmaE4m3F16, "e4m3fn", "fp16", "tc:sm90-mma-e4m3-fp16acc", true,
           "mma.sync.m16n8k32 f16.e4m3.e4m3.f16"),
    MATMUL("wgmma_bf16_f32", kWgmmaBf16F32, "bf16", "fp32", "tc:sm90-wgmma-bf16", true,
           "wgmma m64n8k16 f32.bf16.bf16"),
    MATMUL("wgmma_fp16_f32", kWgmmaFp16F32, "fp16", "fp32", "tc:sm90-wgmma-fp16", true,
           "wgmma m64n8k16 f32.f16.f16"),
    MATMUL("wgmma_fp16_f16", kWgmmaFp16F16, "fp16", "fp16", "tc:sm90-wgmma-fp16acc", true,
           "wgmma m64n8k16 f16.f16.f16"),
    MATMUL("wgmma_e4m3_f32", kWgmmaE4m3F32, "e4m3fn", "fp32", "tc:sm90-wgmma-e4m3", true,
           "wgmma m64n8k32 f32.e4m3.e4m3"),
    MATMUL("wgmma_e5m2_f32", kWgmmaE5m2F32, "e5m2", "fp32", "tc:sm90-wgmma-e5m2", true,
           "wgmma m64n8k32 f32.e5m2.e5m2"),
    MATMUL("wgmma_e4m3_f16", kWgmmaE4m3F16, "e4m3fn", "fp16", "tc:sm90-wgmma-e4m3-fp16acc", true,
           "wgmma m64n8k32 f16.e4m3.e4m3"),
};
#undef MATMUL
constexpr size_t kMatmulCount = sizeof(kMatmuls) / sizeof(kMatmuls[0]);

const SimprecRunFunction kMatmulRuns[kMatmulCount] = {
    run_matmul_op<sk::ProbeOp::kMmaBf16F32>,   run_matmul_op<sk::ProbeOp::kMmaFp16F32>,
    run_matmul_op<sk::ProbeOp::kMmaFp16F16>,   run_matmul_op<sk::ProbeOp::kMmaE4m3F32>,
    run_matmul_op<sk::ProbeOp::kMmaE5m2F32>,   run_matmul_op<sk::ProbeOp::kMmaE4m3F16>,
    run_matmul_op<sk::ProbeOp::kWgmmaBf16F32>, run_matmul_op<sk::ProbeOp::kWgmmaFp16F32>,
    run_matmul_op<sk::ProbeOp::kWgmmaFp16F16>, run_matmul_op<sk::ProbeOp::kWgmmaE4m3F32>,
    run_matmul_op<sk::ProbeOp::kWgmmaE5m2F32>, run_matmul_op<sk::ProbeOp::kWgmmaE4m3F16>,
};

struct FunctionEntry {
  const char* name;
  sk::ElementOp op;
  const char* function;
  const char* out_format;
  int out_bits;
  const char* description;
};
const FunctionEntry kFunctions[] = {
    {"ex2_approx_f32", sk::ElementOp::kEx2Approx, "exp2", "fp32", 32,
     "ex2.approx.f32 (MUFU.EX2): exp2f under fast math"},
    {"ex2_approx_ftz_f32", sk::ElementOp::kEx2ApproxFtz, "exp2", "fp32", 32, "ex2.approx.ftz.f32"},
    {"cvt_rn_bf16x2_f32", sk::ElementOp::kCvtBf16x2, "convert", "bf16", 16,
     "cvt.rn.bf16x2.f32 (one lane)"},
    {"cvt_rn_satfinite_e4m3x2_f32", sk::ElementOp::kCvtE4m3x2, "convert", "e4m3fn", 8,
     "cvt.rn.satfinite.e4m3x2.f32 (one lane)"},
    {"cvt_rn_satfinite_e5m2x2_f32", sk::ElementOp::kCvtE5m2x2, "convert", "e5m2", 8,
     "cvt.rn.satfinite.e5m2x2.f32 (one lane)"},
};
constexpr size_t kFunctionCount = sizeof(kFunctions) / sizeof(kFunctions[0]);
template <size_t I>
SimprecStatus run_function_op(const SimprecRunArgs* args) {
  return run_function(args, kFunctions[I].op, kFunctions[I].out_bits);
}
const SimprecRunFunction kFunctionRuns[kFunctionCount] = {run_function_op<0>, run_function_op<1>,
                                                          run_function_op<2>, run_function_op<3>,
                                                          run_function_op<4>};

// Everything the descriptors point at, built once.
struct Tables {
  std::vector<SimprecOperandSpec> operand_specs;
  std::vector<std::vector<const SimprecOperandSpec*>> operand_lists;
  std::vector<SimprecDimensionSpec> dimension_specs;
  std::vector<std::vector<const SimprecDimensionSpec*>> dimension_lists;
  std::vector<SimprecNamedValue> attribute_values;
  std::vector<std::vector<const SimprecNamedValue*>> attribute_lists;
  std::vector<SimprecKernel> kernels;
  std::vector<const SimprecKernel*> kernel_pointers;
  SimprecPlugin plugin{};

  Tables() {
    // Reserve so that pointers into the vectors stay valid.
    operand_specs.reserve(4 * kMatmulCount + 2 * kFunctionCount);
    dimension_specs.reserve(3 * kMatmulCount);
    attribute_values.reserve(kMatmulCount + 2 * kFunctionCount);
    operand_lists.reserve(kMatmulCount + kFunctionCount);
    dimension_lists.reserve(kMatmulCount);
    attribute_lists.reserve(kMatmulCount + kFunctionCount);
    for (size_t i = 0; i < kMatmulCount; ++i) {
      const MatmulEntry& e = kMatmuls[i];
      const bool wg = e.op >= sk::ProbeOp::kWgmmaBf16F32;
      std::vector<const SimprecOperandSpec*> ops;
      operand_specs.push_back(operand("A", SIMPREC_OPERAND_INPUT, e.input, "M,K"));
      ops.push_back(&operand_specs.back());
      operand_specs.push_back(operand("B", SIMPREC_OPERAND_INPUT, e.input, "K,N"));
      ops.push_back(&operand_specs.back());
      operand_specs.push_back(
          operand("C", SIMPREC_OPERAND_INPUT, e.accumulator, "M,N", SIMPREC_OPERAND_FLAG_OPTIONAL));
      ops.push_back(&operand_specs.back());
      operand_specs.push_back(operand("D", SIMPREC_OPERAND_OUTPUT, e.accumulator, "M,N"));
      ops.push_back(&operand_specs.back());
      operand_lists.push_back(ops);
      std::vector<const SimprecDimensionSpec*> dims;
      dimension_specs.push_back(
          {SIMPREC_DIMENSION_SPEC_STRUCT_SIZE, "M", wg ? 64 : 16, 0, wg ? 64 : 16});
      dims.push_back(&dimension_specs.back());
      dimension_specs.push_back({SIMPREC_DIMENSION_SPEC_STRUCT_SIZE, "N", 8, 0, 8});
      dims.push_back(&dimension_specs.back());
      dimension_specs.push_back({SIMPREC_DIMENSION_SPEC_STRUCT_SIZE, "K", sk::instruction_k(e.op),
                                 0, sk::instruction_k(e.op)});
      dims.push_back(&dimension_specs.back());
      dimension_lists.push_back(dims);
      attribute_values.push_back(string_value("accumulator_format", e.accumulator));
      attribute_lists.push_back({&attribute_values.back()});
      SimprecKernel k = plugin_kit::describe_kernel(e.name, SIMPREC_KERNEL_MATMUL,
                                                    e.verified ? SIMPREC_KERNEL_FLAG_BIT_EXACT : 0u,
                                                    e.description, e.model, kMatmulRuns[i]);
      k.operand_count = 4;
      k.operands = operand_lists.back().data();
      k.dimension_count = 3;
      k.dimensions = dimension_lists.back().data();
      k.attribute_count = 1;
      k.attributes = attribute_lists.back().data();
      kernels.push_back(k);
    }
    for (size_t i = 0; i < kFunctionCount; ++i) {
      const FunctionEntry& e = kFunctions[i];
      std::vector<const SimprecOperandSpec*> ops;
      operand_specs.push_back(operand("x", SIMPREC_OPERAND_INPUT, "fp32", "N"));
      ops.push_back(&operand_specs.back());
      operand_specs.push_back(operand("y", SIMPREC_OPERAND_OUTPUT, e.out_format, "N"));
      ops.push_back(&operand_specs.back());
      operand_lists.push_back(ops);
      std::vector<const SimprecNamedValue*> attrs;
      attribute_values.push_back(string_value("function", e.function));
      attrs.push_back(&attribute_values.back());
      attribute_values.push_back(string_value("info.instruction", e.description));
      attrs.push_back(&attribute_values.back());
      attribute_lists.push_back(attrs);
      SimprecKernel k = plugin_kit::describe_kernel(e.name, SIMPREC_KERNEL_FUNCTION, 0,
                                                    e.description, nullptr, kFunctionRuns[i]);
      k.operand_count = 2;
      k.operands = operand_lists.back().data();
      k.attribute_count = 2;
      k.attributes = attribute_lists.back().data();
      kernels.push_back(k);
    }
    for (const SimprecKernel& k : kernels) kernel_pointers.push_back(&k);
    plugin = plugin_kit::describe_plugin(
        "gpu_probe", "1.0.0",
        "single tensor-core and element-wise instructions on the GPU (sm_90a), raw results",
        kernel_pointers.data(), kernel_pointers.size());
  }
};

}  // namespace
}  // namespace simprec::gpu_probe

SIMPREC_PLUGIN_EXPORT SimprecStatus simprec_plugin_entry(SimprecEntryArgs* args) {
  return simprec::plugin_kit::serve_entry<simprec::gpu_probe::Tables>(args, "gpu_probe");
}
