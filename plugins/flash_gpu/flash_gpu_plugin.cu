// The flash_gpu plugin: simprec's own FlashAttention-2 CUDA kernels (kernels/flash/) behind the
// plugin ABI, each declaring the emulation preset that reproduces it bit for bit (`cuda-fa2`),
// plus the kernels' exp2 (ex2.approx.ftz.f32) as a device function, from which the emulation
// takes the exact values the kernels compute.
//
// Kernels:
//   flash_fwd_<bf16|fp16>_<64x64|128x64>  forward; beta-rowmax and stochastic rounding of P
//                                          switchable per call (parameters)
//   flash_fwd_<bf16|fp16>_wg128x64         the same forward on wgmma and TMA (FlashAttention-3's
//                                          structure, d = 128), the same bits as 64x64
//   flash_fwd_e4m3_64x128                  forward on e4m3 Q, K, V (d = 128), bf16 O
//   flash_bwd_<bf16|fp16>_64x64           backward (deterministic: dK/dV and dQ kernels)
//   ex2_approx_ftz_f32                     y = ex2.approx.ftz.f32(x)
#include <cuda_runtime.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "kernels/flash/flash_launch.cuh"
#include "kernels/flash/flash_launch_wgmma.cuh"
#include "plugins/cuda_plugin_kit.hpp"
#include "plugins/simprec_plugin.h"

namespace simprec::flash_gpu {
namespace {

using Failure = plugin_kit::KernelFailure;
using plugin_kit::bytes_of;
using plugin_kit::check_cuda;
using plugin_kit::DeviceBuffer;
using plugin_kit::find_tensor;
using plugin_kit::guarded;
using plugin_kit::operand;
using plugin_kit::require_tensor;
using plugin_kit::string_value;

// Uploads a host tensor into a new device buffer.
struct Uploaded {
  DeviceBuffer buffer;
  explicit Uploaded(const DLTensor& t) : buffer(bytes_of(t)) {
    check_cuda(cudaMemcpy(buffer.ptr, t.data, bytes_of(t), cudaMemcpyHostToDevice), "upload");
  }
};
void download(const DeviceBuffer& from, const DLTensor& to) {
  check_cuda(cudaMemcpy(to.data, from.ptr, bytes_of(to), cudaMemcpyDeviceToHost), "download");
}

const SimprecNamedValue* find_parameter(const SimprecRunArgs* args, const char* name) {
  for (size_t i = 0; i < args->parameter_count; ++i) {
    const SimprecNamedValue* v = args->parameters[i];
    if (v && v->name && std::strcmp(v->name, name) == 0) return v;
  }
  return nullptr;
}
double float_parameter(const SimprecRunArgs* args, const char* name, double fallback) {
  const SimprecNamedValue* v = find_parameter(args, name);
  if (!v) return fallback;
  if (v->type == SIMPREC_VALUE_FLOAT64) return v->float64_value;
  if (v->type == SIMPREC_VALUE_INT64) return static_cast<double>(v->int64_value);
  throw Failure(SIMPREC_ERROR_INVALID_ARGUMENT, std::string(name) + " must be a number");
}
int64_t int_parameter(const SimprecRunArgs* args, const char* name, int64_t fallback) {
  const SimprecNamedValue* v = find_parameter(args, name);
  if (!v) return fallback;
  if (v->type == SIMPREC_VALUE_INT64 || v->type == SIMPREC_VALUE_BOOL) return v->int64_value;
  throw Failure(SIMPREC_ERROR_INVALID_ARGUMENT, std::string(name) + " must be an integer");
}

void require_device() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0)
    throw Failure(SIMPREC_ERROR_DEVICE, "no CUDA device");
  int major = 0;
  check_cuda(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0), "device");
  if (major != 9)
    throw Failure(SIMPREC_ERROR_UNSUPPORTED, "flash_gpu is built for sm_90a (H100/H200)");
}

// [B, H, N, D] shape of a 4-dimensional tensor.
struct Shape4 {
  int64_t b, h, n, d;
};
Shape4 shape_of(const DLTensor& t) {
  return {t.shape[0], t.shape[1], t.shape[2], t.shape[3]};
}

