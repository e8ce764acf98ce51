// Building blocks of the flash-attention kernels: tensor-core instructions (mma.sync), shared
// memory loads (ldmatrix, cp.async) on a swizzled layout, and the exactly specified scalar
// steps that the emulation preset `cuda-fa2` reproduces (docs/gpu_kernels.md lists them).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstdint>
#include <type_traits>

#include "emulation/tiled_random.hpp"
#include "kernels/flash/flash_params.hpp"

namespace simprec::flash {

// ---- element types ------------------------------------------------------------------------
struct Bf16Tag {
  using Storage = __nv_bfloat16;
  static constexpr int kMantissa = 7, kMinExponent = -126;
};
struct Fp16Tag {
  using Storage = __half;
  static constexpr int kMantissa = 10, kMinExponent = -14;
};
// e4m3 inputs (Q, K, V; P cast to e4m3 before P.V), fp32 accumulation, bf16 output.
struct E4m3Tag {
  using Storage = __nv_fp8_e4m3;
};
template <class Tag>
inline constexpr bool kIsFp8 = std::is_same_v<Tag, E4m3Tag>;
// The type O is written in.
template <class Tag>
using OutputTag = std::conditional_t<kIsFp8<Tag>, Bf16Tag, Tag>;

// Two floats -> packed pair, round to nearest even (cvt.rn.bf16x2.f32 / cvt.rn.f16x2.f32).
__device__ __forceinline__ uint32_t pack_rn(Bf16Tag, float lo, float hi) {
  uint32_t r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}
__device__ __forceinline__ uint32_t pack_rn(Fp16Tag, float lo, float hi) {
  uint32_t r;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

// Two floats -> two e4m3 bytes in the low half, nearest even, saturating to +-448.
__device__ __forceinline__ uint32_t pack_rn(E4m3Tag, float lo, float hi) {
  uint16_t r;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(r) : "f"(hi), "f"(lo));
  return r;
}

// A flag fixed at compile time that reads as a bool: passed where a run-time bool can be, it
// lets the compiler drop the branch (a loop's peeled iterations).
template <bool kValue>
struct Fixed {
  __device__ constexpr operator bool() const { return kValue; }
};

// ---- tensor-core instructions -------------------------------------------------------------
__device__ __forceinline__ void mma(Bf16Tag, float (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                                    uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
__device__ __forceinline__ void mma(Fp16Tag, float (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                                    uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
// m16n8k32 e4m3 x e4m3 -> fp32.
__device__ __forceinline__ void mma(E4m3Tag, float (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                                    uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
// ---- global memory ------------------------------------------------------------------------
// Row `row` of problem `problem` in a contiguous [problems, rows, row_bytes] tensor.
__device__ __forceinline__ const char* row_address(const void* base, int problem, int rows,
                                                   int64_t row, int64_t row_bytes) {
  return static_cast<const char*>(base) + (static_cast<int64_t>(problem) * rows + row) * row_bytes;
}

// ---- shared memory ------------------------------------------------------------------------
__device__ __forceinline__ uint32_t smem_address(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address));
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], uint32_t address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address));
}
__device__ __forceinline__ void cp_async_16(uint32_t smem, const void* global) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(smem), "l"(global));
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;");
}
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(kPending));
}

// A tile of kRows rows of kRowBytes bytes in shared memory, 16-byte chunks XOR-swizzled by the
// row's low three bits, so that the eight rows an ldmatrix phase reads (same logical chunk)
// fall into eight different bank groups.
template <int kRows, int kRowBytes>
struct SwizzledTile {
  static_assert(kRowBytes % 128 == 0, "rows of whole 128-byte lines");
  static constexpr int kChunks = kRowBytes / 16;
  static constexpr int kBytes = kRows * kRowBytes;
  __device__ static uint32_t offset(int row, int byte) {
    const int chunk = (byte >> 4) ^ (row & 7);
    return row * kRowBytes + chunk * 16 + (byte & 15);
  }
  // Copies kRows rows (global row stride `stride` bytes) with cp.async, kThreads threads.
  template <int kThreads>
  __device__ static void load(uint32_t smem, const char* global, int64_t stride, int thread) {
#pragma unroll
    for (int c = thread; c < kRows * kChunks; c += kThreads) {
      const int row = c / kChunks, chunk = c % kChunks;
      cp_async_16(smem + offset(row, chunk * 16), global + row * stride + chunk * 16);
    }
  }
};

