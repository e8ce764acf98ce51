#include "emulation/random.hpp"

#include <Random123/philox.h>

#include <algorithm>

#include "emulation/cpu_level.hpp"

#if SIMPREC_AVX512_KERNELS
#include <immintrin.h>
#endif

namespace simprec {
namespace {

// One Philox4x32-10 block, written out so that a loop over blocks vectorises (Random123's
// generic version goes through array types the compiler keeps in memory).
struct Words4 {
  uint32_t w[4];
};
inline Words4 philox_block(uint64_t seed, uint64_t stream, uint64_t block) {
  uint32_t c0 = static_cast<uint32_t>(block), c1 = static_cast<uint32_t>(block >> 32);
  uint32_t c2 = static_cast<uint32_t>(stream), c3 = static_cast<uint32_t>(stream >> 32);
  uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = uint64_t{0xD2511F53} * c0;
    const uint64_t p1 = uint64_t{0xCD9E8D57} * c2;
    const uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c1 ^ k0;
    const uint32_t n1 = static_cast<uint32_t>(p1);
    const uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ c3 ^ k1;
    const uint32_t n3 = static_cast<uint32_t>(p0);
    c0 = n0, c1 = n1, c2 = n2, c3 = n3;
    k0 += 0x9E3779B9;
    k1 += 0xBB67AE85;
  }
  return {{c0, c1, c2, c3}};
}

}  // namespace

uint32_t random_bits(const RandomStream& rs, uint64_t index) {
  // Random123 is the reference definition; fill_random_bits must agree with it (tested).
  r123::Philox4x32 rng;
  const r123::Philox4x32::ctr_type ctr = {
      {static_cast<uint32_t>(index >> 2), static_cast<uint32_t>(index >> 34),
       static_cast<uint32_t>(rs.stream), static_cast<uint32_t>(rs.stream >> 32)}};
  const r123::Philox4x32::key_type key = {
      {static_cast<uint32_t>(rs.seed), static_cast<uint32_t>(rs.seed >> 32)}};
  return rng(ctr, key)[index & 3];
}

