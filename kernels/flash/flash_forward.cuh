// FlashAttention-2 forward pass on mma.sync tensor cores (bf16 / fp16 inputs, fp32 accumulation)
// with paper A's beta-rowmax and stochastic rounding of P switchable per call.
//
// One CTA computes kBlockM query rows of one (batch, head); each of its kWarps warps owns
// kBlockM / kWarps consecutive rows (one or two 16-row mma tiles). Key/value blocks of kBlockN
// rows stream through double-buffered shared memory (cp.async). Per block and row, in this
// order (the emulation preset `cuda-fa2` replays exactly these steps, docs/gpu_kernels.md):
//   S = Q K^T                     mma chain over d from zero
//   m_blk = max_j S (beta-rowmax: beta*m_blk or 0 when the max repeats within eps)
//   m = max(m_old, m_blk); shift = fp32(m * c), c = fp32(scale * log2 e)
//   alpha = ex2(shift_old - shift) when m grew, else 1; O *= alpha; l_t *= alpha
//   p = ex2(fma(S, c, -shift)); l_t += p (lane t = (col % 8) / 2, columns in order)
//   O += cast(P) V                mma chain over the block's keys, C = O
// and at the end l = (l0 + l2) + (l1 + l3), O = cast(O * fp32(1/l)), LSE = m*scale + log(l).
#pragma once

#include <cmath>
#include <type_traits>

#include "kernels/flash/flash_common.cuh"
#include "kernels/flash/flash_params.hpp"