struct AttentionEntry {
  const char* name;
  uint32_t kind;
  const char* format;
  const char* output_format;
  flash::Element element;
  flash::TileConfig tile;  // the launch's: Sq and Sk are multiples of its block_m and block_n
  bool wgmma;              // the wgmma kernel (d = 128) instead of the mma.sync ones
  const char* block_rows;  // the emulation's tiles
  const char* block_cols;
  const char* description;
};

// Checks Q, K, V shapes and returns the common (B, H, Nq, Nk, D).
struct Problem {
  int64_t b, h, nq, nk, d;
};
Problem check_qkv(const DLTensor& q, const DLTensor& k, const DLTensor& v,
                  const AttentionEntry& e) {
  const Shape4 sq = shape_of(q), sk = shape_of(k), sv = shape_of(v);
  if (sk.b != sq.b || sv.b != sq.b || sk.h != sq.h || sv.h != sq.h)
    throw Failure(SIMPREC_ERROR_INVALID_ARGUMENT, "Q, K, V differ in batch or heads");
  if (sv.n != sk.n) throw Failure(SIMPREC_ERROR_INVALID_ARGUMENT, "K and V differ in length");
  if (sk.d != sq.d || sv.d != sq.d)
    throw Failure(SIMPREC_ERROR_INVALID_ARGUMENT, "Q, K, V must share the head dimension");
  if (sq.d != 64 && sq.d != 128)
    throw Failure(SIMPREC_ERROR_UNSUPPORTED,
                  "head dimension " + std::to_string(sq.d) + ": expected 64 or 128");
  if (sq.n % e.tile.block_m || sk.n % e.tile.block_n) {
    throw Failure(SIMPREC_ERROR_INVALID_ARGUMENT,
                  "sequence lengths must be multiples of the tile (" +
                      std::to_string(e.tile.block_m) + " queries, " +
                      std::to_string(e.tile.block_n) + " keys)");
  }
  return {sq.b, sq.h, sq.n, sk.n, sq.d};
}

double scale_of(const SimprecRunArgs* args, int64_t d) {
  const double scale = float_parameter(args, "scale", 1.0 / std::sqrt(static_cast<double>(d)));
  if (!(scale > 0) || !std::isfinite(scale))
    throw Failure(SIMPREC_ERROR_INVALID_ARGUMENT, "scale must be positive and finite");
  return scale;
}
// fp32(scale * log2 e): the emulation's exponent multiplier, computed the same way.
float scale_log2_of(double scale) {
  return static_cast<float>(scale * 1.4426950408889634);
}

// The fields forward and backward parameters share: sizes, scale and the causal flag.
template <class Params>
void set_problem(Params& p, const Problem& pr, const SimprecRunArgs* args) {
  p.problems = static_cast<int>(pr.b * pr.h);
  p.seqlen_q = static_cast<int>(pr.nq);
  p.seqlen_k = static_cast<int>(pr.nk);
  p.scale = scale_of(args, pr.d);
  p.scale_log2 = scale_log2_of(p.scale);
  p.causal = int_parameter(args, "causal", 0) != 0;
}

