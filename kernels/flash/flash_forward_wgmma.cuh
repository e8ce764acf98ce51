// FlashAttention forward on Hopper's asynchronous tensor-core instruction (wgmma, sm_90a), with
// the same arithmetic as flash_forward.cuh (the cuda-fa2 steps; wgmma's k16 step rounds like
// mma.sync's, docs/tensor_cores.md), so that its outputs are the same bits as the 64x64
// kernel's. FlashAttention-3's structure: a CTA of 128 query rows has two consumer warpgroups
// (64 rows each; each warp owns 16 rows in mma.sync's accumulator layout) and a producer
// warpgroup, one thread of which copies Q and the K and V blocks with TMA into a ring of
// shared-memory stages, 128-byte swizzled, completing on mbarriers. Per key block, a consumer
// issues the next block's scores and this block's P V as asynchronous wgmma groups and runs
// the next block's softmax while P V is in flight. (FlashAttention-3's ping-pong of the two
// groups' products through named barriers made it 5% slower here: docs/gpu_kernels.md.)
#pragma once

#include <cuda.h>

#include <cmath>
#include <type_traits>

#include "kernels/flash/flash_common.cuh"
#include "kernels/flash/flash_params.hpp"
#include "kernels/flash/tma.cuh"

namespace simprec::flash::wgmma {

// Shared-memory matrix descriptor of a 128-byte-swizzled operand: start address, leading and
// stride byte offsets (each / 16), layout type 1 (128B swizzle) in bits 62-63. Atoms of 8 rows x
// 128 bytes must start 1024-byte aligned (base offset 0).
__device__ __forceinline__ uint64_t descriptor_sw128(uint32_t address, uint32_t lbo, uint32_t sbo) {
  return uint64_t((address & 0x3FFFF) >> 4) | (uint64_t(lbo >> 4) << 16) |
         (uint64_t(sbo >> 4) << 32) | (uint64_t(1) << 62);
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
// TYPE: the PTX element type (bf16 or f16). The accumulators are operands %0..: tiles 0-7 of d
// for S, 0-15 for O, four registers each.
#define SIMPREC_ACC_TILE(n) "+f"(d[n][0]), "+f"(d[n][1]), "+f"(d[n][2]), "+f"(d[n][3])
#define SIMPREC_ACC_TILES_0_7                                                         \
  SIMPREC_ACC_TILE(0), SIMPREC_ACC_TILE(1), SIMPREC_ACC_TILE(2), SIMPREC_ACC_TILE(3), \
      SIMPREC_ACC_TILE(4), SIMPREC_ACC_TILE(5), SIMPREC_ACC_TILE(6), SIMPREC_ACC_TILE(7)
#define SIMPREC_ACC_TILES_8_15                                                          \
  SIMPREC_ACC_TILE(8), SIMPREC_ACC_TILE(9), SIMPREC_ACC_TILE(10), SIMPREC_ACC_TILE(11), \
      SIMPREC_ACC_TILE(12), SIMPREC_ACC_TILE(13), SIMPREC_ACC_TILE(14), SIMPREC_ACC_TILE(15)
#define SIMPREC_FLASH_WGMMA(TAG, TYPE)                                                             \
  __device__ __forceinline__ void wgmma_s(TAG, float(&d)[8][4], uint64_t a, uint64_t b) {          \
    asm volatile(                                                                                  \
        "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"                                                 \
        "wgmma.mma_async.sync.aligned.m64n64k16.f32." TYPE "." TYPE                                \
        " "                                                                                        \
        "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%" \
        "24,%25,%26,%27,%28,%29,%30,%31}, %32, %33, p, 1, 1, 0, 0;\n}\n"                           \
        : SIMPREC_ACC_TILES_0_7                                                                    \
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
        : SIMPREC_ACC_TILES_0_7, SIMPREC_ACC_TILES_8_15                                            \
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));                                     \
  }
SIMPREC_FLASH_WGMMA(Bf16Tag, "bf16")
SIMPREC_FLASH_WGMMA(Fp16Tag, "f16")
#undef SIMPREC_FLASH_WGMMA
#undef SIMPREC_ACC_TILES_8_15
#undef SIMPREC_ACC_TILES_0_7
#undef SIMPREC_ACC_TILE

// Shapes and shared memory of the kernel. Tiles are stored as panels of 64 columns (128 bytes,
// one TMA box wide): a panel of r rows is r x 128 bytes, swizzled in atoms of 8 rows.
struct Layout {
  static constexpr int kBlockM = 128, kBlockN = 64, kHeadDim = 128;
  static constexpr int kConsumers = 2;  // warpgroups, 64 rows each
  // A whole producer warpgroup (one thread of it copies), so that setmaxnreg can move its
  // registers to the consumers: 128 x (24 + 2 x 240) = 64,512, exactly what the CTA holds at
  // the 168 registers per thread that ptxas allows 384 threads (asking for more than the CTA
  // holds makes setmaxnreg.inc wait forever).
  static constexpr int kThreads = 128 * (kConsumers + 1);
  static constexpr int kProducerRegisters = 24, kConsumerRegisters = 240;
  static_assert(128 * (kProducerRegisters + kConsumers * kConsumerRegisters) <=
                    kThreads * (65536 / kThreads / 8 * 8),
                "setmaxnreg may only move the registers the CTA was launched with");
  static constexpr int kStages = 4;  // K and V blocks in flight
  static constexpr int kPanels = kHeadDim / 64;
  static constexpr uint32_t kQPanel = kBlockM * 128, kQBytes = kPanels * kQPanel;
  static constexpr uint32_t kKvPanel = kBlockN * 128, kKvBytes = kPanels * kKvPanel;
  static constexpr uint32_t kBarriers = 1 + 4 * kStages;  // Q full; K, V full; K, V free
  static constexpr int kSmemBytes =
      1024 /* alignment */ + kQBytes + 2 * kStages * kKvBytes + 8 * kBarriers;
};

// Addresses of the shared-memory buffers and barriers of one CTA.
struct Smem {
  uint32_t q, k0, v0, bars;
  __device__ uint32_t k(int stage) const { return k0 + stage * Layout::kKvBytes; }
  __device__ uint32_t v(int stage) const { return v0 + stage * Layout::kKvBytes; }
  __device__ uint32_t q_full() const { return bars; }
  __device__ uint32_t k_full(int s) const { return bars + 8 * (1 + s); }
  __device__ uint32_t v_full(int s) const { return bars + 8 * (1 + Layout::kStages + s); }
  __device__ uint32_t k_free(int s) const { return bars + 8 * (1 + 2 * Layout::kStages + s); }
  __device__ uint32_t v_free(int s) const { return bars + 8 * (1 + 3 * Layout::kStages + s); }
};

// The producer's copying thread: Q once, then K_j and V_j for every key block j into stage
// j % kStages, each after the consumers have freed the stage's previous block.
__device__ __forceinline__ void produce(const Smem& sm, const CUtensorMap& q_map,
                                        const CUtensorMap& k_map, const CUtensorMap& v_map,
                                        int q_row, int k_row, int n_blocks) {
  using L = Layout;
  tma::arrive_expect_bytes(sm.q_full(), L::kQBytes);
  for (int panel = 0; panel < L::kPanels; ++panel)
    tma::load_box(sm.q + panel * L::kQPanel, q_map, 64 * panel, q_row, sm.q_full());
  for (int j = 0; j < n_blocks; ++j) {
    const int stage = j % L::kStages;
    const uint32_t free_parity = (j / L::kStages + 1) & 1;  // the phase block j - kStages ended
    const int row = k_row + j * L::kBlockN;
    if (j >= L::kStages) tma::wait(sm.k_free(stage), free_parity);
    tma::arrive_expect_bytes(sm.k_full(stage), L::kKvBytes);
    for (int panel = 0; panel < L::kPanels; ++panel)
      tma::load_box(sm.k(stage) + panel * L::kKvPanel, k_map, 64 * panel, row, sm.k_full(stage));
    if (j >= L::kStages) tma::wait(sm.v_free(stage), free_parity);
    tma::arrive_expect_bytes(sm.v_full(stage), L::kKvBytes);
    for (int panel = 0; panel < L::kPanels; ++panel)
      tma::load_box(sm.v(stage) + panel * L::kKvPanel, v_map, 64 * panel, row, sm.v_full(stage));
  }
}

template <class Tag, bool kBeta, int kSrBits>
__global__ void __launch_bounds__(Layout::kThreads, 1)
    flash_forward_wgmma_kernel(const KernelForwardParams<kSrBits> p,
                               const __grid_constant__ CUtensorMap q_map,
                               const __grid_constant__ CUtensorMap k_map,
                               const __grid_constant__ CUtensorMap v_map) {
  using L = Layout;
  constexpr int kBlockN = L::kBlockN, kHeadDim = L::kHeadDim;
  constexpr int kNTiles = kBlockN / 8, kDTiles = kHeadDim / 8;

  extern __shared__ char smem[];
  Smem sm;
  sm.q = (smem_address(smem) + 1023) & ~1023u;
  sm.k0 = sm.q + L::kQBytes;
  sm.v0 = sm.k0 + L::kStages * L::kKvBytes;
  sm.bars = sm.v0 + L::kStages * L::kKvBytes;

  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int g = lane / 4, t = lane % 4;
  const int m_block = blockIdx.x, problem = blockIdx.y;
  int n_blocks = p.seqlen_k / kBlockN;
  if (p.causal)
    n_blocks = min(n_blocks, (min(p.seqlen_q, (m_block + 1) * L::kBlockM) - 1) / kBlockN + 1);

  if (tid == 0) {
    tma::barrier_init(sm.q_full(), 1);
    for (int s = 0; s < L::kStages; ++s) {
      tma::barrier_init(sm.k_full(s), 1);
      tma::barrier_init(sm.v_full(s), 1);
      tma::barrier_init(sm.k_free(s), 4 * L::kConsumers);  // one arrival per consumer warp
      tma::barrier_init(sm.v_free(s), 4 * L::kConsumers);
    }
    tma::fence_barrier_init();
  }
  __syncthreads();  // the last CTA-wide barrier: the producer leaves after its copies

  if (warp >= 4 * L::kConsumers) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(L::kProducerRegisters));
    if (warp == 4 * L::kConsumers && lane == 0) {
      tma::prefetch_map(q_map);
      tma::prefetch_map(k_map);
      tma::prefetch_map(v_map);
      produce(sm, q_map, k_map, v_map, problem * p.seqlen_q + m_block * L::kBlockM,
              problem * p.seqlen_k, n_blocks);
    }
    return;
  }

  // Without the producer's registers the mitigated instances spill (beta-rowmax with SR) and
  // SR's costs 49% instead of 31% (git show 45bcba0:docs/findings.md).
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(L::kConsumerRegisters));
  // ---- a consumer warpgroup: rows row0 .. row0 + 63 ----
  const int group = warp / 4, warp_in_group = warp % 4;
  const int row0 = m_block * L::kBlockM + group * 64;
  const auto row_of = [&](int h) { return row0 + warp_in_group * 16 + g + 8 * h; };  // half h
  // Under the causal mask the first group's rows end a block earlier: it skips the block that
  // is masked out for all of its rows, as the 64-row kernels do (no masked block in its sums).
  const int my_blocks = p.causal ? min(n_blocks, (row0 + 63) / kBlockN + 1) : n_blocks;
  // A warp frees a stage's K or V once its products that read it have completed.
  const auto release = [&](uint32_t bar) {
    if (lane == 0) tma::arrive(bar);
  };

  float acc_o[kDTiles][4];
  RunningMax<kBeta> run[2];
  float l_part[2] = {0.f, 0.f};
