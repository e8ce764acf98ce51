// FlexAttention's block mask (torch.nn.attention.flex_attention.create_block_mask, sparse blocks of
// 128 x 128) of a causal mask or of any mask_mod: for each query block, the key blocks of its
// partial sparse blocks (some scores masked) first, then the full ones, each in increasing order,
// and none that masks every score; the backward pass runs the partial then the full block lists
// likewise. create_block_mask pads the dense mask with False to whole blocks, so a
// visible block is partial where the diagonal crosses it or where it reaches past a length that
// 128 does not divide.
#include <string>

#include "lib/attention/config.hpp"
#include "lib/attention/strategies/block_mask.hpp"

namespace simprec::attention {
namespace {

class DiagonalFirst final : public BlockMask {
 public:
  DiagonalFirst()
      : BlockMask(
            {.name = "diagonal-first",
             .doc = "FlexAttention's 128x128 block mask (causal, or the mask given): the partial "
                    "sparse blocks (some scores masked, or past a length 128 does not "
                    "divide), then the full ones, each ascending; the backward pass "
                    "likewise"}) {}

  std::string check(const AttentionConfig& c) const override {
    if (kSparseBlock % c.block_rows == 0 && kSparseBlock % c.block_cols == 0) return {};
    return "needs a tile that divides " + std::to_string(kSparseBlock) + "x" +
           std::to_string(kSparseBlock) + ", not " + std::to_string(c.block_rows) + "x" +
           std::to_string(c.block_cols);
  }

  std::vector<int64_t> key_tiles(const BlockGrid& g, int64_t i0, int64_t /*i1*/) const override {
    const int64_t tiles = g.key_tiles();
    std::vector<int64_t> order;
    if (!g.causal && !g.masked_beyond_causal()) {
      for (int64_t t = 0; t < tiles; ++t) order.push_back(t);
      return order;
    }
    const int64_t qtile = i0 / g.rows;
    for (const bool first : {true, false}) {
      for (int64_t t = 0; t < tiles; ++t) {
        if (g.visible(qtile, t) && partial(g, i0, t * g.cols) == first) order.push_back(t);
      }
    }
    return order;
  }

  bool partial(const BlockGrid& g, int64_t i0, int64_t j0) const override {
    const int64_t qb = i0 / kSparseBlock, kb = j0 / kSparseBlock;
    const auto cut = [](int64_t block, int64_t n) {
      return n % kSparseBlock != 0 && block == n / kSparseBlock;
    };
    if (cut(qb, g.nq) || cut(kb, g.nk)) return true;
    if (g.masked_beyond_causal()) {  // a sparse block some of whose scores are masked
      const int64_t q0 = qb * kSparseBlock, k0 = kb * kSparseBlock;
      return !g.visibility->all(q0, std::min(g.nq, q0 + kSparseBlock), k0,
                                std::min(g.nk, k0 + kSparseBlock));
    }
    return qb == kb;
  }

  // The pairs on partial sparse blocks first, then the full ones, each by key tile and then query
  // tile: dQ of a query tile sees its partial key blocks, then its full ones, and dK and dV of a
  // key tile its partial query blocks, then its full ones, each in increasing order.
  std::optional<std::vector<std::pair<int64_t, int64_t>>> backward_pairs(
      const BlockGrid& g) const override {
    if (!g.causal && !g.masked_beyond_causal()) return std::nullopt;
    std::vector<std::pair<int64_t, int64_t>> pairs;
    for (const bool first : {true, false}) {
      for (int64_t tile = 0; tile < g.key_tiles(); ++tile) {
        for (int64_t qtile = 0; qtile < g.query_tiles(); ++qtile) {
          if (g.visible(qtile, tile) && partial(g, qtile * g.rows, tile * g.cols) == first) {
            pairs.emplace_back(tile, qtile);
          }
        }
      }
    }
    return pairs;
  }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(DiagonalFirst)

}  // namespace simprec::attention
