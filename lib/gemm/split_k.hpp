// Split-K as named strategies: how many consecutive pieces of K a GEMM kernel computes on their
// own (each piece's partial sums then added in fp32, in K order, from +0). One registry entry per
// strategy: its name, one-line doc, the syntax of its value and the piece length it gives.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace simprec::gemm {

struct GemmNumerics;

class SplitKStrategy {
 public:
  virtual ~SplitKStrategy() = default;
  virtual std::string_view name() const = 0;
  virtual std::string_view doc() const = 0;
  // "pieces:N" and the like; the name alone for a strategy without a value.
  virtual std::string_view syntax() const { return name(); }
  virtual bool takes_value() const { return false; }
  // The elements of K per piece (the last piece shorter) for an M x N x K GEMM; K or more: K is
  // not split. Throws std::invalid_argument when the numerics do not fit the strategy.
  virtual int piece_length(const GemmNumerics& numerics, int m, int n, int k) const = 0;
};

// Every strategy, "none" first.
std::span<const SplitKStrategy* const> split_k_strategies();
// The strategy a split_k value names ("pieces:4" names "pieces"), and its value (0 without one);
// throws std::invalid_argument naming the value, with a did-you-mean.
const SplitKStrategy& parse_split_k(std::string_view text, int& value);
const SplitKStrategy& split_k_none();

// cuBLAS's split-K on sm_90 (an H200, cuBLASLt 13.1), read off the grids of recorded split-K
// launches (the fitting shapes of tests/data/gemm/dispatch): floor(K bytes / kSplitBytes)
// pieces (at least one) of whole 128-byte K tiles, as even as that allows, at most as many as
// fill the thread blocks the GPU runs at once (ctas_at_once(cluster)) with the output tiles.
// cuBLAS's heuristic differs from it near both limits (docs/tensor_cores.md has how often).
constexpr int kSplitBytes = 2688;
constexpr int kKTileBytes = 128;
int ctas_at_once(int cluster);

}  // namespace simprec::gemm
