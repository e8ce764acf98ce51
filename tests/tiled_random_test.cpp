// emulation/tiled_random.hpp, the random bits the CUDA flash kernels and the emulation share:
// its Philox4x32-10 against Random123's, and p_draw's documented bit layout rebuilt here bit by
// bit from Random123 blocks for k = 8, 16 and 32.
#include <gtest/gtest.h>

#include <Random123/philox.h>

#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include "emulation/tiled_random.hpp"

namespace {

using namespace simprec;

r123::Philox4x32::ctr_type random123(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3,
                                     uint32_t k0, uint32_t k1) {
  r123::Philox4x32 rng;
  return rng({{c0, c1, c2, c3}}, {{k0, k1}});
}

TEST(TiledRandom, PhiloxIsRandom123s) {
  // Random123's known answer (kat_vectors: philox4x32 10, zero counter and key).
  const tiled_random::Block zero = tiled_random::philox4x32_10(0, 0, 0, 0, 0, 0);
  const uint32_t expected[4] = {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8};
  for (int w = 0; w < 4; ++w) EXPECT_EQ(zero.w[w], expected[w]) << w;

  std::mt19937 rng(7);
  for (int trial = 0; trial < 10000; ++trial) {
    uint32_t c[4], k[2];
    for (auto& x : c) x = trial % 3 == 0 ? rng() % 4 : rng();
    for (auto& x : k) x = trial % 5 == 0 ? ~uint32_t{0} - rng() % 2 : rng();
    const tiled_random::Block got = tiled_random::philox4x32_10(c[0], c[1], c[2], c[3], k[0], k[1]);
    const auto want = random123(c[0], c[1], c[2], c[3], k[0], k[1]);
    for (int w = 0; w < 4; ++w) ASSERT_EQ(got.w[w], want[w]) << trial << " word " << w;
  }
}

// The kernels' split of the first two rounds for counters that share c0, c2 and c3
// (fix_counters once, then one block per c1) gives Philox4x32-10's blocks, and p_row / p_block
// the layout's.
TEST(TiledRandom, FixedCountersGiveTheSameBlocks) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 10000; ++trial) {
    uint32_t c[4], k[2];
    for (auto& x : c) x = trial % 3 == 0 ? rng() % 4 : rng();
    for (auto& x : k) x = trial % 5 == 0 ? ~uint32_t{0} - rng() % 2 : rng();
    const tiled_random::RoundKeys keys = tiled_random::round_keys(k[0], k[1]);
    const auto fixed = tiled_random::fix_counters(c[0], c[2], c[3], keys);
    const tiled_random::Block got = tiled_random::philox4x32_10(fixed, c[1], keys);
    const auto want = random123(c[0], c[1], c[2], c[3], k[0], k[1]);
    for (int w = 0; w < 4; ++w) ASSERT_EQ(got.w[w], want[w]) << trial << " word " << w;
  }
  const uint64_t seed = 0x0123456789abcdefull;
  const tiled_random::RoundKeys keys = tiled_random::round_keys(seed);
  for (uint32_t row : {0u, 7u, 4095u}) {
    for (uint32_t lane = 0; lane < 4; ++lane) {
      const auto fixed = tiled_random::p_row(keys, 3, row, lane, 1);
      for (uint32_t group : {0u, 1u, 63u, 1000u}) {
        const tiled_random::Block a = tiled_random::p_block(fixed, group, keys);
        const tiled_random::Block b = tiled_random::p_block(seed, 3, row, group, lane, 1);
        for (int w = 0; w < 4; ++w) ASSERT_EQ(a.w[w], b.w[w]) << row << " " << lane << " " << group;
      }
    }
  }
}

// The documented layout, rebuilt bit by bit: element e = 2*((col % 64) / 8) + col % 2 takes bits
// [e*k, e*k + k) of the string of blocks call = 0, 1, ... (words 0..3, low bits first), block
// `call` = Philox(counter {row, col / 64, problem, lane | call << 2 | 0x5e000000}, key {seed low,
// seed high}), lane = (col % 8) / 2; the draw sits in the top k bits of the result.
uint32_t documented_draw(uint64_t seed, uint32_t problem, uint32_t row, uint32_t col, int k) {
  const uint32_t lane = (col % 8) / 2;
  const int e = 2 * static_cast<int>((col % 64) / 8) + static_cast<int>(col % 2);
  std::vector<int> bits;  // the 16*k-bit string
  for (uint32_t call = 0; call < static_cast<uint32_t>(16 * k / 128); ++call) {
    const auto block = random123(row, col / 64, problem, lane | (call << 2) | 0x5e000000u,
                                 static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
    for (int w = 0; w < 4; ++w) {
      for (int b = 0; b < 32; ++b) bits.push_back((block[w] >> b) & 1);
    }
  }
  uint64_t value = 0;
  for (int i = 0; i < k; ++i) value |= static_cast<uint64_t>(bits[e * k + i]) << i;
  return static_cast<uint32_t>(value << (32 - k));
}

TEST(TiledRandom, PDrawFollowsTheDocumentedLayout) {
  std::mt19937_64 rng(3);
  for (int k : {8, 16, 32}) {
    for (int trial = 0; trial < 300; ++trial) {
      const uint64_t seed = trial % 4 == 0 ? trial : rng();
      const auto problem = static_cast<uint32_t>(rng() % 64);
      const auto row = static_cast<uint32_t>(rng() % 4096);
      for (uint32_t col = 0; col < 192; ++col) {
        ASSERT_EQ(tiled_random::p_draw(seed, problem, row, col, k),
                  documented_draw(seed, problem, row, col, k))
            << "k " << k << " seed " << seed << " problem " << problem << " row " << row << " col "
            << col;
      }
    }
  }
}

TEST(TiledRandom, AThreadsSixteenElementsShareOneBlockAtEightBits) {
  // k = 8: the 16 elements of (row, 64-column group, lane) use the 128 bits of one block, each
  // byte once; the low bits of every draw are zero.
  const uint64_t seed = 0x123456789abcdefULL;
  for (uint32_t lane = 0; lane < 4; ++lane) {
    const auto block = random123(5, 1, 2, lane | 0x5e000000u, static_cast<uint32_t>(seed),
                                 static_cast<uint32_t>(seed >> 32));
    std::multiset<uint32_t> bytes, draws;
    for (int w = 0; w < 4; ++w) {
      for (int b = 0; b < 4; ++b) bytes.insert((block[w] >> (8 * b)) & 0xff);
    }
    for (uint32_t n = 0; n < 8; ++n) {
      for (uint32_t u = 0; u < 2; ++u) {
        const uint32_t col = 64 + 8 * n + 2 * lane + u;
        const uint32_t draw = tiled_random::p_draw(seed, 2, 5, col, 8);
        EXPECT_EQ(draw & 0x00ffffffu, 0u);
        draws.insert(draw >> 24);
      }
    }
    EXPECT_EQ(draws, bytes) << "lane " << lane;
  }
}

}  // namespace
