// mma.sync.m16n8k8 (bf16 inputs, fp32 accumulator) on an H100 against the tc:sm90-mma-bf16-k8
// preset: 16 tiles of 16x8 outputs, each a chain of 8 instructions over K = 64 (D of one is C of
// the next), from C = 0 (tiles 0-7) and from random C (tiles 8-15); operands spread over 2^+-12
// with both signs and 5% zeros in A. Recorded once (tests/data/tensor_core/mma_bf16_k8_h100.bin:
// A 16x16x64 bf16, B 16x64x8 bf16 (k-major), C and D 16x16x8 fp32, bit patterns, little endian),
// a subset of 2048 tiles that all agreed (262,144 outputs).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "emulation/tensor_core.hpp"

namespace {

using namespace simprec;

constexpr int kTiles = 16, kK = 64;

TEST(TensorCoreK8, ChainsOfMmaK8OnTheH100MatchTheK8PresetOnly) {
  const auto path = std::filesystem::path(SIMPREC_SOURCE_DIR) / "tests" / "data" / "tensor_core" /
                    "mma_bf16_k8_h100.bin";
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << path;
  std::vector<uint16_t> a(kTiles * 16 * kK), b(kTiles * kK * 8);
  std::vector<uint32_t> c(kTiles * 128), d(kTiles * 128);
  in.read(reinterpret_cast<char*>(a.data()), a.size() * 2);
  in.read(reinterpret_cast<char*>(b.data()), b.size() * 2);
  in.read(reinterpret_cast<char*>(c.data()), c.size() * 4);
  in.read(reinterpret_cast<char*>(d.data()), d.size() * 4);
  ASSERT_TRUE(in);
  const auto agreeing = [&](const TensorCoreModel& model) {
    int same = 0;
    for (int t = 0; t < kTiles; ++t) {
      for (int i = 0; i < 16; ++i) {
        for (int j = 0; j < 8; ++j) {
          same += tensor_core_dot(model, &a[(t * 16 + i) * kK], 1, &b[t * kK * 8 + j], 8, kK,
                                  c[t * 128 + i * 8 + j]) == d[t * 128 + i * 8 + j];
        }
      }
    }
    return same;
  };
  EXPECT_EQ(agreeing(tensor_core_model("tc:sm90-mma-bf16-k8")), kTiles * 128);
  // The k = 16 instruction's model (blocks of 16) is not the k = 8 instruction's.
  EXPECT_LT(agreeing(tensor_core_model("tc:sm90-mma-bf16")), kTiles * 128 * 3 / 4);
}

}  // namespace