SimprecStatus run_forward(const SimprecRunArgs* args, const AttentionEntry& e) {
  return guarded(args, [&] {
    const bool fp8 = e.element == flash::Element::kE4m3;
    const int bits_in = fp8 ? 8 : 16;
    const DLTensor& q = require_tensor(args, "Q", 4, bits_in);
    const DLTensor& k = require_tensor(args, "K", 4, bits_in);
    const DLTensor& v = require_tensor(args, "V", 4, bits_in);
    const DLTensor& o = require_tensor(args, "O", 4, 16);
    const Problem pr = check_qkv(q, k, v, e);
    if ((fp8 || e.wgmma) && pr.d != 128) {
      throw Failure(SIMPREC_ERROR_UNSUPPORTED,
                    std::string(e.name) + " needs head dimension 128, not " + std::to_string(pr.d));
    }
    const Shape4 so = shape_of(o);
    if (so.b != pr.b || so.h != pr.h || so.n != pr.nq || so.d != pr.d)
      throw Failure(SIMPREC_ERROR_INVALID_ARGUMENT, "O must have Q's shape");
    const SimprecTensor* lse_tensor = find_tensor(args, "LSE");
    const DLTensor* lse =
        lse_tensor && lse_tensor->tensor ? &require_tensor(args, "LSE", 3, 32) : nullptr;
    flash::ForwardParams p;
    set_problem(p, pr, args);
    p.beta_rowmax = int_parameter(args, "beta_rowmax", 0) != 0;
    p.beta = float_parameter(args, "beta", 2.0);
    const double eps = float_parameter(args, "eps", 1e-3);
    // The kernels take beta in fp32 (cuda-fa2's beta-rowmax arithmetic).
    if (!(p.beta > 0) || !std::isfinite(static_cast<float>(p.beta)) || !(eps >= 0) ||
        !std::isfinite(eps)) {
      throw Failure(SIMPREC_ERROR_INVALID_ARGUMENT,
                    "beta must be positive and finite in fp32, eps finite and non-negative");
    }
    p.eps_over_scale = eps / p.scale;
    const int64_t bits = int_parameter(args, "sr_p_bits", 0);
    if (bits != 0 && bits != 8) {
      throw Failure(SIMPREC_ERROR_INVALID_ARGUMENT,
                    "sr_p_bits " + std::to_string(bits) + ": expected 0 (off) or 8");
    }
    p.sr_bits = static_cast<int>(bits);
    if (fp8 && p.sr_bits)
      throw Failure(SIMPREC_ERROR_UNSUPPORTED, "no stochastic rounding of P in the e4m3 kernel");
    p.seed = static_cast<uint64_t>(int_parameter(args, "seed", 0));
    require_device();
    // The e4m3 kernel reads V transposed, [B, H, D, Nk] (flash_forward.cuh).
    std::vector<uint8_t> v_transposed;
    DLTensor v_view = v;
    if (fp8) {
      v_transposed.resize(bytes_of(v));
      const uint8_t* src = static_cast<const uint8_t*>(v.data);
      const int64_t n = pr.nk, d = pr.d;
      for (int64_t b = 0; b < pr.b * pr.h; ++b)
        for (int64_t j = 0; j < n; ++j)
          for (int64_t c = 0; c < d; ++c)
            v_transposed[(b * d + c) * n + j] = src[(b * n + j) * d + c];
      v_view.data = v_transposed.data();
    }
    Uploaded dq(q), dk(k), dv(v_view);
    DeviceBuffer d_o(bytes_of(o)), d_lse(static_cast<size_t>(pr.b * pr.h * pr.nq) * 4);
    p.q = dq.buffer.ptr;
    p.k = dk.buffer.ptr;
    p.v = dv.buffer.ptr;
    p.o = d_o.ptr;
    p.lse = static_cast<float*>(d_lse.ptr);
    const int d = static_cast<int>(pr.d);
    check_cuda(e.wgmma ? flash::launch_forward_wgmma(e.element, d, p, nullptr)
                       : flash::launch_forward(e.element, d, e.tile, p, nullptr),
               "flash forward launch");
    check_cuda(cudaDeviceSynchronize(), "flash forward");
    download(d_o, o);
    if (lse) download(d_lse, *lse);
  });
}

