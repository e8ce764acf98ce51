#include "lib/gemm/split_k.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "emulation/did_you_mean.hpp"
#include "emulation/excerpt.hpp"
#include "lib/gemm/gemm_numerics.hpp"
#include "lib/limits/strict_parse.hpp"

namespace simprec::gemm {
namespace {

int ceil_div(int64_t a, int64_t b) {
  return static_cast<int>((a + b - 1) / b);
}

class None final : public SplitKStrategy {
 public:
  std::string_view name() const override { return "none"; }
  std::string_view doc() const override { return "K is not split: one chain over the whole of K"; }
  int piece_length(const GemmNumerics&, int, int, int k) const override { return k; }
};

class Pieces final : public SplitKStrategy {
 public:
  std::string_view name() const override { return "pieces"; }
  std::string_view doc() const override {
    return "N pieces of ceil(K / N) elements (the last shorter)";
  }
  std::string_view syntax() const override { return "pieces:N"; }
  bool takes_value() const override { return true; }
  int piece_length(const GemmNumerics& g, int, int, int k) const override {
    return std::max(1, ceil_div(k, g.split_value));
  }
};

class Length final : public SplitKStrategy {
 public:
  std::string_view name() const override { return "length"; }
  std::string_view doc() const override { return "pieces of L elements of K (the last shorter)"; }
  std::string_view syntax() const override { return "length:L"; }
  bool takes_value() const override { return true; }
  int piece_length(const GemmNumerics& g, int, int, int) const override { return g.split_value; }
};

class CublasSm90 final : public SplitKStrategy {
 public:
  std::string_view name() const override { return "cublas-sm90"; }
  std::string_view doc() const override {
    return "cuBLAS on sm_90: floor(K bytes / 2688) pieces (at least 1) of whole 128-byte K "
           "tiles, at most ctas(cluster) / output tiles (tile, cluster: the kernel's)";
  }
  int piece_length(const GemmNumerics& g, int m, int n, int k) const override {
    const int bytes = g.instruction->input_a.width() / 8;
    if (bytes < 1 || g.instruction->input_b.width() != g.instruction->input_a.width()) {
      throw std::invalid_argument("split_k=cublas-sm90 needs 8- or 16-bit inputs of one width; " +
                                  g.instruction->name + " takes " + g.instruction->input_name());
    }
    const int64_t rows = g.problem_m ? g.problem_m : m, cols = g.problem_n ? g.problem_n : n;
    const int64_t tiles = int64_t{ceil_div(rows, g.tile_m)} * ceil_div(cols, g.tile_n);
    const int by_bytes = static_cast<int>(std::max<int64_t>(1, int64_t{k} * bytes / kSplitBytes));
    const int pieces =
        std::min<int64_t>(by_bytes, std::max<int64_t>(1, ctas_at_once(g.cluster) / tiles));
    const int k_tile = kKTileBytes / bytes;
    return ceil_div(ceil_div(k, pieces), k_tile) * k_tile;
  }
};

}  // namespace

int ctas_at_once(int cluster) {
  return cluster == 8 ? 96 : 132;
}

std::span<const SplitKStrategy* const> split_k_strategies() {
  static const None none;
  static const Pieces pieces;
  static const Length length;
  static const CublasSm90 cublas;
  static const SplitKStrategy* const all[] = {&none, &pieces, &length, &cublas};
  return all;
}

const SplitKStrategy& split_k_none() {
  return *split_k_strategies()[0];
}

const SplitKStrategy& parse_split_k(std::string_view text, int& value) {
  const size_t colon = text.find(':');
  const std::string_view name = text.substr(0, colon);
  std::vector<std::string> names;
  std::string known;
  for (const SplitKStrategy* s : split_k_strategies()) {
    names.emplace_back(s->name());
    known += (known.empty() ? "" : ", ") + std::string(s->syntax());
    if (s->name() != name) continue;
    if (s->takes_value() != (colon != std::string_view::npos)) {
      throw std::invalid_argument("split_k '" + excerpt(text) + "': expected " +
                                  std::string(s->syntax()));
    }
    value =
        s->takes_value()
            ? static_cast<int>(limits::parse_integer(text.substr(colon + 1), 1, int64_t{1} << 30,
                                                     "split_k " + std::string(s->name())))
            : 0;
    return *s;
  }
  throw std::invalid_argument("unknown split_k '" + excerpt(text) + "'" +
                              did_you_mean(name, names) + " (known: " + known + ")");
}

}  // namespace simprec::gemm
