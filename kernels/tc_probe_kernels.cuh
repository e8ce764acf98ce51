// Probe kernels: each runs one tensor-core instruction (or one element-wise instruction) per
// tile on operands given as encodings and stores the raw bits the hardware produced.
//
// Operand layout in global memory, per tile: A (M x K row-major), B (K x N row-major), C and D
// (M x N row-major), 8/16-bit elements in uint8/uint16 arrays, fp32 C/D as uint32 bit patterns,
// fp16 C/D as uint16. Fragment layouts follow the PTX ISA ("Matrix fragments for mma.m16n8k16",
// "... mma.m16n8k32", "Register fragments and shared memory matrix layouts" for wgmma).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace simprec::kernels {

enum class ProbeOp : int {
  kMmaBf16F32 = 0,
  kMmaFp16F32,
  kMmaFp16F16,
  kMmaE4m3F32,
  kMmaE5m2F32,
  kMmaE4m3F16,
  kWgmmaBf16F32,
  kWgmmaFp16F32,
  kWgmmaFp16F16,
  kWgmmaE4m3F32,
  kWgmmaE5m2F32,
  kWgmmaE4m3F16,
};

// D = A*B + C for `batch` independent problems, each A (m x k), B (k x n), C and D (m x n),
// row-major and packed one after another. m must be a multiple of 16 (mma) or 64 (wgmma), n of
// 8, k of the instruction's K; longer K chains instructions, D of one being C of the next, as
// a GEMM main loop does.
struct GemmArgs {
  const void* a;  // uint16 (bf16/fp16 bits) or uint8 (fp8 bits)
  const void* b;
  const void* c;  // uint32 (fp32 bits) or uint16 (fp16 bits)
  void* d;        // like c
  int batch, m, n, k;
  uint32_t lbo, sbo;  // wgmma shared-memory descriptor strides (bytes)
};

// ---------------------------------------------------------------- fragments

__device__ inline uint32_t pack16(uint16_t lo, uint16_t hi) {
  return uint32_t(lo) | (uint32_t(hi) << 16);
}
__device__ inline uint32_t pack8(const uint8_t* p0, int stride) {
  return uint32_t(p0[0]) | (uint32_t(p0[stride]) << 8) | (uint32_t(p0[2 * stride]) << 16) |
         (uint32_t(p0[3 * stride]) << 24);
}

// A fragment (16 rows from row0, 16 columns from col0) of a 16-bit row-major A.
__device__ inline void load_a16(const uint16_t* a, int lda, int row0, int col0, uint32_t r[4]) {
  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  for (int q = 0; q < 4; ++q) {
    const int row = row0 + g + 8 * (q & 1), col = col0 + 2 * t + 8 * (q >> 1);
    r[q] = pack16(a[row * lda + col], a[row * lda + col + 1]);
  }
}
// B fragment (16 rows from k0, 8 columns from col0) of a 16-bit row-major B.
__device__ inline void load_b16(const uint16_t* b, int ldb, int k0, int col0, uint32_t r[2]) {
  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  for (int q = 0; q < 2; ++q) {
    const int k = k0 + 2 * t + 8 * q;
    r[q] = pack16(b[k * ldb + col0 + g], b[(k + 1) * ldb + col0 + g]);
  }
}
__device__ inline void load_a8(const uint8_t* a, int lda, int row0, int col0, uint32_t r[4]) {
  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  for (int q = 0; q < 4; ++q) {
    const int row = row0 + g + 8 * (q & 1), col = col0 + 4 * t + 16 * (q >> 1);
    r[q] = pack8(a + row * lda + col, 1);
  }
}
__device__ inline void load_b8(const uint8_t* b, int ldb, int k0, int col0, uint32_t r[2]) {
  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  for (int q = 0; q < 2; ++q) r[q] = pack8(b + (k0 + 4 * t + 16 * q) * ldb + col0 + g, ldb);
}
// C/D fragments: 16 rows from row0, 8 columns from col0.
__device__ inline void load_c32(const uint32_t* c, int ldc, int row0, int col0, float r[4]) {
  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  for (int q = 0; q < 4; ++q)
    r[q] = __uint_as_float(c[(row0 + g + 8 * (q >> 1)) * ldc + col0 + 2 * t + (q & 1)]);
}
__device__ inline void store_d32(uint32_t* d, int ldc, int row0, int col0, const float r[4]) {
  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  for (int q = 0; q < 4; ++q)
    d[(row0 + g + 8 * (q >> 1)) * ldc + col0 + 2 * t + (q & 1)] = __float_as_uint(r[q]);
}
__device__ inline void load_c16(const uint16_t* c, int ldc, int row0, int col0, uint32_t r[2]) {
  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  for (int q = 0; q < 2; ++q) {
    const int row = row0 + g + 8 * q;
    r[q] = pack16(c[row * ldc + col0 + 2 * t], c[row * ldc + col0 + 2 * t + 1]);
  }
}
__device__ inline void store_d16(uint16_t* d, int ldc, int row0, int col0, const uint32_t r[2]) {
  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  for (int q = 0; q < 2; ++q) {
    const int row = row0 + g + 8 * q;
    d[row * ldc + col0 + 2 * t] = uint16_t(r[q] & 0xffff);
    d[row * ldc + col0 + 2 * t + 1] = uint16_t(r[q] >> 16);
  }
}