SimprecStatus run_backward(const SimprecRunArgs* args, const AttentionEntry& e) {
  return guarded(args, [&] {
    const DLTensor& q = require_tensor(args, "Q", 4, 16);
    const DLTensor& k = require_tensor(args, "K", 4, 16);
    const DLTensor& v = require_tensor(args, "V", 4, 16);
    const DLTensor& o = require_tensor(args, "O", 4, 16);
    const DLTensor& d_out = require_tensor(args, "dO", 4, 16);
    const DLTensor& lse = require_tensor(args, "LSE", 3, 32);
    const DLTensor& grad_q = require_tensor(args, "dQ", 4, 16);
    const DLTensor& grad_k = require_tensor(args, "dK", 4, 16);
    const DLTensor& grad_v = require_tensor(args, "dV", 4, 16);
    const Problem pr = check_qkv(q, k, v, e);
    for (const DLTensor* t : {&o, &d_out, &grad_q}) {
      const Shape4 s = shape_of(*t);
      if (s.b != pr.b || s.h != pr.h || s.n != pr.nq || s.d != pr.d)
        throw Failure(SIMPREC_ERROR_INVALID_ARGUMENT, "O, dO and dQ must have Q's shape");
    }
    for (const DLTensor* t : {&grad_k, &grad_v}) {
      const Shape4 s = shape_of(*t);
      if (s.b != pr.b || s.h != pr.h || s.n != pr.nk || s.d != pr.d)
        throw Failure(SIMPREC_ERROR_INVALID_ARGUMENT, "dK and dV must have K's shape");
    }
    if (lse.shape[0] != pr.b || lse.shape[1] != pr.h || lse.shape[2] != pr.nq)
      throw Failure(SIMPREC_ERROR_INVALID_ARGUMENT, "LSE must be [B, H, Sq]");
    flash::BackwardParams p;
    set_problem(p, pr, args);
    require_device();
    Uploaded uq(q), uk(k), uv(v), uo(o), udo(d_out), ulse(lse);
    const size_t rows = static_cast<size_t>(pr.b * pr.h * pr.nq);
    DeviceBuffer gq(bytes_of(grad_q)), gk(bytes_of(grad_k)), gv(bytes_of(grad_v)), delta(rows * 4),
        shift(rows * 4);
    p.q = uq.buffer.ptr;
    p.k = uk.buffer.ptr;
    p.v = uv.buffer.ptr;
    p.o = uo.buffer.ptr;
    p.d_o = udo.buffer.ptr;
    p.lse = static_cast<const float*>(ulse.buffer.ptr);
    p.dq = gq.ptr;
    p.dk = gk.ptr;
    p.dv = gv.ptr;
    p.delta = static_cast<float*>(delta.ptr);
    p.shift = static_cast<float*>(shift.ptr);
    check_cuda(
        flash::launch_backward(e.element, static_cast<int>(pr.d), e.tile.block_m, p, nullptr),
        "flash backward launch");
    check_cuda(cudaDeviceSynchronize(), "flash backward");
    download(gq, grad_q);
    download(gk, grad_k);
    download(gv, grad_v);
  });
}

__global__ void ex2_kernel(const float* x, float* y, size_t n) {
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = flash::ex2(x[i]);
}

SimprecStatus run_ex2(const SimprecRunArgs* args) {
  return guarded(args, [&] {
    const DLTensor& x = require_tensor(args, "x", 1, 32);
    const DLTensor& y = require_tensor(args, "y", 1, 32);
    if (x.shape[0] != y.shape[0])
      throw Failure(SIMPREC_ERROR_INVALID_ARGUMENT, "x and y differ in length");
    require_device();
    const size_t n = static_cast<size_t>(x.shape[0]);
    Uploaded dx(x);
    DeviceBuffer dy(n * 4);
    if (n > 0) {
      ex2_kernel<<<static_cast<unsigned>((n + 255) / 256), 256>>>(
          static_cast<const float*>(dx.buffer.ptr), static_cast<float*>(dy.ptr), n);
      check_cuda(cudaGetLastError(), "ex2 launch");
      check_cuda(cudaDeviceSynchronize(), "ex2");
    }
    download(dy, y);
  });
}

// ---- descriptors ----

#define FWD(NAME, FMT, OUT, ELEMENT, TILE, ROWS, COLS, WHAT)                                       \
  {                                                                                                \
    NAME, SIMPREC_KERNEL_ATTENTION_FORWARD, FMT, OUT, flash::Element::ELEMENT, flash::TILE, false, \
        ROWS, COLS, "FlashAttention-2 forward, " WHAT ", " ROWS "x" COLS " tiles"                  \
  }