#pragma unroll
  for (int n = 0; n < kDTiles; ++n) acc_o[n][0] = acc_o[n][1] = acc_o[n][2] = acc_o[n][3] = 0.f;

  // Descriptors: the start address (bytes / 16) is the low field, so a step adds to it. Q (A)
  // and K (B) are K-major: a k16 step is 32 bytes into a 128-byte row, four steps per panel;
  // 8-row atoms 1024 bytes apart.
  const uint64_t q_desc = descriptor_sw128(sm.q + group * 64 * 128, 16, 1024);
  const auto k16_offset = [](int kk, uint32_t panel_bytes) {
    return ((kk / 4) * panel_bytes + (kk % 4) * 32) >> 4;
  };
  // S = Q K^T for the K block at sk: k16 steps over d, from +0 (as the mma.sync kernels).
  const auto issue_scores = [&](float(&s)[kNTiles][4], uint32_t sk) {
    // Every input of the group is computed before the fence: an instruction that defines a
    // wgmma's input between the group's instructions makes the compiler serialize them.
    uint64_t a[kHeadDim / 16], b[kHeadDim / 16];
    const uint64_t k_desc = descriptor_sw128(sk, 16, 1024);
#pragma unroll
    for (int kk = 0; kk < kHeadDim / 16; ++kk) {
      a[kk] = q_desc + k16_offset(kk, L::kQPanel);
      b[kk] = k_desc + k16_offset(kk, L::kKvPanel);
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
  // O += P V for the V block at sv: k16 steps over the block's keys. V (B) is MN-major (d
  // contiguous): the two 64-column panels are the leading offset apart, 8-key atoms the stride
  // offset; a k16 step is 16 rows (2048 bytes). Its inputs are formed (PvInputs) before any
  // wgmma of the step is issued: one defined inside the pipeline stage of the scores' group
  // would serialize the products as well.
  struct PvInputs {
    uint32_t a[kBlockN / 16][4];
    uint64_t b[kBlockN / 16];
  };
  const auto pv_inputs = [&](const uint32_t(&pa)[kNTiles][2], uint32_t sv) {
    PvInputs in;
    const uint64_t v_desc = descriptor_sw128(sv, L::kKvPanel, 1024);
#pragma unroll
    for (int kk = 0; kk < kBlockN / 16; ++kk) {
      in.a[kk][0] = pa[2 * kk][0], in.a[kk][1] = pa[2 * kk][1];
      in.a[kk][2] = pa[2 * kk + 1][0], in.a[kk][3] = pa[2 * kk + 1][1];
      in.b[kk] = v_desc + ((kk * 16 * 128) >> 4);
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

  // ---- softmax of block jb: scores s -> P in s, the rows' rescale factors in alpha ----
  // P stays in s (fp32) here: it is cast into the registers of P V's operand (pack) only after
  // the P V in flight has finished, since a register a wgmma in flight reads must not be written.
  const auto softmax_block = [&](int jb, float(&s)[kNTiles][4], float(&alpha)[2]) {
    const int col0 = jb * kBlockN;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      if (p.causal) mask_causal(s, h, row_of(h), col0, t);
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
      l_part[h] = l;
    }
  };
  // SR's random bits of block jb: one Philox block per row half. They depend on no score, but
  // drawn before the wait for the scores (pinned there) SR cost 52% instead of 33%: the draws
  // then delay the softmax that follows instead of filling its stalls. The Philox counters of
  // the thread's two rows differ between blocks only in the group (p_row, made once).
  tiled_random::PhiloxFixedCounters sr_rows[2] = {};
  if constexpr (kSrBits != 0) {
    static_assert(kSrBits == 8, "one Philox block per 16 elements of 8 bits");
#pragma unroll
    for (int h = 0; h < 2; ++h)
      sr_rows[h] = tiled_random::p_row(p.sr_keys, problem, row_of(h), t, 0);
  }
  const auto draw = [&](int jb, tiled_random::Block(&bits)[2]) {
    if constexpr (kSrBits != 0) {
#pragma unroll
      for (int h = 0; h < 2; ++h)
        bits[h] = tiled_random::p_block(sr_rows[h], jb * kBlockN / 64, p.sr_keys);
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
  const auto parity = [](int j) { return static_cast<uint32_t>(j / L::kStages) & 1; };
  tma::wait(sm.q_full(), 0);
  if (my_blocks > 0) {
    tma::wait(sm.k_full(0), 0);
    issue_scores(s, sm.k(0));
    draw(0, bits);
    wait<0>();
    pin(s);
    release(sm.k_free(0));
    softmax_block(0, s, alpha);  // alpha = 1: O is still 0
    pack(s, bits, pa);
  }
  // One block: the next block's scores and this block's P V issued (O rescaled in between,
  // while the scores are computed), the next block's softmax while P V runs. has_next is fixed
  // at compile time (the last block is peeled off), so that no wgmma is issued under a
  // condition the compiler cannot follow.
  const auto step = [&](int jb, auto has_next) {
    constexpr bool kHasNext = decltype(has_next)::value;
    const int stage = jb % L::kStages, next = (jb + 1) % L::kStages;
    tma::wait(sm.v_full(stage), parity(jb));
    PvInputs in = pv_inputs(pa, sm.v(stage));
    if constexpr (kHasNext) tma::wait(sm.k_full(next), parity(jb + 1));
    if constexpr (kHasNext) issue_scores(s, sm.k(next));
    if (jb > 0) rescale(alpha);  // block jb's factors (block 0's are 1)
    issue_pv(in);
    if constexpr (kHasNext) {
      wait<1>();  // the scores; P V still in flight
      pin(s);
      release(sm.k_free(next));
      softmax_block(jb + 1, s, alpha);
      draw(jb + 1, bits);
    }
    wait<0>();
    pin(acc_o);
    release(sm.v_free(stage));
    if constexpr (kHasNext) pack(s, bits, pa);
  };
  for (int jb = 0; jb + 1 < my_blocks; ++jb) step(jb, std::true_type{});
  if (my_blocks > 0) step(my_blocks - 1, std::false_type{});

    // ---- normalise and write ----
#pragma unroll
  for (int h = 0; h < 2; ++h)
    write_row<Tag>(acc_o, h, l_part[h], run[h].m, problem, row_of(h), t, p);
}

}  // namespace simprec::flash::wgmma