__host__ __device__ constexpr bool is_16bit_input(ProbeOp op) {
  return op == ProbeOp::kMmaBf16F32 || op == ProbeOp::kMmaFp16F32 || op == ProbeOp::kMmaFp16F16 ||
         op == ProbeOp::kWgmmaBf16F32 || op == ProbeOp::kWgmmaFp16F32 ||
         op == ProbeOp::kWgmmaFp16F16;
}
__host__ __device__ constexpr bool is_fp16_accumulator(ProbeOp op) {
  return op == ProbeOp::kMmaFp16F16 || op == ProbeOp::kMmaE4m3F16 || op == ProbeOp::kWgmmaFp16F16 ||
         op == ProbeOp::kWgmmaE4m3F16;
}
__host__ __device__ constexpr int instruction_k(ProbeOp op) {
  return is_16bit_input(op) ? 16 : 32;
}

// ---------------------------------------------------------------- mma.sync (one warp per 16x8
// tile)

template <ProbeOp kOp>
__device__ inline void mma_step(const uint32_t a[4], const uint32_t b[2], float d[4]) {
#define SIMPREC_MMA_F32(SHAPE, TYPES)                           \
  asm volatile("mma.sync.aligned." SHAPE ".row.col.f32." TYPES  \
               ".f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "            \
               "{%8,%9}, {%0,%1,%2,%3};\n"                      \
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]))
  if constexpr (kOp == ProbeOp::kMmaBf16F32) SIMPREC_MMA_F32("m16n8k16", "bf16.bf16");
  if constexpr (kOp == ProbeOp::kMmaFp16F32) SIMPREC_MMA_F32("m16n8k16", "f16.f16");
  if constexpr (kOp == ProbeOp::kMmaE4m3F32) SIMPREC_MMA_F32("m16n8k32", "e4m3.e4m3");
  if constexpr (kOp == ProbeOp::kMmaE5m2F32) SIMPREC_MMA_F32("m16n8k32", "e5m2.e5m2");
#undef SIMPREC_MMA_F32
}
template <ProbeOp kOp>
__device__ inline void mma_step16(const uint32_t a[4], const uint32_t b[2], uint32_t d[2]) {
  if constexpr (kOp == ProbeOp::kMmaFp16F16) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, "
        "{%0,%1};\n"
        : "+r"(d[0]), "+r"(d[1])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, "
        "{%0,%1};\n"
        : "+r"(d[0]), "+r"(d[1])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
}