// 128 query rows per CTA as two warpgroups of 64 rows that each skip the key blocks masked out
// for all of their rows, as the 64x64 kernel does: the emulation's tiles are 64x64.
#define FWD_WGMMA(NAME, FMT, ELEMENT)                                                              \
  {                                                                                                \
    NAME, SIMPREC_KERNEL_ATTENTION_FORWARD, FMT, FMT, flash::Element::ELEMENT, flash::kTile128x64, \
        true, "64", "64",                                                                          \
        "FlashAttention forward on wgmma m64nNk16 with TMA copies (FlashAttention-3's "            \
        "structure), d = 128, 128 query rows per CTA; beta-rowmax and stochastic rounding of P "   \
        "per call; the same bits as the 64x64 kernel"                                              \
  }
#define BWD(NAME, FMT, ELEMENT)                                                                    \
  {                                                                                                \
    NAME, SIMPREC_KERNEL_ATTENTION_BACKWARD, FMT, FMT, flash::Element::ELEMENT, flash::kTile64x64, \
        false, "64", "64",                                                                         \
        "FlashAttention-2 backward, deterministic (dK/dV and dQ kernels), 64x64 tiles"             \
  }
#define MITIGATED "mma.sync m16n8k16; beta-rowmax and stochastic rounding of P per call"
const AttentionEntry kAttention[] = {
    FWD("flash_fwd_bf16_64x64", "bf16", "bf16", kBf16, kTile64x64, "64", "64", MITIGATED),
    FWD("flash_fwd_bf16_128x64", "bf16", "bf16", kBf16, kTile128x64, "128", "64", MITIGATED),
    FWD_WGMMA("flash_fwd_bf16_wg128x64", "bf16", kBf16),
    FWD("flash_fwd_fp16_64x64", "fp16", "fp16", kFp16, kTile64x64, "64", "64", MITIGATED),
    FWD("flash_fwd_fp16_128x64", "fp16", "fp16", kFp16, kTile128x64, "128", "64", MITIGATED),
    FWD_WGMMA("flash_fwd_fp16_wg128x64", "fp16", kFp16),
    FWD("flash_fwd_e4m3_64x128", "e4m3fn", "bf16", kE4m3, kTile64x128, "64", "128",
        "e4m3 inputs and P, mma.sync m16n8k32, bf16 O, d = 128; beta-rowmax per call"),
    BWD("flash_bwd_bf16_64x64", "bf16", kBf16),
    BWD("flash_bwd_fp16_64x64", "fp16", kFp16),
};
#undef FWD
#undef FWD_WGMMA
#undef BWD
#undef MITIGATED
constexpr size_t kAttentionCount = sizeof(kAttention) / sizeof(kAttention[0]);

template <size_t I>
SimprecStatus run_attention(const SimprecRunArgs* args) {
  return kAttention[I].kind == SIMPREC_KERNEL_ATTENTION_FORWARD ? run_forward(args, kAttention[I])
                                                                : run_backward(args, kAttention[I]);
}
template <size_t... I>
constexpr auto make_runs(std::index_sequence<I...>) {
  return std::array<SimprecRunFunction, sizeof...(I)>{run_attention<I>...};
}
const auto kAttentionRuns = make_runs(std::make_index_sequence<kAttentionCount>{});

SimprecParameterSpec parameter(const char* name, uint32_t type, const char* fallback,
                               const char* description) {
  return {SIMPREC_PARAMETER_SPEC_STRUCT_SIZE, name, type, 0, fallback, description};
}

// Everything the descriptors point at, built once; the vectors are reserved up front so that
// pointers into them stay valid.
struct Tables {
  std::vector<SimprecOperandSpec> operands;
  std::vector<std::vector<const SimprecOperandSpec*>> operand_lists;
  std::vector<SimprecDimensionSpec> dimensions;
  std::vector<std::vector<const SimprecDimensionSpec*>> dimension_lists;
  std::vector<SimprecParameterSpec> parameters;
  std::vector<const SimprecParameterSpec*> forward_parameters, backward_parameters;
  std::vector<SimprecNamedValue> attributes;
  std::vector<std::vector<const SimprecNamedValue*>> attribute_lists;
  std::vector<SimprecKernel> kernels;
  std::vector<const SimprecKernel*> kernel_pointers;
  SimprecPlugin plugin{};

  const SimprecOperandSpec* add_operand(const char* name, uint32_t direction, const char* formats,
                                        const char* shape, uint32_t flags = 0) {
    operands.push_back(operand(name, direction, formats, shape, flags));
    return &operands.back();
  }