// ---- exactly specified scalar steps -------------------------------------------------------
// ex2.approx.ftz.f32: the kernels' exp2 (the plugin offers it as function ex2_approx_ftz_f32,
// from which the emulation takes the values it needs).
__device__ __forceinline__ float ex2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// The largest and second largest of a set of scores, counted with multiplicity (-inf when
// absent): beta-rowmax's repeat test is "lo reaches the threshold".
struct Top2 {
  float hi, lo;
};
__device__ __forceinline__ Top2 top2_of(float a, float b) {
  return {fmaxf(a, b), fminf(a, b)};
}
// Of the union: the larger top, and the best of the smaller top and both seconds.
__device__ __forceinline__ Top2 merge(Top2 a, Top2 b) {
  return {fmaxf(a.hi, b.hi), fmaxf(fminf(a.hi, b.hi), fmaxf(a.lo, b.lo))};
}

// hi + lo (hi = RN(hi + lo) in double) rounded to odd at double precision: then a single
// nearest rounding to a format of at most 51 bits is the correct rounding of the exact value.
__device__ __forceinline__ double to_odd(double hi, double lo) {
  if (lo == 0.0) return hi;
  long long bits = __double_as_longlong(hi);
  if ((hi > 0) != (lo > 0)) bits -= 1;
  return __longlong_as_double(bits | 1);
}
// fp32 of the exact product a*b (a, b doubles): one rounding.
__device__ __forceinline__ float mul_rn_f32(double a, double b) {
  const double hi = __dmul_rn(a, b);
  const double lo = __fma_rn(a, b, -hi);
  return __double2float_rn(to_odd(hi, lo));
}
// The exact product acc*scale rounded to odd at fp32 (a later RNE to bf16/fp16 of this is the
// correct rounding of the product).
__device__ __forceinline__ float mul_odd_f32(float acc, double scale) {
  const double a = acc;
  const double hi = __dmul_rn(a, scale);
  const double lo = __fma_rn(a, scale, -hi);
  const double odd = to_odd(hi, lo);
  const float t = __double2float_rz(odd);
  if (static_cast<double>(t) == odd) return t;
  return __uint_as_float(__float_as_uint(t) | 1u);
}

// The helpers below work on one warp's 16-row slice of a tile in the mma accumulator layout:
// x[n][4] holds rows g and g + 8 (half h = 0, 1) at columns 8n + 2t and 8n + 2t + 1, as
// x[n][2h] and x[n][2h + 1] (g = lane / 4, t = lane % 4).

// Causal mask: scores of row `row` (half h) at columns past it -> -inf; col0 is the first
// column of the key block.
template <int kNTiles>
__device__ __forceinline__ void mask_causal(float (&s)[kNTiles][4], int h, int row, int col0,
                                            int t) {
  if (col0 + 8 * kNTiles - 1 <= row) return;
#pragma unroll
  for (int n = 0; n < kNTiles; ++n) {
#pragma unroll
    for (int u = 0; u < 2; ++u) {
      if (col0 + n * 8 + 2 * t + u > row) s[n][2 * h + u] = -__builtin_huge_valf();
    }
  }
}

// x[0] op x[1] op ... op x[kN - 1] in a balanced tree (depth log2 kN rather than a chain of
// kN - 1: the row max is on the softmax's critical path); x is overwritten.
template <int kN, class T, class Op>
__device__ __forceinline__ T tree_reduce(T (&x)[kN], Op op) {
  static_assert((kN & (kN - 1)) == 0, "a power of two of values");
#pragma unroll
  for (int w = 1; w < kN; w *= 2)
#pragma unroll
    for (int n = 0; n < kN; n += 2 * w) x[n] = op(x[n], x[n + w]);
  return x[0];
}

// The largest score of row half h (and for beta-rowmax also the second largest, counted with
// multiplicity) over the thread's scores of it and its quad's (the lanes xor 1 and 2, which
// hold the rest of the row). One pass either way, so that the repeat test adds no second pass
// that waits for the max.
template <bool kBeta, int kNTiles>
__device__ __forceinline__ Top2 row_top(const float (&s)[kNTiles][4], int h) {
  if constexpr (kBeta) {
    Top2 tops[kNTiles];
#pragma unroll
    for (int n = 0; n < kNTiles; ++n) tops[n] = top2_of(s[n][2 * h], s[n][2 * h + 1]);
    Top2 top = tree_reduce(tops, [](Top2 a, Top2 b) { return merge(a, b); });
    top = merge(top,
                {__shfl_xor_sync(0xffffffffu, top.hi, 1), __shfl_xor_sync(0xffffffffu, top.lo, 1)});
    return merge(
        top, {__shfl_xor_sync(0xffffffffu, top.hi, 2), __shfl_xor_sync(0xffffffffu, top.lo, 2)});
  } else {
    float maxes[kNTiles];
#pragma unroll
    for (int n = 0; n < kNTiles; ++n) maxes[n] = fmaxf(s[n][2 * h], s[n][2 * h + 1]);
    float mx = tree_reduce(maxes, [](float a, float b) { return fmaxf(a, b); });
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
    return {mx, -__builtin_huge_valf()};
  }
}

