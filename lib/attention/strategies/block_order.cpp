// Where FlashAttention-1's two tile sizes for an SRAM of M elements go (Dao et al. 2022,
// Algorithm 1: Bc = ceil(M / 4d), Br = min(ceil(M / 4d), d)), and paper B's variations of it.
#include "lib/attention/strategies/tiling.hpp"

namespace simprec::attention {
namespace {

class Paper final : public BlockOrder {
 public:
  Paper() : BlockOrder({.name = "paper", .doc = "Br = min(ceil(M/4d), d), Bc = ceil(M/4d)"}) {}
  std::pair<int64_t, int64_t> tile(int64_t wide, int64_t narrow) const override {
    return {narrow, wide};
  }
};

class Swapped final : public BlockOrder {
 public:
  Swapped() : BlockOrder({.name = "swapped", .doc = "Br and Bc exchanged"}) {}
  std::pair<int64_t, int64_t> tile(int64_t wide, int64_t narrow) const override {
    return {wide, narrow};
  }
};

class Square final : public BlockOrder {
 public:
  Square() : BlockOrder({.name = "square", .doc = "both ceil(M/4d)"}) {}
  std::pair<int64_t, int64_t> tile(int64_t wide, int64_t) const override { return {wide, wide}; }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(Paper, Swapped, Square)

}  // namespace simprec::attention
