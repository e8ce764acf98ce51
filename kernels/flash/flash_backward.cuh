// FlashAttention-2 backward pass on mma.sync tensor cores, deterministic: no atomics.
//   1. flash_backward_prepare: per query row, D = rowsum(dO o O) (fp32, sequential over the
//      head dimension) and shift = fp32(LSE * log2 e) (one rounding of the exact product).
//   2. flash_backward_dkdv: one CTA per key block, looping over query blocks in order. It works
//      on the transposed scores S^T = K Q^T, so that P^T and dS^T come out of the accumulator
//      already in the layout of the next product's A operand (no shared-memory round trip):
//        P^T = ex2(fma(S^T, c, -shift)), dV += cast(P^T) dO, dP^T = V dO^T,
//        dS^T = P^T o (dP^T - D) (0 where P = 0), dK += cast(dS^T) Q.
//   3. flash_backward_dq: one CTA per query block, looping over key blocks in order:
//        dQ += cast(dS) K.
// Outputs: dQ, dK = F(exact(acc * scale)) (round to odd at fp32, then to nearest F), dV = F(acc).
// Every accumulation is one mma chain in a fixed order, which the `cuda-fa2` preset replays.
#pragma once

#include "kernels/flash/flash_common.cuh"
#include "kernels/flash/flash_params.hpp"

namespace simprec::flash {

template <class Tag, int kHeadDim>
__global__ void flash_backward_prepare(const BackwardParams p) {
  using T = typename Tag::Storage;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= static_cast<int64_t>(p.problems) * p.seqlen_q) return;
  const uint4* o = reinterpret_cast<const uint4*>(static_cast<const T*>(p.o) + row * kHeadDim);
  const uint4* d_o = reinterpret_cast<const uint4*>(static_cast<const T*>(p.d_o) + row * kHeadDim);
  float d = 0.f;
#pragma unroll 4
  for (int c = 0; c < kHeadDim / 8; ++c) {
    const uint4 ov = o[c], dv = d_o[c];
    const T* oe = reinterpret_cast<const T*>(&ov);
    const T* de = reinterpret_cast<const T*>(&dv);
#pragma unroll
    for (int e = 0; e < 8; ++e)
      d = __fmaf_rn(static_cast<float>(de[e]), static_cast<float>(oe[e]), d);
  }
  p.delta[row] = d;
  p.shift[row] = mul_rn_f32(static_cast<double>(p.lse[row]), 1.4426950408889634);
}

template <class Tag, int kHeadDim, int kBlockM, int kBlockN>
struct BackwardConfig {
  static constexpr int kWarps = kBlockN / 16;  // dK/dV: one warp per 16 keys
  static constexpr int kThreads = kWarps * 32;
  static_assert(kBlockM == kBlockN, "one warp count for both kernels");
  using Tile = SwizzledTile<kBlockM, kHeadDim * 2>;
  // dK/dV: K, V once; Q, dO double-buffered; D and shift per query, double-buffered.
  static constexpr int kDkdvSmem = 6 * Tile::kBytes + 2 * 2 * kBlockM * 4;
  // dQ: Q, dO once; K, V double-buffered.
  static constexpr int kDqSmem = 6 * Tile::kBytes;
};

// Loads the 8 (query) columns' worth of a per-query vector the thread's accumulator holds.
__device__ __forceinline__ float2 load_pair(const float* s, int col) {
  return *reinterpret_cast<const float2*>(s + col);
}