template <ProbeOp kOp>
__global__ void mma_gemm_kernel(GemmArgs args) {
  constexpr int kK = instruction_k(kOp);
  const int n_tiles = args.n / 8, tiles_per_batch = (args.m / 16) * n_tiles;
  const int tiles = args.batch * tiles_per_batch;
  const int warps = gridDim.x * (blockDim.x / 32);
  for (int tile = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32; tile < tiles; tile += warps) {
    const int batch = tile / tiles_per_batch, r = tile % tiles_per_batch;
    const int row0 = (r / n_tiles) * 16, col0 = (r % n_tiles) * 8;
    const size_t a_off = size_t(batch) * args.m * args.k, b_off = size_t(batch) * args.k * args.n;
    const size_t c_off = size_t(batch) * args.m * args.n;
    uint32_t a[4], b[2];
    auto load = [&](int k0) {
      if constexpr (is_16bit_input(kOp)) {
        load_a16(static_cast<const uint16_t*>(args.a) + a_off, args.k, row0, k0, a);
        load_b16(static_cast<const uint16_t*>(args.b) + b_off, args.n, k0, col0, b);
      } else {
        load_a8(static_cast<const uint8_t*>(args.a) + a_off, args.k, row0, k0, a);
        load_b8(static_cast<const uint8_t*>(args.b) + b_off, args.n, k0, col0, b);
      }
    };
    if constexpr (is_fp16_accumulator(kOp)) {
      uint32_t d[2];
      load_c16(static_cast<const uint16_t*>(args.c) + c_off, args.n, row0, col0, d);
      for (int k0 = 0; k0 < args.k; k0 += kK) {
        load(k0);
        mma_step16<kOp>(a, b, d);
      }
      store_d16(static_cast<uint16_t*>(args.d) + c_off, args.n, row0, col0, d);
    } else {
      float d[4];
      load_c32(static_cast<const uint32_t*>(args.c) + c_off, args.n, row0, col0, d);
      for (int k0 = 0; k0 < args.k; k0 += kK) {
        load(k0);
        mma_step<kOp>(a, b, d);
      }
      store_d32(static_cast<uint32_t*>(args.d) + c_off, args.n, row0, col0, d);
    }
  }
}

// ---------------------------------------------------------------- wgmma (one warpgroup per 64x8
// tile) m64n8k16 (16-bit inputs) or m64n8k32 (fp8): A from registers (warp w holds rows 16w..16w+15
// in the mma.m16n8k16/k32 A layout), B from shared memory without swizzle, K-major: two core
// matrices of 8 rows (n) x 16 bytes (k), the second `lbo` bytes after the first.

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define SIMPREC_HAVE_WGMMA 1
#endif

__device__ inline uint64_t smem_descriptor(const void* smem, uint32_t lbo, uint32_t sbo) {
  const auto addr = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  return uint64_t((addr & 0x3FFFF) >> 4) | (uint64_t(lbo >> 4) << 16) | (uint64_t(sbo >> 4) << 32);
}

template <ProbeOp kOp>
__device__ inline void wgmma_step(const uint32_t a[4], uint64_t desc, float d[4]) {
#if defined(SIMPREC_HAVE_WGMMA)
#define SIMPREC_WGMMA_F32(SHAPE, TYPES, TAIL)             \
  asm volatile(                                           \
      "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"          \
      "wgmma.mma_async.sync.aligned." SHAPE ".f32." TYPES \
      " {%0,%1,%2,%3}, {%4,%5,%6,%7}, "                   \
      "%8, p, 1, 1" TAIL ";\n}\n"                         \
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])    \
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc))
  if constexpr (kOp == ProbeOp::kWgmmaBf16F32) SIMPREC_WGMMA_F32("m64n8k16", "bf16.bf16", ", 0");
  if constexpr (kOp == ProbeOp::kWgmmaFp16F32) SIMPREC_WGMMA_F32("m64n8k16", "f16.f16", ", 0");
  if constexpr (kOp == ProbeOp::kWgmmaE4m3F32) SIMPREC_WGMMA_F32("m64n8k32", "e4m3.e4m3", "");
  if constexpr (kOp == ProbeOp::kWgmmaE5m2F32) SIMPREC_WGMMA_F32("m64n8k32", "e5m2.e5m2", "");
#undef SIMPREC_WGMMA_F32
#endif
}
template <ProbeOp kOp>
__device__ inline void wgmma_step16(const uint32_t a[4], uint64_t desc, uint32_t d[2]) {
#if defined(SIMPREC_HAVE_WGMMA)
  if constexpr (kOp == ProbeOp::kWgmmaFp16F16) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n8k16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, %6, p, 1, 1, "
        "0;\n}\n"
        : "+r"(d[0]), "+r"(d[1])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc));
  } else {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n8k32.f16.e4m3.e4m3 {%0,%1}, {%2,%3,%4,%5}, %6, p, 1, "
        "1;\n}\n"
        : "+r"(d[0]), "+r"(d[1])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc));
  }
#endif
}