  Tables() {
    operands.reserve(16 * (kAttentionCount + 1));
    operand_lists.reserve(kAttentionCount + 1);
    dimensions.reserve(8 * kAttentionCount);
    dimension_lists.reserve(kAttentionCount);
    parameters.reserve(16);
    attributes.reserve(8 * (kAttentionCount + 1));
    attribute_lists.reserve(kAttentionCount + 1);
    parameters.push_back(
        parameter("causal", SIMPREC_VALUE_BOOL, "false", "mask keys after the query"));
    parameters.push_back(parameter("scale", SIMPREC_VALUE_FLOAT64, "1/sqrt(D)", "softmax scale"));
    parameters.push_back(parameter("beta_rowmax", SIMPREC_VALUE_BOOL, "false",
                                   "paper A's mitigation: subtract beta*max (or 0) when a block's "
                                   "row max repeats within eps"));
    parameters.push_back(parameter("beta", SIMPREC_VALUE_FLOAT64, "2", "beta-rowmax factor"));
    parameters.push_back(parameter("eps", SIMPREC_VALUE_FLOAT64, "0.001",
                                   "beta-rowmax repeat tolerance on scaled scores"));
    parameters.push_back(parameter("sr_p_bits", SIMPREC_VALUE_INT64, "0",
                                   "stochastic rounding of P with 8 random bits per element "
                                   "(emulation/tiled_random.hpp); 0: nearest even"));
    parameters.push_back(parameter("seed", SIMPREC_VALUE_INT64, "0", "seed of the random bits"));
    for (const auto& p : parameters) forward_parameters.push_back(&p);
    backward_parameters = {&parameters[0], &parameters[1]};

    for (size_t i = 0; i < kAttentionCount; ++i) {
      const AttentionEntry& e = kAttention[i];
      const bool forward = e.kind == SIMPREC_KERNEL_ATTENTION_FORWARD;
      std::vector<const SimprecOperandSpec*> ops;
      ops.push_back(add_operand("Q", SIMPREC_OPERAND_INPUT, e.format, "B,H,Sq,D"));
      ops.push_back(add_operand("K", SIMPREC_OPERAND_INPUT, e.format, "B,H,Sk,D"));
      ops.push_back(add_operand("V", SIMPREC_OPERAND_INPUT, e.format, "B,H,Sk,D"));
      if (forward) {
        ops.push_back(add_operand("O", SIMPREC_OPERAND_OUTPUT, e.output_format, "B,H,Sq,D"));
        ops.push_back(add_operand("LSE", SIMPREC_OPERAND_OUTPUT, "fp32", "B,H,Sq",
                                  SIMPREC_OPERAND_FLAG_OPTIONAL));
      } else {
        ops.push_back(add_operand("O", SIMPREC_OPERAND_INPUT, e.format, "B,H,Sq,D"));
        ops.push_back(add_operand("dO", SIMPREC_OPERAND_INPUT, e.format, "B,H,Sq,D"));
        ops.push_back(add_operand("LSE", SIMPREC_OPERAND_INPUT, "fp32", "B,H,Sq"));
        ops.push_back(add_operand("dQ", SIMPREC_OPERAND_OUTPUT, e.format, "B,H,Sq,D"));
        ops.push_back(add_operand("dK", SIMPREC_OPERAND_OUTPUT, e.format, "B,H,Sk,D"));
        ops.push_back(add_operand("dV", SIMPREC_OPERAND_OUTPUT, e.format, "B,H,Sk,D"));
      }
      operand_lists.push_back(ops);
      std::vector<const SimprecDimensionSpec*> dims;
      dimensions.push_back(
          {SIMPREC_DIMENSION_SPEC_STRUCT_SIZE, "Sq", e.tile.block_m, 0, e.tile.block_m});
      dims.push_back(&dimensions.back());
      dimensions.push_back(
          {SIMPREC_DIMENSION_SPEC_STRUCT_SIZE, "Sk", e.tile.block_n, 0, e.tile.block_n});
      dims.push_back(&dimensions.back());
      const bool fp8 = e.element == flash::Element::kE4m3;
      dimensions.push_back(
          {SIMPREC_DIMENSION_SPEC_STRUCT_SIZE, "D", fp8 || e.wgmma ? 128 : 64, 128, 64});
      dims.push_back(&dimensions.back());
      dimension_lists.push_back(dims);
      std::vector<const SimprecNamedValue*> attrs;
      for (const auto& [name, value] :
           {std::pair{"block_rows", e.block_rows}, std::pair{"block_cols", e.block_cols},
            std::pair{"format", e.format}, std::pair{"output_format", e.output_format},
            std::pair{"exp2_function", "ex2_approx_ftz_f32"},
            // What the preset's name stands for, for readers of `simprec plugins list`.
            // (wgmma's k16 steps round as mma.sync's; the kernel's outputs equal the 64x64
            // kernel's, signed zeros included, in every validation of scripts/gpu_check.sh)
            std::pair{"info.tensor_core_model", fp8 ? "tc:sm90-mma-e4m3"
                                                : e.element == flash::Element::kBf16
                                                    ? "tc:sm90-mma-bf16"
                                                    : "tc:sm90-mma-fp16"},
            std::pair{"info.exp",
                      "ex2(fma(S, fp32(scale*log2e), -fp32(m*c))), rescale ex2(shift_old - shift)"},
            std::pair{"info.row_sum",
                      "four lanes, column j -> (j % 8) / 2, (l0 + l2) + (l1 + l3)"}}) {
        attributes.push_back(string_value(name, value));
        attrs.push_back(&attributes.back());
      }
      attribute_lists.push_back(attrs);
      SimprecKernel k = plugin_kit::describe_kernel(e.name, e.kind, SIMPREC_KERNEL_FLAG_BIT_EXACT,
                                                    e.description, "cuda-fa2", kAttentionRuns[i]);
      k.operand_count = operand_lists.back().size();
      k.operands = operand_lists.back().data();
      k.dimension_count = dimension_lists.back().size();
      k.dimensions = dimension_lists.back().data();
      const auto& params = forward ? forward_parameters : backward_parameters;
      k.parameter_count = params.size();
      k.parameters = params.data();
      k.attribute_count = attribute_lists.back().size();
      k.attributes = attribute_lists.back().data();
      kernels.push_back(k);
    }
    {
      std::vector<const SimprecOperandSpec*> ops;
      ops.push_back(add_operand("x", SIMPREC_OPERAND_INPUT, "fp32", "N"));
      ops.push_back(add_operand("y", SIMPREC_OPERAND_OUTPUT, "fp32", "N"));
      operand_lists.push_back(ops);
      attributes.push_back(string_value("function", "exp2"));
      attributes.push_back(string_value("info.instruction", "ex2.approx.ftz.f32"));
      attribute_lists.push_back({&attributes[attributes.size() - 2], &attributes.back()});
      SimprecKernel k = plugin_kit::describe_kernel(
          "ex2_approx_ftz_f32", SIMPREC_KERNEL_FUNCTION, 0,
          "the attention kernels' exp2: ex2.approx.ftz.f32 (MUFU.EX2)", nullptr, run_ex2);
      k.operand_count = 2;
      k.operands = operand_lists.back().data();
      k.attribute_count = 2;
      k.attributes = attribute_lists.back().data();
      kernels.push_back(k);
    }
    for (const SimprecKernel& k : kernels) kernel_pointers.push_back(&k);
    plugin = plugin_kit::describe_plugin(
        "flash_gpu", "1.0.0",
        "FlashAttention-2 forward and backward on H100 tensor cores (mma.sync), and the forward on "
        "wgmma and TMA, bit-exact with the cuda-fa2 emulation preset",
        kernel_pointers.data(), kernel_pointers.size());
  }
};

}  // namespace
}  // namespace simprec::flash_gpu

SIMPREC_PLUGIN_EXPORT SimprecStatus simprec_plugin_entry(SimprecEntryArgs* args) {
  return simprec::plugin_kit::serve_entry<simprec::flash_gpu::Tables>(args, "flash_gpu");
}
