#include "emulation/random.hpp"

#include <Random123/philox.h>

#include "emulation/cpu_level.hpp"

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
[[SIMPREC_TARGET_V4]] void fill_random_bits_v4(const RandomStream& rs, uint64_t first_index,
                                               uint32_t* out, uint64_t count) {
  fill_random_bits_baseline(rs, first_index, out, count);
}

}  // namespace

void fill_random_bits(const RandomStream& rs, uint64_t first_index, uint32_t* out, uint64_t count) {
  for_this_cpu(fill_random_bits_baseline, fill_random_bits_v3, fill_random_bits_v4)(rs, first_index,
                                                                                    out, count);
}

}  // namespace simprec