template <ProbeOp kOp>
__global__ void wgmma_gemm_kernel(GemmArgs args) {
#if defined(SIMPREC_HAVE_WGMMA)
  __shared__ alignas(256) uint8_t b_smem[512];
  constexpr int kK = instruction_k(kOp);
  const int warp = threadIdx.x / 32;
  const int n_tiles = args.n / 8, tiles_per_batch = (args.m / 64) * n_tiles;
  const int tiles = args.batch * tiles_per_batch;
  for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int batch = tile / tiles_per_batch, r = tile % tiles_per_batch;
    const int row0 = (r / n_tiles) * 64 + 16 * warp, col0 = (r % n_tiles) * 8;
    const size_t a_off = size_t(batch) * args.m * args.k, b_off = size_t(batch) * args.k * args.n;
    const size_t c_off = size_t(batch) * args.m * args.n;
    float d32[4];
    uint32_t d16[2];
    if constexpr (is_fp16_accumulator(kOp)) {
      load_c16(static_cast<const uint16_t*>(args.c) + c_off, args.n, row0, col0, d16);
    } else {
      load_c32(static_cast<const uint32_t*>(args.c) + c_off, args.n, row0, col0, d32);
    }
    for (int k0 = 0; k0 < args.k; k0 += kK) {
      // B (kK x 8 from (k0, col0)) into K-major core matrices.
      for (int idx = threadIdx.x; idx < kK * 8; idx += blockDim.x) {
        const int k = idx / 8, n = idx % 8;
        if constexpr (is_16bit_input(kOp)) {
          const uint16_t v =
              static_cast<const uint16_t*>(args.b)[b_off + size_t(k0 + k) * args.n + col0 + n];
          *reinterpret_cast<uint16_t*>(b_smem + (k / 8) * args.lbo + n * 16 + (k % 8) * 2) = v;
        } else {
          const uint8_t v =
              static_cast<const uint8_t*>(args.b)[b_off + size_t(k0 + k) * args.n + col0 + n];
          b_smem[(k / 16) * args.lbo + n * 16 + (k % 16)] = v;
        }
      }
      asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
      __syncthreads();
      uint32_t a[4];
      if constexpr (is_16bit_input(kOp)) {
        load_a16(static_cast<const uint16_t*>(args.a) + a_off, args.k, row0, k0, a);
      } else {
        load_a8(static_cast<const uint8_t*>(args.a) + a_off, args.k, row0, k0, a);
      }
      const uint64_t desc = smem_descriptor(b_smem, args.lbo, args.sbo);
      asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
      if constexpr (is_fp16_accumulator(kOp)) {
        wgmma_step16<kOp>(a, desc, d16);
      } else {
        wgmma_step<kOp>(a, desc, d32);
      }
      asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
      asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
      __syncthreads();  // the next step overwrites b_smem
    }
    if constexpr (is_fp16_accumulator(kOp)) {
      store_d16(static_cast<uint16_t*>(args.d) + c_off, args.n, row0, col0, d16);
    } else {
      store_d32(static_cast<uint32_t*>(args.d) + c_off, args.n, row0, col0, d32);
    }
  }
#endif
}

// ---------------------------------------------------------------- element-wise instructions

enum class ElementOp : int { kEx2Approx = 0, kEx2ApproxFtz, kCvtBf16x2, kCvtE4m3x2, kCvtE5m2x2 };

// out[i] = op(in[i]) as raw bits (fp32 results as uint32; 16/8-bit results zero-extended).
template <ElementOp kOp>
__global__ void elementwise_probe_kernel(const uint32_t* in, uint32_t* out, uint64_t count) {
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < count;
       i += uint64_t(gridDim.x) * blockDim.x) {
    const float x = __uint_as_float(in[i]);
    out[i] = 0;
    if constexpr (kOp == ElementOp::kEx2Approx) {
      float y;
      asm("ex2.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
      out[i] = __float_as_uint(y);
    } else if constexpr (kOp == ElementOp::kEx2ApproxFtz) {
      float y;
      asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
      out[i] = __float_as_uint(y);
    } else if constexpr (kOp == ElementOp::kCvtBf16x2) {
      uint32_t y;
      asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(y) : "f"(x), "f"(x));
      out[i] = y & 0xffff;
    } else if constexpr (kOp == ElementOp::kCvtE4m3x2) {
      uint16_t y;
      asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(y) : "f"(x), "f"(x));
      out[i] = y & 0xff;
    } else {
      uint16_t y;
      asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(y) : "f"(x), "f"(x));
      out[i] = y & 0xff;
    }
  }
}

