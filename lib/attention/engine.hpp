// The site-by-site engine's state for one run (private to lib/attention): the configuration's
// rounders and product sites, the softmax scale and its rounded forms, and the layout of the
// random indices every rounding of every problem draws from.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "lib/attention/config.hpp"
#include "lib/attention/input_quantization.hpp"
#include "lib/attention/product.hpp"
#include "lib/attention/tensors.hpp"

namespace simprec::attention {

struct Engine {
  const AttentionConfig& cfg;
  AttentionShape shape;
  // The softmax scale of the exponent arguments: 1 where the scores are modified (masking.hpp),
  // since Head::scores then gives them scaled.
  double scale;
  // The softmax scale the gradients of the scores are multiplied by (grad_scale): the scale.
  double grad_scale;
  // Where the scores are modified: the scale they are multiplied by (rounded at s) before the
  // modification, and a soft-cap's 1/cap (rounded at s); 1 otherwise.
  double score_scale = 1.0;
  // What modifies the scores (Masking::score_program), or null.
  std::shared_ptr<const ScoreMod> score_mod;
  bool prescaled_scores = false;
  double scale_log2;           // c = scale*log2(e) rounded at exp_arg
  double log2e;                // log2(e) rounded at exp_arg
  double scale_rounded;        // the softmax scale rounded at exp_arg (exp2-scaled's SM_SCALE)
  const ExpArg* bwd_exp_impl;  // the backward pass's exp implementation
  std::array<SiteRounder, kSiteCount> r;
  std::vector<ProductSite> products;  // indexed through product_index
  std::array<int, kSiteCount> product_index{};
  // Index layout of random streams: (problem, row, column, step).
  uint64_t rows_max, cols_max, steps_max;
  bool device_exp2 = false;  // the supplied exp2 (cfg.device_tables) applies
  int tiled_p_bits = 0;      // > 0: p_cast rounds with tiled_random::p_draw bits
  int lanes = 1;             // partial row sums
  // Quantised inputs' scales (input_quantization.hpp), or nullptr. An engine for one problem
  // (for_quantized_problem) then carries that problem's softmax scale and exponent constant.
  const InputScales* scales = nullptr;

  // Throws std::invalid_argument on a configuration the engine does not compute
  // (check_structure).
  Engine(const AttentionConfig& config, const AttentionShape& s);

  // The strategies' requirements (options.hpp, check_requirements) and the conditions on sites
  // and parameters the engine itself puts; throws std::invalid_argument naming the problem.
  static void check_structure(const AttentionConfig& c);

  // This engine made problem p's of a run with quantised inputs: with qk_scale tensor or head,
  // the descale folded into the exponent constant, c' = fp32(c fp32(q_s k_s)) (FlashAttention-3's
  // softmax_scale_log2 *= q_descale * k_descale) and the softmax scale c' ln 2 (in double, for the
  // exact rescale, the LSE and lazy_rescale's threshold); with qk_scale=block, the scores are
  // dequantised in log2 units (Head::scores), so c = 1 and the softmax scale ln 2.
  void for_quantized_problem(const InputScales& s, int64_t p);

  double rd(Site s, double x, uint64_t idx = 0) const { return r[static_cast<int>(s)](x, idx); }
  double rd_exact(Site s, double hi, double lo, uint64_t idx = 0) const {
    return r[static_cast<int>(s)].round_exact(hi, lo, idx);
  }
  const ProductSite& product(Site s) const { return products[product_index[static_cast<int>(s)]]; }

  // A unique random index for (problem, row, column, step).
  uint64_t idx(int64_t p, int64_t i, int64_t j, int64_t step = 0) const {
    return ((static_cast<uint64_t>(p) * rows_max + i) * cols_max + j) * steps_max + step;
  }
  IndexMap imap(int64_t p, int64_t row0, int64_t col0, int64_t step) const {
    return IndexMap{idx(p, row0, col0, step), cols_max * steps_max, steps_max};
  }
};

}  // namespace simprec::attention
