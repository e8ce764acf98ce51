// FlashAttention forward on Hopper's asynchronous tensor-core instruction (wgmma, sm_90a), with
// the same arithmetic as flash_forward.cuh (the cuda-fa2 steps; wgmma's k16 step rounds like
// mma.sync's, docs/tensor_cores.md), so that its outputs are the same bits. One warpgroup (four
// warps) computes 64 query rows; each warp owns 16 of them in mma.sync's accumulator layout.
// Per key block: the next block's scores and this block's P V are issued as asynchronous wgmma
// groups, and the next block's softmax runs while P V is in flight (FlashAttention-3's
// intra-warpgroup overlap), so the softmax and its mitigations run beside tensor-core work.
// Operands in shared memory use the no-swizzle core-matrix layout (8 rows x 16 bytes each).
//
// A prototype, timed by flash_bench but not offered by the plugin: on the H100 its outputs equal
// the 64x64 kernel's bit for bit (flash_bench --digest) and beta-rowmax and SR cost it under 1%,
// but it runs at 147 TFLOP/s against 318 for the 128x64 mma.sync kernel (docs/gpu_kernels.md).
#pragma once

#include <cmath>
#include <type_traits>

#include "kernels/flash/flash_common.cuh"
#include "kernels/flash/flash_params.hpp"

namespace simprec::flash::wgmma {

// kRows rows of kRowBytes bytes as 8 x 16-byte core matrices: chunk c of row r at
// ((r / 8) * kChunks + c) * 128 + (r % 8) * 16.
template <int kRows, int kRowBytes>
struct CoreTile {
  static constexpr int kChunks = kRowBytes / 16;
  static constexpr int kBytes = kRows * kRowBytes;
  // cp.async by kThreads threads. Thread i copies chunk i / 8 of row i % 8 in each band of eight
  // rows (so that eight consecutive threads fill one core matrix: conflict-free shared-memory
  // writes), the bands at constant offsets from one source and one destination address per thread.
  template <int kThreads>
  __device__ static void load(uint32_t smem, const char* global, int64_t stride, int thread) {
    static_assert(kThreads == 8 * kChunks, "one band of eight rows per round of copies");
    const char* src = global + (thread % 8) * stride + (thread / 8) * 16;
    const uint32_t dst = smem + (thread / 8) * 128 + (thread % 8) * 16;
#pragma unroll
    for (int band = 0; band < kRows / 8; ++band)
      cp_async_16(dst + band * kChunks * 128, src + band * 8 * stride);
  }
};

// Shared-memory matrix descriptor without swizzle: start, leading and stride byte offsets.
__device__ __forceinline__ uint64_t descriptor(uint32_t address, uint32_t lbo, uint32_t sbo) {
  return uint64_t((address & 0x3FFFF) >> 4) | (uint64_t(lbo >> 4) << 16) |
         (uint64_t(sbo >> 4) << 32);
}
__device__ __forceinline__ void fence() {
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}
__device__ __forceinline__ void commit() {
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}
template <int kPending>
__device__ __forceinline__ void wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(kPending) : "memory");
}
// Makes the generic proxy's shared-memory writes (cp.async) visible to wgmma's reads.
__device__ __forceinline__ void fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}
// Ties registers to this point of the program: the compiler keeps volatile asm in order, so
// what is pinned before a fence is computed before it, and an accumulator pinned after a wait
// is not read before it.
template <int kN>
__device__ __forceinline__ void pin(float (&r)[kN][4]) {
#pragma unroll
  for (int i = 0; i < kN; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) asm volatile("" : "+f"(r[i][j])::"memory");
}
template <int kN>
__device__ __forceinline__ void pin(uint64_t (&r)[kN]) {
#pragma unroll
  for (int i = 0; i < kN; ++i) asm volatile("" : "+l"(r[i])::"memory");
}
template <int kN>
__device__ __forceinline__ void pin(uint32_t (&r)[kN]) {
#pragma unroll
  for (int i = 0; i < kN; ++i) asm volatile("" : "+r"(r[i])::"memory");
}