// The end of row `row` (half h) of problem `problem`: l summed over the quad, O = cast(O *
// fp32(1/l)) stored, and (lane t = 0) LSE = m * scale + log(l) in double, rounded to fp32.
template <class Out, int kDTiles>
__device__ __forceinline__ void write_row(const float (&acc_o)[kDTiles][4], int h, float l, float m,
                                          int problem, int row, int t, const ForwardParams& p) {
  using T = typename Out::Storage;
  l = __fadd_rn(l, __shfl_xor_sync(0xffffffffu, l, 2));
  l = __fadd_rn(l, __shfl_xor_sync(0xffffffffu, l, 1));
  const float inv = __frcp_rn(l);
  T* o_row =
      static_cast<T*>(p.o) + (static_cast<int64_t>(problem) * p.seqlen_q + row) * (8 * kDTiles);
#pragma unroll
  for (int n = 0; n < kDTiles; ++n) {
    const uint32_t packed =
        pack_rn(Out{}, __fmul_rn(acc_o[n][2 * h], inv), __fmul_rn(acc_o[n][2 * h + 1], inv));
    *reinterpret_cast<uint32_t*>(o_row + n * 8 + 2 * t) = packed;
  }
  if (t == 0 && p.lse) {
    const double lse =
        __dadd_rn(__dmul_rn(static_cast<double>(m), p.scale), log(static_cast<double>(l)));
    p.lse[static_cast<int64_t>(problem) * p.seqlen_q + row] = __double2float_rn(lse);
  }
}

// A row's running max m and shift = fp32(m * c), c = fp32(scale * log2 e), -inf before the
// first key.
template <bool kBeta>
struct RunningMax {
  float m = -__builtin_huge_valf();
  float shift = -__builtin_huge_valf();

  struct Step {
    float shift;  // the exponent's shift for this block
    float alpha;  // the factor the row's O and l so far are rescaled by
  };
  // One key block whose row max is top.hi (second largest top.lo): cuda-fa2's steps.
  __device__ __forceinline__ Step update(Top2 top, const ForwardParams& p) {
    constexpr float kInf = __builtin_huge_valf();
    const float mx = top.hi;
    const float shift_blk = __fmul_rn(mx, p.scale_log2);  // fp32(mx * c), one rounding
    float m_blk = mx, s_blk = shift_blk;
    if constexpr (kBeta) {
      // Paper A in fp32, the emulation's BetaArithmetic::kFp32: the block repeats its max when
      // its second largest score reaches t = fp32(m1 - e), e = fp32(eps / scale); its max is
      // then fp32(fp32(beta) * m1) for m1 > 0 and 0 otherwise, and its shift fp32(max * c), as
      // for any max. Both candidates are formed side by side and one is selected: no branch,
      // and only the test and a select on the softmax's critical path. (Its double-precision
      // predecessor, a threshold in double and a double max behind a warp vote, cost +27% on
      // wg128x64 against +15 to +18% for this; git show 45bcba0:docs/findings.md.)
      const float e = static_cast<float>(p.eps_over_scale), beta = static_cast<float>(p.beta);
      const bool repeat = mx > -kInf && top.lo >= __fsub_rn(mx, e);
      const float beta_max = mx > 0 ? __fmul_rn(mx, beta) : 0.f;
      m_blk = repeat ? beta_max : mx;
      s_blk = repeat ? __fmul_rn(beta_max, p.scale_log2) : shift_blk;  // fp32(0 * c) = 0
    }
    const bool started = m != -kInf, rises = m_blk > m;
    if (rises) m = m_blk;
    return settle(started, rises, s_blk);
  }

 private:
  // The end of a block's step, m already raised to the block's max when `rises`: the shift,
  // fp32(m * c), is the block's s_blk when it raised the max, else the running one (0 while no
  // key has a finite score), and O and l are rescaled by 2^(old shift - new) once there was a
  // max to rescale from (`started`).
  __device__ __forceinline__ Step settle(bool started, bool rises, float s_blk) {
    const float s = rises ? s_blk : started ? shift : 0.f;
    const float alpha = started && rises ? ex2(__fsub_rn(shift, s)) : 1.f;
    shift = rises || started ? s : -__builtin_huge_valf();
    return {s, alpha};
  }
};