template <class Tag, int kHeadDim, int kBlockM, int kBlockN>
__global__ void __launch_bounds__(kBlockN / 16 * 32) flash_backward_dkdv(const BackwardParams p) {
  using Cfg = BackwardConfig<Tag, kHeadDim, kBlockM, kBlockN>;
  using Tile = typename Cfg::Tile;
  constexpr int kQTiles = kBlockM / 8;   // 8-query column tiles of S^T
  constexpr int kDTiles = kHeadDim / 8;  // 8-column tiles of dK, dV
  constexpr int64_t kRowBytes = kHeadDim * 2;
  constexpr float kInf = __builtin_huge_valf();

  extern __shared__ __align__(128) char smem[];
  const uint32_t s_k = smem_address(smem), s_v = s_k + Tile::kBytes;
  const uint32_t s_q0 = s_v + Tile::kBytes, s_do0 = s_q0 + 2 * Tile::kBytes;
  float* s_vec = reinterpret_cast<float*>(smem + 6 * Tile::kBytes);  // [buf][D | shift][kBlockM]

  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  const int n_block = blockIdx.x, problem = blockIdx.y;
  const int j0 = n_block * kBlockN;
  const int64_t q_base = static_cast<int64_t>(problem) * p.seqlen_q;
  const int64_t k_base = static_cast<int64_t>(problem) * p.seqlen_k;
  const char* q_global = static_cast<const char*>(p.q) + q_base * kRowBytes;
  const char* do_global = static_cast<const char*>(p.d_o) + q_base * kRowBytes;

  Tile::template load<Cfg::kThreads>(s_k, static_cast<const char*>(p.k) + (k_base + j0) * kRowBytes,
                                     kRowBytes, tid);
  Tile::template load<Cfg::kThreads>(s_v, static_cast<const char*>(p.v) + (k_base + j0) * kRowBytes,
                                     kRowBytes, tid);
  const int m_first = p.causal ? j0 / kBlockM : 0;  // query blocks with i1 - 1 >= j0
  const int m_blocks = p.seqlen_q / kBlockM;
  const auto load_query_block = [&](int m, int buf) {
    const int64_t offset = static_cast<int64_t>(m) * kBlockM * kRowBytes;
    Tile::template load<Cfg::kThreads>(s_q0 + buf * Tile::kBytes, q_global + offset, kRowBytes,
                                       tid);
    Tile::template load<Cfg::kThreads>(s_do0 + buf * Tile::kBytes, do_global + offset, kRowBytes,
                                       tid);
    for (int i = tid; i < 2 * kBlockM / 4; i += Cfg::kThreads) {
      const bool is_shift = i >= kBlockM / 4;
      const float* src = (is_shift ? p.shift : p.delta) + q_base + m * kBlockM;
      const int e = (i % (kBlockM / 4)) * 4;
      cp_async_16(smem_address(s_vec + buf * 2 * kBlockM + (is_shift ? kBlockM : 0) + e), src + e);
    }
  };
  if (m_first < m_blocks) load_query_block(m_first, 0);
  cp_async_commit();

  float acc_dk[kDTiles][4], acc_dv[kDTiles][4];
#pragma unroll
  for (int n = 0; n < kDTiles; ++n)
#pragma unroll
    for (int r = 0; r < 4; ++r) acc_dk[n][r] = acc_dv[n][r] = 0.f;

  const int key_row0 = warp * 16;  // this warp's keys within the block
  for (int m = m_first; m < m_blocks; ++m) {
    const int buf = (m - m_first) & 1;
    const uint32_t s_q = s_q0 + buf * Tile::kBytes, s_do = s_do0 + buf * Tile::kBytes;
    const float* s_delta = s_vec + buf * 2 * kBlockM;
    const float* s_shift = s_delta + kBlockM;
    cp_async_wait<0>();
    __syncthreads();
    if (m + 1 < m_blocks) {
      load_query_block(m + 1, buf ^ 1);
      cp_async_commit();
    }
    // S^T = K Q^T and dP^T = V dO^T (rows: this warp's 16 keys; columns: the block's queries).
    float st[kQTiles][4], dpt[kQTiles][4];
#pragma unroll
    for (int n = 0; n < kQTiles; ++n)
#pragma unroll
      for (int r = 0; r < 4; ++r) st[n][r] = dpt[n][r] = 0.f;
#pragma unroll
    for (int kk = 0; kk < kHeadDim / 16; ++kk) {
      uint32_t ak[4], av[4];
      const int arow = key_row0 + (lane % 8) + ((lane / 8) % 2) * 8;
      const int acol = (kk * 16 + (lane / 16) * 8) * 2;
      ldmatrix_x4(ak, s_k + Tile::offset(arow, acol));
      ldmatrix_x4(av, s_v + Tile::offset(arow, acol));
#pragma unroll
      for (int np = 0; np < kBlockM / 16; ++np) {
        uint32_t bq[4], bdo[4];
        const int query = np * 16 + (lane % 8) + (lane / 16) * 8;
        const int bcol = (kk * 16 + ((lane / 8) % 2) * 8) * 2;
        ldmatrix_x4(bq, s_q + Tile::offset(query, bcol));
        ldmatrix_x4(bdo, s_do + Tile::offset(query, bcol));
        mma(Tag{}, st[2 * np], ak, bq[0], bq[1]);
        mma(Tag{}, st[2 * np + 1], ak, bq[2], bq[3]);
        mma(Tag{}, dpt[2 * np], av, bdo[0], bdo[1]);
        mma(Tag{}, dpt[2 * np + 1], av, bdo[2], bdo[3]);
      }
    }
    // P^T, dS^T, cast into A fragments.
    uint32_t pa[kQTiles][2], dsa[kQTiles][2];
    const int i0 = m * kBlockM;
#pragma unroll
    for (int n = 0; n < kQTiles; ++n) {
      const float2 shift = load_pair(s_shift, n * 8 + 2 * t);
      const float2 delta = load_pair(s_delta, n * 8 + 2 * t);
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int key = j0 + key_row0 + g + 8 * h;
        float pr[2], ds[2];
#pragma unroll
        for (int u = 0; u < 2; ++u) {
          const int query = i0 + n * 8 + 2 * t + u;
          const float s = (p.causal && key > query) ? -kInf : st[n][2 * h + u];
          pr[u] = ex2(__fmaf_rn(s, p.scale_log2, -(u ? shift.y : shift.x)));
          ds[u] = pr[u] == 0.f
                      ? 0.f
                      : __fmul_rn(pr[u], __fsub_rn(dpt[n][2 * h + u], u ? delta.y : delta.x));
        }
        pa[n][h] = pack_rn(Tag{}, pr[0], pr[1]);
        dsa[n][h] = pack_rn(Tag{}, ds[0], ds[1]);
      }
    }
    // dV += P^T dO, dK += dS^T Q (k = the block's queries, in order).
#pragma unroll
    for (int kk = 0; kk < kBlockM / 16; ++kk) {
      const uint32_t ap[4] = {pa[2 * kk][0], pa[2 * kk][1], pa[2 * kk + 1][0], pa[2 * kk + 1][1]};
      const uint32_t ads[4] = {dsa[2 * kk][0], dsa[2 * kk][1], dsa[2 * kk + 1][0],
                               dsa[2 * kk + 1][1]};
#pragma unroll
      for (int dp = 0; dp < kHeadDim / 16; ++dp) {
        uint32_t bdo[4], bq[4];
        const int query = kk * 16 + (lane % 8) + ((lane / 8) % 2) * 8;
        const int col = (dp * 16 + (lane / 16) * 8) * 2;
        ldmatrix_x4_trans(bdo, s_do + Tile::offset(query, col));
        ldmatrix_x4_trans(bq, s_q + Tile::offset(query, col));
        mma(Tag{}, acc_dv[2 * dp], ap, bdo[0], bdo[1]);
        mma(Tag{}, acc_dv[2 * dp + 1], ap, bdo[2], bdo[3]);
        mma(Tag{}, acc_dk[2 * dp], ads, bq[0], bq[1]);
        mma(Tag{}, acc_dk[2 * dp + 1], ads, bq[2], bq[3]);
      }
    }
  }

  using T = typename Tag::Storage;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int64_t key = k_base + j0 + key_row0 + g + 8 * h;
    T* dk_row = static_cast<T*>(p.dk) + key * kHeadDim;
    T* dv_row = static_cast<T*>(p.dv) + key * kHeadDim;