// S (64 x 64) += Q K^T step, both from shared memory (K-major); O (64 x 128) += P V step, P from
// registers (mma.sync's A layout), V from shared memory (MN-major, transposed by the unit).
// TYPE: the PTX element type (bf16 or f16). The accumulators are operands %0.., so the
// operand lists are written out once per shape.
#define SIMPREC_FLASH_WGMMA(TAG, TYPE)                                                             \
  __device__ __forceinline__ void wgmma_s(TAG, float(&d)[8][4], uint64_t a, uint64_t b) {          \
    asm volatile(                                                                                  \
        "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"                                                 \
        "wgmma.mma_async.sync.aligned.m64n64k16.f32." TYPE "." TYPE                                \
        " "                                                                                        \
        "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%" \
        "24,%25,%26,%27,%28,%29,%30,%31}, %32, %33, p, 1, 1, 0, 0;\n}\n"                           \
        : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]),               \
          "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]),               \
          "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]),               \
          "+f"(d[3][3]), "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]),               \
          "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]), "+f"(d[6][0]),               \
          "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), "+f"(d[7][0]), "+f"(d[7][1]),               \
          "+f"(d[7][2]), "+f"(d[7][3])                                                             \
        : "l"(a), "l"(b));                                                                         \
  }                                                                                                \
  __device__ __forceinline__ void wgmma_pv(TAG, float(&d)[16][4], const uint32_t(&a)[4],           \
                                           uint64_t b) {                                           \
    asm volatile(                                                                                  \
        "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"                                                 \
        "wgmma.mma_async.sync.aligned.m64n128k16.f32." TYPE "." TYPE                               \
        " "                                                                                        \
        "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%" \
        "24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%" \
        "46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, "                \
        "{%64,%65,%66,%67}, %68, p, 1, 1, 1;\n}\n"                                                 \
        : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]),               \
          "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]),               \
          "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]),               \
          "+f"(d[3][3]), "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]),               \
          "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]), "+f"(d[6][0]),               \
          "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), "+f"(d[7][0]), "+f"(d[7][1]),               \
          "+f"(d[7][2]), "+f"(d[7][3]), "+f"(d[8][0]), "+f"(d[8][1]), "+f"(d[8][2]),               \
          "+f"(d[8][3]), "+f"(d[9][0]), "+f"(d[9][1]), "+f"(d[9][2]), "+f"(d[9][3]),               \
          "+f"(d[10][0]), "+f"(d[10][1]), "+f"(d[10][2]), "+f"(d[10][3]), "+f"(d[11][0]),          \
          "+f"(d[11][1]), "+f"(d[11][2]), "+f"(d[11][3]), "+f"(d[12][0]), "+f"(d[12][1]),          \
          "+f"(d[12][2]), "+f"(d[12][3]), "+f"(d[13][0]), "+f"(d[13][1]), "+f"(d[13][2]),          \
          "+f"(d[13][3]), "+f"(d[14][0]), "+f"(d[14][1]), "+f"(d[14][2]), "+f"(d[14][3]),          \
          "+f"(d[15][0]), "+f"(d[15][1]), "+f"(d[15][2]), "+f"(d[15][3])                           \
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));                                     \
  }
SIMPREC_FLASH_WGMMA(Bf16Tag, "bf16")
SIMPREC_FLASH_WGMMA(Fp16Tag, "f16")
#undef SIMPREC_FLASH_WGMMA

inline constexpr int kStages = 3;  // K and V buffers: copies run two blocks ahead

