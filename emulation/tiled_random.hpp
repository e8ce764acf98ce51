// Random bits for stochastic rounding laid out the way a GPU thread holds a tile, shared by the
// CUDA flash-attention kernels (kernels/flash/) and the emulation that reproduces them.
//
// The emulation's default layout (random.hpp) spends one 32-bit Philox word per rounding event,
// keyed by a flat index. A kernel thread rounding P to bf16 holds, per row and per 64 columns,
// the 16 elements of columns 8n + 2t + u (n < 8, u < 2, t = lane % 4: the mma.sync accumulator
// layout); drawing a Philox block per element would cost more than the attention itself. This
// layout gives those 16 elements one Philox4x32-10 block (128 bits) between them when they need
// k <= 8 bits each, and k/8 blocks when they need more:
//
//   element e = 2*((col % 64) / 8) + col % 2 takes bits [e*k, e*k + k) of the 16*k-bit string
//   formed by blocks call = 0, 1, ... (each block's words 0..3, least significant bits first),
//   block `call` = Philox4x32-10(counter = {row, col / 64, problem, lane | call << 2 | tag},
//                                 key = {seed low, seed high}),  lane = (col % 8) / 2.
//
// The draw is returned in the top k bits of a 32-bit word, which is how round_to_format consumes
// stochastic-rounding bits (up when top-k bits of the dropped fraction + draw >= 2^k).
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define SIMPREC_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define SIMPREC_HOST_DEVICE inline
#endif