namespace simprec::flash {

template <class Tag, int kHeadDim, int kBlockM, int kBlockN, int kWarps>
struct ForwardConfig {
  static constexpr int kThreads = kWarps * 32;
  static constexpr int kMTiles = kBlockM / (16 * kWarps);  // 16-row mma tiles per warp
  static_assert(kMTiles >= 1 && kBlockM == kMTiles * 16 * kWarps, "rows per warp");
  static_assert(kBlockN % 64 == 0, "key blocks of whole 64-column groups (tiled random bits)");
  static constexpr int kElementBytes = sizeof(typename Tag::Storage);
  static_assert(kHeadDim * kElementBytes % 128 == 0, "head dimension of whole 128-byte rows");
  using QTile = SwizzledTile<kBlockM, kHeadDim * kElementBytes>;
  using KTile = SwizzledTile<kBlockN, kHeadDim * kElementBytes>;
  // V as stored (bf16/fp16: [keys][d]); the e4m3 kernel takes V transposed ([d][keys]), since
  // the 8-bit mma wants its B operand k-major and ldmatrix cannot transpose bytes.
  using VTile = std::conditional_t<kIsFp8<Tag>, SwizzledTile<kHeadDim, kBlockN>,
                                   SwizzledTile<kBlockN, kHeadDim * 2>>;
  static constexpr int kSmemBytes = QTile::kBytes + 2 * KTile::kBytes + 2 * VTile::kBytes;
};

template <class Tag, int kHeadDim, int kBlockM, int kBlockN, int kWarps, bool kBeta, int kSrBits>
__global__ void __launch_bounds__(kWarps * 32)
    flash_forward_kernel(const KernelForwardParams<kSrBits> p) {
  using Cfg = ForwardConfig<Tag, kHeadDim, kBlockM, kBlockN, kWarps>;
  using QTile = typename Cfg::QTile;
  using KTile = typename Cfg::KTile;
  using VTile = typename Cfg::VTile;
  constexpr bool kFp8 = kIsFp8<Tag>;
  static_assert(!(kFp8 && kSrBits), "stochastic rounding of P is for bf16 and fp16");
  constexpr int kM = Cfg::kMTiles;
  constexpr int kNTiles = kBlockN / 8;   // 8-column tiles of S
  constexpr int kDTiles = kHeadDim / 8;  // 8-column tiles of O

  extern __shared__ __align__(128) char smem[];
  const uint32_t sq = smem_address(smem);
  const uint32_t sk0 = sq + QTile::kBytes;
  const uint32_t sv0 = sk0 + 2 * KTile::kBytes;

  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int g = lane / 4, t = lane % 4;
  const int m_block = blockIdx.x, problem = blockIdx.y;
  constexpr int64_t kRowBytes = kHeadDim * Cfg::kElementBytes;
  const char* q_global =
      row_address(p.q, problem, p.seqlen_q, static_cast<int64_t>(m_block) * kBlockM, kRowBytes);
  const char* k_global = row_address(p.k, problem, p.seqlen_k, 0, kRowBytes);
  // (e4m3: V^T, [d][keys] per problem, as many bytes as seqlen_k rows of d.)
  const char* v_global = row_address(p.v, problem, p.seqlen_k, 0, kFp8 ? kHeadDim : kHeadDim * 2);
  // Where key block jb of V starts, and the stride between V's stored rows.
  const int64_t v_stride = kFp8 ? p.seqlen_k : kHeadDim * 2;
  const auto v_block = [&](int jb) {
    return v_global + static_cast<int64_t>(jb) * kBlockN * (kFp8 ? 1 : kHeadDim * 2);
  };

  int n_blocks = p.seqlen_k / kBlockN;
  const int last_row = min(p.seqlen_q, (m_block + 1) * kBlockM) - 1;
  if (p.causal) n_blocks = min(n_blocks, last_row / kBlockN + 1);  // blocks with j0 <= i1 - 1

  // With 16 rows per warp there are registers for the next block's scores: its products are
  // issued before this block's softmax, so that the tensor cores work while the softmax runs
  // (software pipelining; the arithmetic and its order are unchanged).
  constexpr bool kPipelined = kM == 1 && !kFp8;
  constexpr bool kSkipUnitRescale = kBeta && kM == 2;  // see O *= alpha below
  const auto load_k = [&](int j, int buf) {
    KTile::template load<Cfg::kThreads>(sk0 + buf * KTile::kBytes,
                                        k_global + static_cast<int64_t>(j) * kBlockN * kRowBytes,
                                        kRowBytes, tid);
  };
  const auto load_v = [&](int j, int buf) {
    VTile::template load<Cfg::kThreads>(sv0 + buf * VTile::kBytes, v_block(j), v_stride, tid);
  };
  QTile::template load<Cfg::kThreads>(sq, q_global, kRowBytes, tid);
  load_k(0, 0);
  if constexpr (kPipelined) {
    cp_async_commit();  // Q and K_0 first
    if (n_blocks > 1) load_k(1, 1);
  }
  load_v(0, 0);
  cp_async_commit();

  const int warp_row0 = warp * 16 * kM;  // first row of this warp within the CTA's tile
  // The row of half h of the warp's 16-row tile mt.
  const auto row_of = [&](int mt, int h) {
    return m_block * kBlockM + warp_row0 + mt * 16 + g + 8 * h;
  };
  float acc_o[kM][kDTiles][4];
  RunningMax<kBeta> run[kM][2];
  float l_part[kM][2];
#pragma unroll
  for (int mt = 0; mt < kM; ++mt) {
#pragma unroll
    for (int n = 0; n < kDTiles; ++n)
      acc_o[mt][n][0] = acc_o[mt][n][1] = acc_o[mt][n][2] = acc_o[mt][n][3] = 0.f;
    l_part[mt][0] = l_part[mt][1] = 0.f;
  }
  // SR's Philox counters of the thread's rows differ between key blocks only in the 64-column
  // group: the part they fix is made once (p_row), SR's time at 64x64 1.5% less on the H100.
  // Not with 32 rows per warp, where the 16 registers it holds made the 128x64 kernel spill
  // more and its SR 2.5% slower (git show 45bcba0:docs/findings.md).
  constexpr bool kFixedSrRows = kSrBits != 0 && kM == 1;
  tiled_random::PhiloxFixedCounters sr_rows[kM][2] = {};
  if constexpr (kFixedSrRows) {
#pragma unroll
    for (int mt = 0; mt < kM; ++mt)
#pragma unroll
      for (int h = 0; h < 2; ++h)
        sr_rows[mt][h] = tiled_random::p_row(p.sr_keys, problem, row_of(mt, h), t, 0);
  }

  // S = Q K^T of the block in shared memory at sk: an mma chain over d from zero.
  const auto scores = [&](float(&out)[kM][kNTiles][4], uint32_t sk) {
#pragma unroll
    for (int mt = 0; mt < kM; ++mt)
#pragma unroll
      for (int n = 0; n < kNTiles; ++n)
        out[mt][n][0] = out[mt][n][1] = out[mt][n][2] = out[mt][n][3] = 0.f;
#pragma unroll
    for (int kk = 0; kk < kRowBytes / 32; ++kk) {  // one mma k-step: 32 bytes of d
      uint32_t a[kM][4];
#pragma unroll
      for (int mt = 0; mt < kM; ++mt) {
        const int row = warp_row0 + mt * 16 + (lane % 8) + ((lane / 8) % 2) * 8;
        ldmatrix_x4(a[mt], sq + QTile::offset(row, kk * 32 + (lane / 16) * 16));
      }
#pragma unroll
      for (int np = 0; np < kBlockN / 16; ++np) {
        uint32_t b[4];
        const int key = np * 16 + (lane % 8) + (lane / 16) * 8;
        ldmatrix_x4(b, sk + KTile::offset(key, kk * 32 + ((lane / 8) % 2) * 16));
#pragma unroll
        for (int mt = 0; mt < kM; ++mt) {
          mma(Tag{}, out[mt][2 * np], a[mt], b[0], b[1]);
          mma(Tag{}, out[mt][2 * np + 1], a[mt], b[2], b[3]);
        }
      }
    }
  };

  float s[kM][kNTiles][4];      // scores of the block in hand
  uint32_t pa[kM][kNTiles][2];  // its P
  // ---- softmax of block jb: scores s -> P (cast, packed pairs [tile][half]) in pa ----
  const auto softmax_block = [&](int jb, uint32_t(&pa)[kM][kNTiles][2]) {
    const int col0 = jb * kBlockN;
#pragma unroll
    for (int mt = 0; mt < kM; ++mt) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = row_of(mt, h);
        if (p.causal) mask_causal(s[mt], h, row, col0, t);
        const auto [shift, alpha] = run[mt][h].update(row_top<kBeta>(s[mt], h), p);
        // O *= alpha. Where the max rose in no row of the warp every alpha is 1 and the
        // products would be O itself, so the beta-rowmax kernels of 32 rows per warp skip them:
        // that frees the registers that kernel spilled (484 bytes before), beta-rowmax's time on
        // the H100 going from +41% to +25% of the plain kernel's. The others multiply always:
        // the branch cost the plain and SR kernels 1-1.5%, and it would split the pipelined
        // kernels' straight stretch of code.
        if (!kSkipUnitRescale || __any_sync(0xffffffffu, alpha != 1.f)) {
#pragma unroll
          for (int n = 0; n < kDTiles; ++n) {
            acc_o[mt][n][2 * h] = __fmul_rn(acc_o[mt][n][2 * h], alpha);
            acc_o[mt][n][2 * h + 1] = __fmul_rn(acc_o[mt][n][2 * h + 1], alpha);
          }
        }
        float l = __fmul_rn(l_part[mt][h], alpha);
        tiled_random::Block bits{};
#pragma unroll
        for (int n = 0; n < kNTiles; ++n) {
          float pr[2];
#pragma unroll
          for (int u = 0; u < 2; ++u) {
            pr[u] = ex2(__fmaf_rn(s[mt][n][2 * h + u], p.scale_log2, -shift));
            l = __fadd_rn(l, pr[u]);
          }
          if constexpr (kSrBits == 0) {
            pa[mt][n][h] = pack_rn(Tag{}, pr[0], pr[1]);
          } else {
            // The 16 elements of a 64-column group share one Philox block (kSrBits = 8).
            static_assert(kSrBits == 8, "one Philox block per 16 elements of 8 bits");
            const uint32_t group = (col0 + n * 8) / 64;
            if (n % 8 == 0) {
              bits = kFixedSrRows ? tiled_random::p_block(sr_rows[mt][h], group, p.sr_keys)
                                  : tiled_random::p_block(p.sr_keys, problem, row, group, t, 0);
            }
            pa[mt][n][h] = pack_sr<Tag>(pr[0], pr[1], bits, n);
          }
        }
        l_part[mt][h] = l;
      }
    }
  };

  // ---- O += P V, V from the tile in shared memory at sv ----
  const auto accumulate_pv = [&](const uint32_t(&pa)[kM][kNTiles][2], uint32_t sv) {
    if constexpr (kFp8) {
#pragma unroll
      for (int kk = 0; kk < kBlockN / 32; ++kk) {
        // A fragment of keys 32kk + 4t .. 4t+3 (and + 16): the accumulator layout gives this
        // thread keys 8n + 2t, 8n + 2t + 1, so the four bytes come from the quad's threads
        // 2(t%2) and 2(t%2)+1, in tile 4kk + t/2 (+2); the natural key order is kept, which
        // is what the emulation's tensor-core model sees.
        const int quad = lane & ~3, src_lo = quad | (2 * (t % 2)), src_hi = src_lo + 1;
        const uint32_t select = t < 2 ? 0x5410u : 0x7632u;
        uint32_t a[kM][4];
#pragma unroll
        for (int mt = 0; mt < kM; ++mt) {
#pragma unroll
          for (int half = 0; half < 2; ++half) {  // keys 0..15 or 16..31 of the step
#pragma unroll
            for (int h = 0; h < 2; ++h) {  // rows g and g + 8
              const int tile = 4 * kk + 2 * half;
              const uint32_t mine = pa[mt][tile][h] | pa[mt][tile + 1][h] << 16;
              const uint32_t lo = __shfl_sync(0xffffffffu, mine, src_lo);
              const uint32_t hi = __shfl_sync(0xffffffffu, mine, src_hi);
              a[mt][2 * half + h] = __byte_perm(lo, hi, select);
            }
          }
        }
#pragma unroll
        for (int dp = 0; dp < kHeadDim / 16; ++dp) {
          uint32_t b[4];
          const int dim = dp * 16 + (lane % 8) + (lane / 16) * 8;
          ldmatrix_x4(b, sv + VTile::offset(dim, kk * 32 + ((lane / 8) % 2) * 16));
#pragma unroll
          for (int mt = 0; mt < kM; ++mt) {
            mma(Tag{}, acc_o[mt][2 * dp], a[mt], b[0], b[1]);
            mma(Tag{}, acc_o[mt][2 * dp + 1], a[mt], b[2], b[3]);
          }
        }
      }
    } else {
#pragma unroll
      for (int kk = 0; kk < kBlockN / 16; ++kk) {
        uint32_t a[kM][4];
#pragma unroll
        for (int mt = 0; mt < kM; ++mt) {
          a[mt][0] = pa[mt][2 * kk][0];
          a[mt][1] = pa[mt][2 * kk][1];
          a[mt][2] = pa[mt][2 * kk + 1][0];
          a[mt][3] = pa[mt][2 * kk + 1][1];
        }
#pragma unroll
        for (int dp = 0; dp < kHeadDim / 16; ++dp) {
          uint32_t b[4];
          const int key = kk * 16 + (lane % 8) + ((lane / 8) % 2) * 8;
          ldmatrix_x4_trans(b, sv + VTile::offset(key, (dp * 16 + (lane / 16) * 8) * 2));
#pragma unroll
          for (int mt = 0; mt < kM; ++mt) {
            mma(Tag{}, acc_o[mt][2 * dp], a[mt], b[0], b[1]);
            mma(Tag{}, acc_o[mt][2 * dp + 1], a[mt], b[2], b[3]);
          }
        }
      }
    }
  };

  if constexpr (kPipelined) {
    // One block: the next block's products first (when there is one), then this block's
    // softmax and P V. has_next is a bool, or a compile-time constant for blocks known to
    // have a successor.
    const auto step = [&](int jb, auto has_next) {
      const int buf = jb & 1;
      cp_async_wait<0>();
      __syncthreads();
      // Present: V_jb and K_jb+1. Free: V's other buffer (V_jb-1, used last iteration) and
      // K_jb's (its scores are in s).
      if (jb + 1 < n_blocks) load_v(jb + 1, buf ^ 1);
      if (jb + 2 < n_blocks) load_k(jb + 2, buf);
      cp_async_commit();
      float s_next[kM][kNTiles][4];
      if (has_next) scores(s_next, sk0 + (buf ^ 1) * KTile::kBytes);
      softmax_block(jb, pa);
      accumulate_pv(pa, sv0 + buf * VTile::kBytes);
#pragma unroll
      for (int mt = 0; mt < kM; ++mt)
#pragma unroll
        for (int n = 0; n < kNTiles; ++n)
#pragma unroll
          for (int r = 0; r < 4; ++r) s[mt][n][r] = s_next[mt][n][r];  // unused after the last
    };
    cp_async_wait<1>();  // Q and K_0
    __syncthreads();
    scores(s, sk0);
    if constexpr (kBeta) {
      // The last block peeled off: in the others the next block's products and this block's
      // softmax are one straight stretch of code, which the compiler interleaves, hiding the
      // repeat test under the tensor cores' work (A/B on the H100: beta-rowmax +3.5% instead of
      // +8.8% against the plain kernel peeled alike; the plain and SR kernels run faster
      // without the peeling; git show 45bcba0:docs/findings.md).
      for (int jb = 0; jb + 1 < n_blocks; ++jb) step(jb, Fixed<true>{});
      if (n_blocks > 0) step(n_blocks - 1, Fixed<false>{});
    } else {
      for (int jb = 0; jb < n_blocks; ++jb) step(jb, jb + 1 < n_blocks);
    }
  } else {
    for (int jb = 0; jb < n_blocks; ++jb) {
      const int buf = jb & 1;
      cp_async_wait<0>();
      __syncthreads();
      if (jb + 1 < n_blocks) {
        load_k(jb + 1, buf ^ 1);
        load_v(jb + 1, buf ^ 1);
        cp_async_commit();
      }
      scores(s, sk0 + buf * KTile::kBytes);
      softmax_block(jb, pa);
      accumulate_pv(pa, sv0 + buf * VTile::kBytes);
    }
  }

  // ---- normalise and write ----
#pragma unroll
  for (int mt = 0; mt < kM; ++mt) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      write_row<OutputTag<Tag>>(acc_o[mt], h, l_part[mt][h], run[mt][h].m, problem, row_of(mt, h),
                                t, p);
    }
  }
}

}  // namespace simprec::flash