template <class Tag, int kHeadDim, bool kBeta, int kSrBits>
__global__ void __launch_bounds__(128) flash_forward_wgmma_kernel(const ForwardParams p) {
  constexpr int kBlockM = 64, kBlockN = 64;
  constexpr int kNTiles = kBlockN / 8, kDTiles = kHeadDim / 8;
  static_assert(kHeadDim == 128, "d = 128 (the P V instruction is m64n128)");
  constexpr int kRowBytes = kHeadDim * 2;
  using QTile = CoreTile<kBlockM, kRowBytes>;
  using KTile = CoreTile<kBlockN, kRowBytes>;
  using VTile = CoreTile<kBlockN, kRowBytes>;
  constexpr uint32_t kGroupBytes = 8 * kRowBytes;  // one 8-row band of core matrices

  extern __shared__ __align__(128) char smem[];
  const uint32_t sq = smem_address(smem);
  const uint32_t sk0 = sq + QTile::kBytes;
  const uint32_t sv0 = sk0 + kStages * KTile::kBytes;

  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int g = lane / 4, t = lane % 4;
  const int m_block = blockIdx.x, problem = blockIdx.y;
  const char* q_global =
      row_address(p.q, problem, p.seqlen_q, static_cast<int64_t>(m_block) * kBlockM, kRowBytes);
  const char* k_global = row_address(p.k, problem, p.seqlen_k, 0, kRowBytes);
  const char* v_global = row_address(p.v, problem, p.seqlen_k, 0, kRowBytes);
  int n_blocks = p.seqlen_k / kBlockN;
  const int last_row = min(p.seqlen_q, (m_block + 1) * kBlockM) - 1;
  if (p.causal) n_blocks = min(n_blocks, last_row / kBlockN + 1);

  const auto load_k = [&](int j, int buf) {
    KTile::template load<128>(sk0 + buf * KTile::kBytes,
                              k_global + static_cast<int64_t>(j) * kBlockN * kRowBytes, kRowBytes,
                              tid);
  };
  const auto load_v = [&](int j, int buf) {
    VTile::template load<128>(sv0 + buf * VTile::kBytes,
                              v_global + static_cast<int64_t>(j) * kBlockN * kRowBytes, kRowBytes,
                              tid);
  };
  QTile::template load<128>(sq, q_global, kRowBytes, tid);
  // Copy groups: {Q, K_0}, {K_1, V_0}, {K_2, V_1}, and step s commits {K_s+3, V_s+2}, so that
  // at step jb all but the newest group hold what it needs (K_jb+1, V_jb).
  load_k(0, 0);
  cp_async_commit();
  if (n_blocks > 1) load_k(1, 1);
  load_v(0, 0);
  cp_async_commit();
  if (n_blocks > 2) load_k(2, 2);
  if (n_blocks > 1) load_v(1, 1);
  cp_async_commit();

  float acc_o[kDTiles][4];
  RunningMax<kBeta> run[2];
  float l_part[2] = {0.f, 0.f};
#pragma unroll
  for (int n = 0; n < kDTiles; ++n) acc_o[n][0] = acc_o[n][1] = acc_o[n][2] = acc_o[n][3] = 0.f;

  // Descriptors: the start address (bytes / 16) is the low field, so a k step adds to it.
  const uint64_t q_desc = descriptor(sq, 128, kGroupBytes);
  // S = Q K^T for the K block at sk: k16 steps over d, from +0 (as the mma.sync kernels).
  const auto issue_scores = [&](float(&s)[kNTiles][4], uint32_t sk) {
    // Every input of the group is computed before the fence: an instruction that defines a
    // wgmma's input between the group's instructions makes the compiler serialize them.
    uint64_t a[kHeadDim / 16], b[kHeadDim / 16];
    const uint64_t k_desc = descriptor(sk, 128, kGroupBytes);
#pragma unroll
    for (int kk = 0; kk < kHeadDim / 16; ++kk) {
      // A: 64 rows of Q, chunks 2kk, 2kk+1; B: 64 keys of K, the same chunks (K-major: the
      // leading offset steps along k, the stride offset along rows).
      a[kk] = q_desc + kk * (256 >> 4);
      b[kk] = k_desc + kk * (256 >> 4);
    }
#pragma unroll
    for (int n = 0; n < kNTiles; ++n) s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.f;
    pin(a);
    pin(b);
    pin(s);
    fence();
#pragma unroll
    for (int kk = 0; kk < kHeadDim / 16; ++kk) wgmma_s(Tag{}, s, a[kk], b[kk]);
    commit();
  };
  // O += P V for the V block at sv: k16 steps over the block's keys. Its inputs are formed
  // (PvInputs) before any wgmma of the step is issued: one defined inside the pipeline stage of
  // the scores' group would serialize the products as well.
  struct PvInputs {
    uint32_t a[kBlockN / 16][4];
    uint64_t b[kBlockN / 16];
  };
  const auto pv_inputs = [&](const uint32_t(&pa)[kNTiles][2], uint32_t sv) {
    PvInputs in;
    const uint64_t v_desc = descriptor(sv, kGroupBytes, 128);
#pragma unroll
    for (int kk = 0; kk < kBlockN / 16; ++kk) {
      in.a[kk][0] = pa[2 * kk][0], in.a[kk][1] = pa[2 * kk][1];
      in.a[kk][2] = pa[2 * kk + 1][0], in.a[kk][3] = pa[2 * kk + 1][1];
      // B = V (keys x d) stored MN-major: a core matrix is 8 keys x 8 d; along d (N) they are
      // 128 bytes apart (stride offset), along keys (K) one 8-row band apart (leading offset).
      in.b[kk] = v_desc + kk * (2 * kGroupBytes >> 4);
    }
#pragma unroll
    for (int kk = 0; kk < kBlockN / 16; ++kk) pin(in.a[kk]);
    pin(in.b);
    return in;
  };
  const auto issue_pv = [&](PvInputs& in) {
    pin(acc_o);
    fence();
#pragma unroll
    for (int kk = 0; kk < kBlockN / 16; ++kk) wgmma_pv(Tag{}, acc_o, in.a[kk], in.b[kk]);
    commit();
  };

  // ---- softmax of block jb: scores s -> P in pa, the rows' rescale factors in alpha ----
  // P stays in s (fp32) here: it is cast into the registers of P V's operand (pack) only after
  // the P V in flight has finished, since a register a wgmma in flight reads must not be written.
  const auto softmax_block = [&](int jb, float(&s)[kNTiles][4], float(&alpha)[2],
                                 tiled_random::Block(&bits)[2]) {
    const int col0 = jb * kBlockN;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = m_block * kBlockM + warp * 16 + g + 8 * h;
      if (p.causal) mask_causal(s, h, row, col0, t);
      const auto [shift, a] = run[h].update(row_top<kBeta>(s, h), p);
      alpha[h] = a;
      float l = __fmul_rn(l_part[h], alpha[h]);
#pragma unroll
      for (int n = 0; n < kNTiles; ++n) {
#pragma unroll
        for (int u = 0; u < 2; ++u) {
          float& x = s[n][2 * h + u];
          x = ex2(__fmaf_rn(x, p.scale_log2, -shift));
          l = __fadd_rn(l, x);
        }
      }
      if constexpr (kSrBits != 0) {
        static_assert(kSrBits == 8, "one Philox block per 16 elements of 8 bits");
        bits[h] = tiled_random::p_block(p.seed, problem, row, col0 / 64, t, 0);
      }
      l_part[h] = l;
    }
  };
  // P (fp32, in s) -> its cast, packed in pairs [tile][half] as P V's A operand.
  const auto pack = [&](const float(&s)[kNTiles][4], const tiled_random::Block(&bits)[2],
                        uint32_t(&pa)[kNTiles][2]) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
