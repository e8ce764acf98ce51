// random_bits (Random123's Philox4x32-10) and fill_random_bits (a hand-written Philox that must
// agree with it): a known-answer vector from Random123, the documented (seed, stream, index)
// mapping checked against Random123 directly, agreement for every alignment and length, and
// purity (same inputs, same bits).
#include <gtest/gtest.h>

#include <Random123/philox.h>

#include <cmath>
#include <random>
#include <set>
#include <vector>

#include "emulation/random.hpp"

namespace {

using namespace simprec;

// Random123's own known-answer test (kat_vectors: philox4x32 10, zero counter and key).
TEST(Random, KnownAnswerVector) {
  const uint32_t expected[4] = {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8};
  for (uint64_t i = 0; i < 4; ++i) EXPECT_EQ(random_bits({0, 0}, i), expected[i]) << i;
  std::vector<uint32_t> out(4);
  fill_random_bits({0, 0}, 0, out.data(), 4);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(out[i], expected[i]) << i;
}

// The mapping documented in random.hpp, written out against Random123 here.
uint32_t reference(uint64_t seed, uint64_t stream, uint64_t index) {
  r123::Philox4x32 rng;
  const uint64_t block = index / 4;
  r123::Philox4x32::ctr_type ctr = {
      {static_cast<uint32_t>(block), static_cast<uint32_t>(block >> 32),
       static_cast<uint32_t>(stream), static_cast<uint32_t>(stream >> 32)}};
  r123::Philox4x32::key_type key = {
      {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)}};
  return rng(ctr, key)[index % 4];
}

TEST(Random, RandomBitsIsDocumentedPhilox) {
  std::mt19937_64 rng(1);
  for (int i = 0; i < 100000; ++i) {
    const uint64_t seed = rng(), stream = (i & 1) ? rng() : rng() % 4;
    const uint64_t index = (i & 2) ? rng() : rng() % 1000;
    ASSERT_EQ(random_bits({seed, stream}, index), reference(seed, stream, index))
        << seed << " " << stream << " " << index;
  }
}

TEST(Random, FillAgreesWithRandomBitsForEveryAlignmentAndLength) {
  std::mt19937_64 rng(2);
  for (int trial = 0; trial < 200; ++trial) {
    const RandomStream rs{rng(), rng() % 3 == 0 ? rng() : trial};
    uint64_t first = trial < 100 ? static_cast<uint64_t>(trial % 8) : rng();
    if (trial % 7 == 0) first = ~uint64_t{0} - 65536;  // high counter words set
    // The block counter's low word wraps 10 blocks in: the carry into its high word.
    if (trial % 7 == 1) first = (uint64_t{1} << 34) * (1 + trial % 5) - 37 - trial % 4;
    for (uint64_t count : {0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 100, 1027, 4099}) {
      std::vector<uint32_t> out(count + 2, 0xabcdef01);
      fill_random_bits(rs, first, out.data() + 1, count);
      EXPECT_EQ(out[0], 0xabcdef01u);
      EXPECT_EQ(out[count + 1], 0xabcdef01u) << "wrote past the end";
      for (uint64_t i = 0; i < count; ++i) {
        ASSERT_EQ(out[i + 1], random_bits(rs, first + i))
            << "seed " << rs.seed << " stream " << rs.stream << " first " << first << " i " << i;
      }
    }
  }
}

TEST(Random, PureFunctionOfSeedStreamIndex) {
  const RandomStream a{123, 4}, b{123, 5}, c{124, 4};
  std::set<uint32_t> seen;
  for (uint64_t i = 0; i < 1000; ++i) {
    EXPECT_EQ(random_bits(a, i), random_bits(a, i));
    EXPECT_NE(random_bits(a, i) == random_bits(b, i) && random_bits(a, i) == random_bits(c, i),
              true);
    seen.insert(random_bits(a, i));
  }
  EXPECT_GT(seen.size(), 995u);  // 1000 draws of 32 bits: a collision or two at most
  // Order and chunking do not matter.
  std::vector<uint32_t> whole(5000), parts(5000);
  fill_random_bits(a, 10, whole.data(), 5000);
  fill_random_bits(a, 10, parts.data(), 1234);
  fill_random_bits(a, 10 + 1234, parts.data() + 1234, 5000 - 1234);
  EXPECT_EQ(whole, parts);
}

// Bit balance of the stream (a smoke test of independence): each of the 32 bit positions is
// set with frequency 1/2 within 5 sigma over 2^16 draws.
TEST(Random, BitsAreBalanced) {
  constexpr int kN = 1 << 16;
  std::vector<uint32_t> v(kN);
  fill_random_bits({7, 7}, 0, v.data(), kN);
  for (int bit = 0; bit < 32; ++bit) {
    int ones = 0;
    for (uint32_t x : v) ones += (x >> bit) & 1;
    EXPECT_LE(std::abs(ones - kN / 2), 5 * std::sqrt(kN / 4.0)) << bit;
  }
}

}  // namespace