namespace {

void fill_random_bits_baseline(const RandomStream& rs, uint64_t first_index, uint32_t* out,
                               uint64_t count) {
  uint64_t i = 0;
  // Leading partial block.
  while (i < count && ((first_index + i) & 3) != 0) {
    out[i] = random_bits(rs, first_index + i);
    ++i;
  }
  const uint64_t blocks = (count - i) / 4;
  const uint64_t first_block = (first_index + i) >> 2;
  uint32_t* dst = out + i;
  for (uint64_t b = 0; b < blocks; ++b) {
    const Words4 w = philox_block(rs.seed, rs.stream, first_block + b);
    dst[4 * b + 0] = w.w[0];
    dst[4 * b + 1] = w.w[1];
    dst[4 * b + 2] = w.w[2];
    dst[4 * b + 3] = w.w[3];
  }
  for (i += 4 * blocks; i < count; ++i) out[i] = random_bits(rs, first_index + i);
}

[[SIMPREC_TARGET_V3]] void fill_random_bits_v3(const RandomStream& rs, uint64_t first_index,
                                               uint32_t* out, uint64_t count) {
  fill_random_bits_baseline(rs, first_index, out, count);
}
#if SIMPREC_AVX512_KERNELS
// GCC 12 warns about the placeholder of every unmasked AVX-512 intrinsic it inlines here
// (_mm512_undefined_epi32 initialised from itself, GCC bug 105593).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
// The high and low words of the 64-bit products m * x of 16 lanes. vpmuludq multiplies the even
// lanes only (the low word of each 64-bit pair), so the odd lanes take a second product of x
// shifted down; each result word is then picked from its pair, swapped into place where needed.
[[SIMPREC_TARGET_V4]] inline void multiply_wide16(__m512i x, __m512i m, __m512i& hi, __m512i& lo) {
  const __m512i even = _mm512_mul_epu32(x, m);
  const __m512i odd = _mm512_mul_epu32(_mm512_srli_epi64(x, 32), m);
  hi = _mm512_mask_shuffle_epi32(odd, 0x5555, even, _MM_PERM_CDAB);
  lo = _mm512_mask_shuffle_epi32(even, 0xAAAA, odd, _MM_PERM_CDAB);
}

// Philox4x32-10 of 16 * kGroups consecutive blocks, written to out[0 .. 64 * kGroups) in the
// block order of the scalar loop. Each group of 16 blocks has one block per 32-bit lane of its
// four state vectors; the groups' rounds are interleaved so that one group's products run while
// another's wait on theirs (four groups drew a word in 0.34 ns, one group in 0.48: rounding_bench's
// random_bits). In a group, lane 4k + m holds block 4m + k: the two unpack steps that interleave
// the four words then leave blocks 4m .. 4m + 3 in output vector m, with no shuffle across
// 128-bit lanes.
template <int kGroups>
[[SIMPREC_TARGET_V4]] inline void philox_blocks(const RandomStream& rs, uint64_t first_block,
                                                uint32_t* out) {
  const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  const __m512i high =
      _mm512_set1_epi32(static_cast<int>(static_cast<uint32_t>(first_block >> 32)));
  __m512i c0[kGroups], c1[kGroups], c2[kGroups], c3[kGroups];
  for (int g = 0; g < kGroups; ++g) {
    const __m512i low = _mm512_set1_epi32(static_cast<int>(static_cast<uint32_t>(first_block)));
    c0[g] = _mm512_add_epi32(_mm512_add_epi32(low, order), _mm512_set1_epi32(16 * g));
    // A block whose low counter word wrapped carries into the high word.
    const __mmask16 carry = _mm512_cmplt_epu32_mask(c0[g], low);
    c1[g] = _mm512_mask_add_epi32(high, carry, high, _mm512_set1_epi32(1));
    c2[g] = _mm512_set1_epi32(static_cast<int>(static_cast<uint32_t>(rs.stream)));
    c3[g] = _mm512_set1_epi32(static_cast<int>(static_cast<uint32_t>(rs.stream >> 32)));
  }
  uint32_t k0 = static_cast<uint32_t>(rs.seed), k1 = static_cast<uint32_t>(rs.seed >> 32);
  const __m512i m0 = _mm512_set1_epi32(static_cast<int>(0xD2511F53u));
  const __m512i m1 = _mm512_set1_epi32(static_cast<int>(0xCD9E8D57u));
  for (int round = 0; round < 10; ++round) {
    for (int g = 0; g < kGroups; ++g) {
      __m512i hi0, lo0, hi1, lo1;
      multiply_wide16(c0[g], m0, hi0, lo0);
      multiply_wide16(c2[g], m1, hi1, lo1);
      constexpr int kXor3 = 0x96;  // ternary-logic table of a ^ b ^ c
      c0[g] = _mm512_ternarylogic_epi32(hi1, c1[g], _mm512_set1_epi32(static_cast<int>(k0)), kXor3);
      c1[g] = lo1;
      c2[g] = _mm512_ternarylogic_epi32(hi0, c3[g], _mm512_set1_epi32(static_cast<int>(k1)), kXor3);
      c3[g] = lo0;
    }
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  for (int g = 0; g < kGroups; ++g) {
    const __m512i w01_lo = _mm512_unpacklo_epi32(c0[g], c1[g]),
                  w01_hi = _mm512_unpackhi_epi32(c0[g], c1[g]);
    const __m512i w23_lo = _mm512_unpacklo_epi32(c2[g], c3[g]),
                  w23_hi = _mm512_unpackhi_epi32(c2[g], c3[g]);
    uint32_t* o = out + 64 * g;
    _mm512_storeu_si512(o, _mm512_unpacklo_epi64(w01_lo, w23_lo));
    _mm512_storeu_si512(o + 16, _mm512_unpackhi_epi64(w01_lo, w23_lo));
    _mm512_storeu_si512(o + 32, _mm512_unpacklo_epi64(w01_hi, w23_hi));
    _mm512_storeu_si512(o + 48, _mm512_unpackhi_epi64(w01_hi, w23_hi));
  }
}

[[SIMPREC_TARGET_V4]] void fill_random_bits_v4(const RandomStream& rs, uint64_t first_index,
                                               uint32_t* out, uint64_t count) {
  // Whole groups of 16 blocks from the first block boundary on, four at a time where there are
  // enough; the scalar loop does the rest.
  const uint64_t lead = std::min<uint64_t>(count, (4 - (first_index & 3)) & 3);
  const uint64_t groups = (count - lead) / 64;
  const uint64_t first_block = (first_index + lead) >> 2;
  uint64_t g = 0;
  for (; g + 4 <= groups; g += 4) philox_blocks<4>(rs, first_block + 16 * g, out + lead + 64 * g);
  for (; g < groups; ++g) philox_blocks<1>(rs, first_block + 16 * g, out + lead + 64 * g);
  fill_random_bits_baseline(rs, first_index, out, lead);
  const uint64_t done = lead + 64 * groups;
  fill_random_bits_baseline(rs, first_index + done, out + done, count - done);
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#else
[[SIMPREC_TARGET_V4]] void fill_random_bits_v4(const RandomStream& rs, uint64_t first_index,
                                               uint32_t* out, uint64_t count) {
  fill_random_bits_baseline(rs, first_index, out, count);
}
#endif

}  // namespace

void fill_random_bits(const RandomStream& rs, uint64_t first_index, uint32_t* out, uint64_t count) {
  for_this_cpu(fill_random_bits_baseline, fill_random_bits_v3, fill_random_bits_v4)(rs, first_index,
                                                                                    out, count);
}

}  // namespace simprec