#pragma unroll
      for (int n = 0; n < kNTiles; ++n) {
        const float p0 = s[n][2 * h], p1 = s[n][2 * h + 1];
        if constexpr (kSrBits == 0) {
          pa[n][h] = pack_rn(Tag{}, p0, p1);
        } else {
          pa[n][h] = pack_sr<Tag>(p0, p1, bits[h], n);
        }
      }
    }
  };
  const auto rescale = [&](const float(&alpha)[2]) {
#pragma unroll
    for (int n = 0; n < kDTiles; ++n) {
#pragma unroll
      for (int r = 0; r < 4; ++r) acc_o[n][r] = __fmul_rn(acc_o[n][r], alpha[r / 2]);
    }
  };

  float s[kNTiles][4];
  uint32_t pa[kNTiles][2];
  float alpha[2];
  tiled_random::Block bits[2];
  cp_async_wait<2>();  // Q and K_0
  fence_proxy_async();
  __syncthreads();
  if (n_blocks > 0) {
    issue_scores(s, sk0);
    wait<0>();
    pin(s);
    softmax_block(0, s, alpha, bits);
    rescale(alpha);
    pack(s, bits, pa);
  }
  // One block: the next block's scores and this block's P V issued, the next block's softmax
  // while P V runs. has_next is fixed at compile time (the last block is peeled off), so that no
  // wgmma is issued under a condition the compiler cannot follow.
  const auto step = [&](int jb, auto has_next) {
    constexpr bool kHasNext = decltype(has_next)::value;
    const int buf = jb % kStages, next = (jb + 1) % kStages, prev = (jb + 2) % kStages;
    cp_async_wait<1>();  // V_jb, K_jb+1
    fence_proxy_async();
    __syncthreads();  // and every warp is done with K_jb's and V_jb-1's buffers
    PvInputs in = pv_inputs(pa, sv0 + buf * VTile::kBytes);
    if constexpr (kHasNext) issue_scores(s, sk0 + next * KTile::kBytes);
    issue_pv(in);
    // The copies after the products are issued: the fence before a wgmma waits until earlier
    // instructions have read their registers, copies included.
    if (jb + 3 < n_blocks) load_k(jb + 3, buf);   // where K_jb was
    if (jb + 2 < n_blocks) load_v(jb + 2, prev);  // where V_jb-1 was
    cp_async_commit();
    if constexpr (kHasNext) {
      wait<1>();  // the scores; P V still in flight
      pin(s);
      softmax_block(jb + 1, s, alpha, bits);
    }
    wait<0>();
    pin(acc_o);
    if constexpr (kHasNext) {
      rescale(alpha);
      pack(s, bits, pa);
    }
  };
  for (int jb = 0; jb + 1 < n_blocks; ++jb) step(jb, std::true_type{});
  if (n_blocks > 0) step(n_blocks - 1, std::false_type{});

    // ---- normalise and write ----
#pragma unroll
  for (int h = 0; h < 2; ++h)
    write_row<Tag>(acc_o, h, l_part[h], run[h].m, problem,
                   m_block * kBlockM + warp * 16 + g + 8 * h, t, p);
}

// Shared memory: Q, then kStages buffers of K and of V, each 64 rows of 128 16-bit elements.
inline constexpr int kWgmmaSmemBytes = (1 + 2 * kStages) * 64 * 256;

}  // namespace simprec::flash::wgmma