namespace simprec::tiled_random {

// Tag in the counter's last word, so that these blocks never coincide with another user's.
inline constexpr uint32_t kTag = 0x5e000000u;

struct Block {
  uint32_t w[4];
};

// Philox4x32's round multipliers.
inline constexpr uint32_t kPhiloxM0 = 0xD2511F53u, kPhiloxM1 = 0xCD9E8D57u;

// The 64-bit product a * b as its high and low words. On the GPU it is one mul.wide.u32 whose
// register pair is split with mov.b64: written as a 64-bit product shifted down (plain C++),
// the compiler added a zero high word to every product (a UMOV and an IADD more per product,
// 80 instructions per warp and key block in the wgmma kernel; ncu on the H100,
// git show 45bcba0:docs/findings.md).
SIMPREC_HOST_DEVICE void multiply_wide(uint32_t a, uint32_t b, uint32_t& hi, uint32_t& lo) {
#if defined(__CUDA_ARCH__)
  uint64_t product;
  asm("mul.wide.u32 %0, %1, %2;" : "=l"(product) : "r"(a), "r"(b));
  asm("mov.b64 {%0, %1}, %2;" : "=r"(lo), "=r"(hi) : "l"(product));
#else
  const uint64_t product = static_cast<uint64_t>(a) * b;
  hi = static_cast<uint32_t>(product >> 32);
  lo = static_cast<uint32_t>(product);
#endif
}

// The key of each of Philox4x32-10's rounds: {k0, k1} bumped by the Weyl constants. The flash
// kernels take them ready-made in their parameters (filled by the launcher from the seed), so
// that a round's XOR reads its key from the constant bank instead of a register that the
// compiler recomputed in every key block (19 instructions per warp and block, ncu on the H100).
struct RoundKeys {
  uint32_t k[10][2];
};
SIMPREC_HOST_DEVICE RoundKeys round_keys(uint32_t k0, uint32_t k1) {
  RoundKeys keys{};
  for (int round = 0; round < 10; ++round) {
    keys.k[round][0] = k0;
    keys.k[round][1] = k1;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return keys;
}
// The round keys of the tiled layout's key {seed low, seed high}.
SIMPREC_HOST_DEVICE RoundKeys round_keys(uint64_t seed) {
  return round_keys(static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
}

// One Philox4x32 round with round key {k0, k1}.
SIMPREC_HOST_DEVICE void philox_round(uint32_t (&c)[4], uint32_t k0, uint32_t k1) {
  uint32_t hi0, lo0, hi1, lo1;
  multiply_wide(kPhiloxM0, c[0], hi0, lo0);
  multiply_wide(kPhiloxM1, c[2], hi1, lo1);
  c[0] = hi1 ^ c[1] ^ k0;
  c[1] = lo1;
  c[2] = hi0 ^ c[3] ^ k1;
  c[3] = lo0;
}

// Rounds first .. 9 of Philox4x32-10 on the state c.
SIMPREC_HOST_DEVICE Block philox_rounds(uint32_t (&c)[4], const RoundKeys& keys, int first) {
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int round = first; round < 10; ++round) philox_round(c, keys.k[round][0], keys.k[round][1]);
  return Block{{c[0], c[1], c[2], c[3]}};
}

// Philox4x32-10 (Salmon et al., SC'11; the Random123 definition, checked against it in
// tests/tiled_random_test.cpp). Its rounds are written out here rather than through
// philox_round: that way ptxas gave the 128x64 SR kernel twice the spills.
SIMPREC_HOST_DEVICE Block philox4x32_10(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3,
                                        const RoundKeys& keys) {
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int round = 0; round < 10; ++round) {
    uint32_t hi0, lo0, hi1, lo1;
    multiply_wide(kPhiloxM0, c0, hi0, lo0);
    multiply_wide(kPhiloxM1, c2, hi1, lo1);
    c0 = hi1 ^ c1 ^ keys.k[round][0];
    c1 = lo1;
    c2 = hi0 ^ c3 ^ keys.k[round][1];
    c3 = lo0;
  }
  return Block{{c0, c1, c2, c3}};
}
SIMPREC_HOST_DEVICE Block philox4x32_10(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3,
                                        uint32_t k0, uint32_t k1) {
  return philox4x32_10(c0, c1, c2, c3, round_keys(k0, k1));
}

// Philox4x32-10 of counters that differ only in c1 (the flash kernels' 64-column group, a new one
// per key block): the part of its first two rounds that c0, c2 and c3 determine, made once per
// thread and row. Round 1's products both read fixed words, so its outputs are fixed but for
// c1's XOR; round 2's second product reads a fixed word too. A block then costs one product and
// two XORs for those rounds instead of four products and four XORs.
struct PhiloxFixedCounters {
  uint32_t x0;      // round 1's c0 without c1: hi(kPhiloxM1 * c2) ^ k[0][0]
  uint32_t c0, c1;  // round 2's c0 and c1 (fixed)
  uint32_t x2;      // XORed into round 2's c2: lo(kPhiloxM0 * c0) ^ k[1][1]
};
SIMPREC_HOST_DEVICE PhiloxFixedCounters fix_counters(uint32_t c0, uint32_t c2, uint32_t c3,
                                                     const RoundKeys& keys) {
  uint32_t hi0, lo0, hi1, lo1;
  multiply_wide(kPhiloxM0, c0, hi0, lo0);
  multiply_wide(kPhiloxM1, c2, hi1, lo1);
  const uint32_t round1_c2 = hi0 ^ c3 ^ keys.k[0][1];
  uint32_t hi, lo;
  multiply_wide(kPhiloxM1, round1_c2, hi, lo);
  return {hi1 ^ keys.k[0][0], hi ^ lo1 ^ keys.k[1][0], lo, lo0 ^ keys.k[1][1]};
}
SIMPREC_HOST_DEVICE Block philox4x32_10(const PhiloxFixedCounters& fixed, uint32_t c1,
                                        const RoundKeys& keys) {
  uint32_t hi, lo;
  multiply_wide(kPhiloxM0, fixed.x0 ^ c1, hi, lo);  // round 2's first product
  uint32_t c[4] = {fixed.c0, fixed.c1, hi ^ fixed.x2, lo};
  return philox_rounds(c, keys, 2);
}

// Block `call` of (row, 64-column group, lane class) in one problem (batch * heads + head),
// from the round keys of the seed (round_keys(seed)).
SIMPREC_HOST_DEVICE Block p_block(const RoundKeys& keys, uint32_t problem, uint32_t row,
                                  uint32_t group, uint32_t lane, uint32_t call) {
  return philox4x32_10(row, group, problem, lane | (call << 2) | kTag, keys);
}
SIMPREC_HOST_DEVICE Block p_block(uint64_t seed, uint32_t problem, uint32_t row, uint32_t group,
                                  uint32_t lane, uint32_t call) {
  return p_block(round_keys(seed), problem, row, group, lane, call);
}
// The same blocks for one (problem, row, lane class, call) and any group: p_block(keys, problem,
// row, group, lane, call) == p_block(p_row(keys, problem, row, lane, call), group, keys).
SIMPREC_HOST_DEVICE PhiloxFixedCounters p_row(const RoundKeys& keys, uint32_t problem, uint32_t row,
                                              uint32_t lane, uint32_t call) {
  return fix_counters(row, problem, lane | (call << 2) | kTag, keys);
}
SIMPREC_HOST_DEVICE Block p_block(const PhiloxFixedCounters& row, uint32_t group,
                                  const RoundKeys& keys) {
  return philox4x32_10(row, group, keys);
}

// Bits [e*k, e*k + k) of the block string, in the top k bits of the result. k divides 32
// (1, 2, 4, 8, 16 or 32); `block` is the block that holds them (call = e*k / 128).
SIMPREC_HOST_DEVICE uint32_t draw_from(const Block& block, int e, int k) {
  const int bit = (e * k) % 128;
  const uint32_t word = block.w[bit / 32] >> (bit % 32);
  return k == 32 ? word : word << (32 - k);
}

// The draw of element (row, col) of P: what the kernel uses and what the emulation replays.
SIMPREC_HOST_DEVICE uint32_t p_draw(uint64_t seed, uint32_t problem, uint32_t row, uint32_t col,
                                    int k) {
  const int e = 2 * static_cast<int>((col % 64) / 8) + static_cast<int>(col % 2);
  const uint32_t call = static_cast<uint32_t>(e * k / 128);
  return draw_from(p_block(seed, problem, row, col / 64, (col % 8) / 2, call), e, k);
}

}  // namespace simprec::tiled_random