// Stochastic rounding of a float into bf16 / fp16 with k <= 8 random bits (the draw in the top
// k bits of `random`): up (in magnitude) when the top k bits of the dropped fraction plus the
// draw reach 2^k (emulation/round.cpp, kStochastic). Returns the bit pattern. P needs no
// overflow handling: |x| <= 1.
template <class Tag>
__device__ __forceinline__ uint32_t stochastic_round(float x, uint32_t random, int k) {
  constexpr int kMant = Tag::kMantissa;
  constexpr int kBias = Tag::kMinExponent == -126 ? 127 : 15;
  const uint32_t bits = __float_as_uint(x);
  const uint32_t sign = (bits >> 31) << (kMant + (kBias == 127 ? 8 : 5));
  const uint32_t biased = bits >> 23 & 0xff;
  if (biased == 0 && (bits & 0x7fffffu) == 0) return sign;
  const int e = biased == 0 ? -126 : static_cast<int>(biased) - 127;
  const uint32_t sig = (bits & 0x7fffffu) | (biased == 0 ? 0u : 0x800000u);
  int s = 23 - kMant;  // dropped bits of the 24-bit significand
  if (e < Tag::kMinExponent) s += Tag::kMinExponent - e;
  const uint32_t q = s >= 32 ? 0u : sig >> s;
  const uint32_t rem = s >= 32 ? sig : sig & ((1u << s) - 1u);
  // Top k bits of the dropped fraction rem / 2^s (s > k always: s >= 13 > 8).
  const uint32_t top = s - k >= 32 ? 0u : rem >> (s - k);
  const uint32_t up = top + (random >> (32 - k)) >= (1u << k) ? 1u : 0u;
  if (e >= Tag::kMinExponent) {
    // q holds the implicit bit: adding it to (e + bias) << kMant carries into the exponent.
    return sign | ((static_cast<uint32_t>(e + kBias) << kMant) + q + up - (1u << kMant));
  }
  return sign | (q + up);  // subnormal units; reaching 2^kMant is the smallest normal
}

// x + 256 * (byte `byte` of word), in one instruction: a two-way dot product (dp2a) of the
// 16-bit halves {256, 0} or {0, 256} with the byte pair that holds it, added to x. Extracting
// the byte (a byte permute) and adding it took two: on the H100 SR's time fell 2% at 64x64 and
// 128x64 and about 1% on wg128x64 (git show 45bcba0:docs/findings.md). x + 256 * 255 must not
// overflow, which holds for the bits of any float <= 1.
__device__ __forceinline__ uint32_t add_byte_times_256(uint32_t x, uint32_t word, int byte) {
  const uint32_t weight = byte % 2 == 0 ? 0x00000100u : 0x01000000u;
  return byte < 2 ? __dp2a_lo(weight, word, x) : __dp2a_hi(weight, word, x);
}

// P's pair in 8-column tile n of a 64-column group (elements e = 2 (n % 8) and e + 1, both >= 0),
// cast with stochastic rounding on 8 random bits each: bytes e and e + 1 of the group's Philox
// block (tiled_random::draw_from). Packed like pack_rn.
template <class Tag>
__device__ __forceinline__ uint32_t pack_sr(float lo, float hi, const tiled_random::Block& bits,
                                            int n) {
  const uint32_t word = bits.w[(n % 8) / 2];
  const int byte0 = 2 * (n % 2), byte1 = byte0 + 1;
  if constexpr (std::is_same_v<Tag, Bf16Tag>) {
    // P >= 0 is a normal fp32 or zero: bf16 keeps its exponent, and adding the draw below the
    // top 8 dropped bits carries into the kept part exactly when top8 + draw >= 256 (the
    // stochastic rule); the high halves are the result. Each draw is added at bits 8-15 by one
    // dp2a (add_byte_times_256).
    return __byte_perm(add_byte_times_256(__float_as_uint(lo), word, byte0),
                       add_byte_times_256(__float_as_uint(hi), word, byte1), 0x7632);
  } else {
    const uint32_t r0 = (word >> (8 * byte0)) & 0xffu, r1 = (word >> (8 * byte1)) & 0xffu;
    return stochastic_round<Tag>(lo, r0 << 24, 8) | stochastic_round<Tag>(hi, r1 << 24, 8) << 16;
  }
}

}  // namespace simprec::flash