#pragma unroll
    for (int n = 0; n < kDTiles; ++n) {
      *reinterpret_cast<uint32_t*>(dk_row + n * 8 + 2 * t) =
          pack_rn(Tag{}, mul_odd_f32(acc_dk[n][2 * h], p.scale),
                  mul_odd_f32(acc_dk[n][2 * h + 1], p.scale));
      *reinterpret_cast<uint32_t*>(dv_row + n * 8 + 2 * t) =
          pack_rn(Tag{}, acc_dv[n][2 * h], acc_dv[n][2 * h + 1]);
    }
  }
}

template <class Tag, int kHeadDim, int kBlockM, int kBlockN>
__global__ void __launch_bounds__(kBlockN / 16 * 32) flash_backward_dq(const BackwardParams p) {
  using Cfg = BackwardConfig<Tag, kHeadDim, kBlockM, kBlockN>;
  using Tile = typename Cfg::Tile;
  constexpr int kNTiles = kBlockN / 8;
  constexpr int kDTiles = kHeadDim / 8;
  constexpr int64_t kRowBytes = kHeadDim * 2;
  constexpr float kInf = __builtin_huge_valf();

  extern __shared__ __align__(128) char smem[];
  const uint32_t s_q = smem_address(smem), s_do = s_q + Tile::kBytes;
  const uint32_t s_k0 = s_do + Tile::kBytes, s_v0 = s_k0 + 2 * Tile::kBytes;

  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  const int m_block = blockIdx.x, problem = blockIdx.y;
  const int i0 = m_block * kBlockM;
  const int64_t q_base = static_cast<int64_t>(problem) * p.seqlen_q;
  const int64_t k_base = static_cast<int64_t>(problem) * p.seqlen_k;
  const char* k_global = static_cast<const char*>(p.k) + k_base * kRowBytes;
  const char* v_global = static_cast<const char*>(p.v) + k_base * kRowBytes;
  Tile::template load<Cfg::kThreads>(s_q, static_cast<const char*>(p.q) + (q_base + i0) * kRowBytes,
                                     kRowBytes, tid);
  Tile::template load<Cfg::kThreads>(
      s_do, static_cast<const char*>(p.d_o) + (q_base + i0) * kRowBytes, kRowBytes, tid);
  Tile::template load<Cfg::kThreads>(s_k0, k_global, kRowBytes, tid);
  Tile::template load<Cfg::kThreads>(s_v0, v_global, kRowBytes, tid);
  cp_async_commit();

  int n_blocks = p.seqlen_k / kBlockN;
  if (p.causal) n_blocks = min(n_blocks, (i0 + kBlockM - 1) / kBlockN + 1);
  const int row0 = warp * 16;
  float shift[2], delta[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    shift[h] = p.shift[q_base + i0 + row0 + g + 8 * h];
    delta[h] = p.delta[q_base + i0 + row0 + g + 8 * h];
  }
  float acc_dq[kDTiles][4];
#pragma unroll
  for (int n = 0; n < kDTiles; ++n)
#pragma unroll
    for (int r = 0; r < 4; ++r) acc_dq[n][r] = 0.f;

  for (int jb = 0; jb < n_blocks; ++jb) {
    const int buf = jb & 1;
    const uint32_t s_k = s_k0 + buf * Tile::kBytes, s_v = s_v0 + buf * Tile::kBytes;
    cp_async_wait<0>();
    __syncthreads();
    if (jb + 1 < n_blocks) {
      const int64_t next = static_cast<int64_t>(jb + 1) * kBlockN * kRowBytes;
      Tile::template load<Cfg::kThreads>(s_k0 + (buf ^ 1) * Tile::kBytes, k_global + next,
                                         kRowBytes, tid);
      Tile::template load<Cfg::kThreads>(s_v0 + (buf ^ 1) * Tile::kBytes, v_global + next,
                                         kRowBytes, tid);
      cp_async_commit();
    }
    float s[kNTiles][4], dp[kNTiles][4];
#pragma unroll
    for (int n = 0; n < kNTiles; ++n)
#pragma unroll
      for (int r = 0; r < 4; ++r) s[n][r] = dp[n][r] = 0.f;
#pragma unroll
    for (int kk = 0; kk < kHeadDim / 16; ++kk) {
      uint32_t aq[4], ado[4];
      const int arow = row0 + (lane % 8) + ((lane / 8) % 2) * 8;
      const int acol = (kk * 16 + (lane / 16) * 8) * 2;
      ldmatrix_x4(aq, s_q + Tile::offset(arow, acol));
      ldmatrix_x4(ado, s_do + Tile::offset(arow, acol));
#pragma unroll
      for (int np = 0; np < kBlockN / 16; ++np) {
        uint32_t bk[4], bv[4];
        const int key = np * 16 + (lane % 8) + (lane / 16) * 8;
        const int bcol = (kk * 16 + ((lane / 8) % 2) * 8) * 2;
        ldmatrix_x4(bk, s_k + Tile::offset(key, bcol));
        ldmatrix_x4(bv, s_v + Tile::offset(key, bcol));
        mma(Tag{}, s[2 * np], aq, bk[0], bk[1]);
        mma(Tag{}, s[2 * np + 1], aq, bk[2], bk[3]);
        mma(Tag{}, dp[2 * np], ado, bv[0], bv[1]);
        mma(Tag{}, dp[2 * np + 1], ado, bv[2], bv[3]);
      }
    }
    uint32_t dsa[kNTiles][2];
    const int j0 = jb * kBlockN;
#pragma unroll
    for (int n = 0; n < kNTiles; ++n) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int query = i0 + row0 + g + 8 * h;
        float ds[2];
#pragma unroll
        for (int u = 0; u < 2; ++u) {
          const int key = j0 + n * 8 + 2 * t + u;
          const float sv = (p.causal && key > query) ? -kInf : s[n][2 * h + u];
          const float pr = ex2(__fmaf_rn(sv, p.scale_log2, -shift[h]));
          ds[u] = pr == 0.f ? 0.f : __fmul_rn(pr, __fsub_rn(dp[n][2 * h + u], delta[h]));
        }
        dsa[n][h] = pack_rn(Tag{}, ds[0], ds[1]);
      }
    }