// The same instruction over every fp32 bit pattern [first, first + count), compared on the device
// with a reference (the host's copy of the same function): counts mismatches and keeps the first
// few. Used for the exhaustive conversion checks without moving 16 GiB of outputs.
template <ElementOp kOp, class Reference>
__global__ void exhaustive_compare_kernel(uint64_t first, uint64_t count, Reference reference,
                                          unsigned long long* mismatches, uint32_t* first_bad,
                                          int max_bad) {
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < count;
       i += uint64_t(gridDim.x) * blockDim.x) {
    const auto bits = static_cast<uint32_t>(first + i);
    const float x = __uint_as_float(bits);
    uint32_t y;
    if constexpr (kOp == ElementOp::kCvtBf16x2) {
      uint32_t r;
      asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(x), "f"(x));
      y = r & 0xffff;
    } else if constexpr (kOp == ElementOp::kCvtE4m3x2) {
      uint16_t r;
      asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(r) : "f"(x), "f"(x));
      y = r & 0xff;
    } else {
      uint16_t r;
      asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(r) : "f"(x), "f"(x));
      y = r & 0xff;
    }
    if (y != reference(bits)) {
      const unsigned long long n = atomicAdd(mismatches, 1ull);
      if (n < static_cast<unsigned long long>(max_bad)) {
        first_bad[2 * n] = bits;
        first_bad[2 * n + 1] = y;
      }
    }
  }
}

// ---------------------------------------------------------------- host-side launchers

inline cudaError_t launch_gemm(ProbeOp op, const GemmArgs& args) {
  const bool wg = op >= ProbeOp::kWgmmaBf16F32;
  const long long tiles =
      static_cast<long long>(args.batch) * (args.m / (wg ? 64 : 16)) * (args.n / 8);
  if (tiles <= 0) return cudaSuccess;
  const int mma_blocks = static_cast<int>(tiles / 4 + 1 < (1 << 20) ? tiles / 4 + 1 : (1 << 20));
  const int wg_blocks = static_cast<int>(tiles < 4096 ? tiles : 4096);
  switch (op) {
#define MMA_CASE(OP)                                         \
  case ProbeOp::OP:                                          \
    mma_gemm_kernel<ProbeOp::OP><<<mma_blocks, 128>>>(args); \
    break;
#define WG_CASE(OP)                                           \
  case ProbeOp::OP:                                           \
    wgmma_gemm_kernel<ProbeOp::OP><<<wg_blocks, 128>>>(args); \
    break;
    MMA_CASE(kMmaBf16F32)
    MMA_CASE(kMmaFp16F32) MMA_CASE(kMmaFp16F16) MMA_CASE(kMmaE4m3F32) MMA_CASE(kMmaE5m2F32)
        MMA_CASE(kMmaE4m3F16) WG_CASE(kWgmmaBf16F32) WG_CASE(kWgmmaFp16F32) WG_CASE(kWgmmaFp16F16)
            WG_CASE(kWgmmaE4m3F32) WG_CASE(kWgmmaE5m2F32) WG_CASE(kWgmmaE4m3F16)
#undef MMA_CASE
#undef WG_CASE
  }
  const cudaError_t launched = cudaGetLastError();
  return launched != cudaSuccess ? launched : cudaDeviceSynchronize();
}

inline cudaError_t launch_elementwise(ElementOp op, const uint32_t* in, uint32_t* out,
                                      uint64_t count) {
  switch (op) {
    case ElementOp::kEx2Approx:
      elementwise_probe_kernel<ElementOp::kEx2Approx><<<1024, 256>>>(in, out, count);
      break;
    case ElementOp::kEx2ApproxFtz:
      elementwise_probe_kernel<ElementOp::kEx2ApproxFtz><<<1024, 256>>>(in, out, count);
      break;
    case ElementOp::kCvtBf16x2:
      elementwise_probe_kernel<ElementOp::kCvtBf16x2><<<1024, 256>>>(in, out, count);
      break;
    case ElementOp::kCvtE4m3x2:
      elementwise_probe_kernel<ElementOp::kCvtE4m3x2><<<1024, 256>>>(in, out, count);
      break;
    case ElementOp::kCvtE5m2x2:
      elementwise_probe_kernel<ElementOp::kCvtE5m2x2><<<1024, 256>>>(in, out, count);
      break;
  }
  const cudaError_t launched = cudaGetLastError();
  return launched != cudaSuccess ? launched : cudaDeviceSynchronize();
}

}  // namespace simprec::kernels