#pragma unroll
    for (int kk = 0; kk < kBlockN / 16; ++kk) {
      const uint32_t a[4] = {dsa[2 * kk][0], dsa[2 * kk][1], dsa[2 * kk + 1][0],
                             dsa[2 * kk + 1][1]};
#pragma unroll
      for (int dpi = 0; dpi < kHeadDim / 16; ++dpi) {
        uint32_t b[4];
        const int key = kk * 16 + (lane % 8) + ((lane / 8) % 2) * 8;
        ldmatrix_x4_trans(b, s_k + Tile::offset(key, (dpi * 16 + (lane / 16) * 8) * 2));
        mma(Tag{}, acc_dq[2 * dpi], a, b[0], b[1]);
        mma(Tag{}, acc_dq[2 * dpi + 1], a, b[2], b[3]);
      }
    }
  }

  using T = typename Tag::Storage;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    T* dq_row = static_cast<T*>(p.dq) + (q_base + i0 + row0 + g + 8 * h) * kHeadDim;
#pragma unroll
    for (int n = 0; n < kDTiles; ++n) {
      *reinterpret_cast<uint32_t*>(dq_row + n * 8 + 2 * t) =
          pack_rn(Tag{}, mul_odd_f32(acc_dq[n][2 * h], p.scale),
                  mul_odd_f32(acc_dq[n][2 * h + 1], p.scale));
    }
  }
}

}  // namespace simprec::flash
