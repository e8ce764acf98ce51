#include "lib/attention/engine.hpp"

#include <algorithm>
#include <numbers>
#include <stdexcept>
#include <string>

#include "lib/attention/dispatch.hpp"
#include "lib/attention/options.hpp"

namespace simprec::attention {

Engine::Engine(const AttentionConfig& config, const AttentionShape& s) : cfg(config), shape(s) {
  check_structure(config);
  scale = config.softmax_scale->scale(softmax_scale(config, s));
  grad_scale = scale;
  lanes = config.rowsum_block->lanes(config);
  bwd_exp_impl = &config.backward_exp();
  device_exp2 = config.device_tables[static_cast<int>(DeviceFn::kExp2)] &&
                (config.exp_impl->base2() || bwd_exp_impl->base2());
  const SiteSpec& p_cast = config.site(Site::kPCast);
  if (config.tiled_random && p_cast.rounding.mode == RoundingMode::kStochastic) {
    tiled_p_bits = p_cast.rounding.sr_bits;
  }
  for (int i = 0; i < kSiteCount; ++i) {
    const Site site = static_cast<Site>(i);
    r[i] = SiteRounder(config.site(site), config.seed, site);
    product_index[i] = -1;
    if (site_accumulates(site)) {
      product_index[i] = static_cast<int>(products.size());
      products.emplace_back(site, config.site(site), config.seed);
    }
  }
  // Modified scores are scaled (rounded at s) and modified before the softmax, which then takes
  // them with scale 1, as the kernels that add a bias or apply a score_mod do.
  if (config.masking.modifies_scores()) {
    prescaled_scores = true;
    score_scale = rd(Site::kS, scale);
    score_mod = config.masking.score_program(s.heads);
    scale = 1.0;
  }
  scale_log2 = rd(Site::kExpArg, scale * std::numbers::log2e);
  scale_rounded = rd(Site::kExpArg, scale);
  log2e = rd(Site::kExpArg, std::numbers::log2e);
  rows_max = std::max(s.nq, s.nk);
  // Partial row sums take columns 0..lanes-1 (and the final combination 0..2) of their rows;
  // two-level accumulation rescales its chain with column 4 of a row; the row sum strategy may
  // take more columns past a row's (RowSum::extra_index_columns).
  const bool small_columns = lanes > 1 || config.pv_promote_blocks > 0;
  cols_max = std::max({s.nq, s.nk, s.d, s.dv, small_columns ? int64_t{8} : int64_t{0}}) + 1 +
             config.rowsum_block->extra_index_columns();
  const auto [bwd_rows, bwd_cols] = backward_tile(config);
  const int64_t smallest =
      std::min<int64_t>({config.block_rows, config.block_cols, bwd_rows, bwd_cols});
  const int64_t tiles = std::max(s.nq, s.nk) / std::max<int64_t>(1, smallest) + 2;
  steps_max = static_cast<uint64_t>(tiles) * (std::max<int64_t>({s.nq, s.nk, s.d, s.dv}) + 2) + 16;
}

void Engine::for_quantized_problem(const InputScales& s, int64_t p) {
  scales = &s;
  if (!cfg.quant.quantizes_qk()) return;
  if (prescaled_scores)
    throw std::invalid_argument(
        "quantised Q and K with a bias or a score modification: not modelled");
  if (cfg.quant.qk_scale == QuantScale::kBlock) {
    scale_log2 = 1.0;
    scale = std::numbers::ln2;
    return;
  }
  const double descale = rd(Site::kExpArg, s.q_scale(p, 0) * s.k_scale(p, 0));
  scale_log2 = rd(Site::kExpArg, scale_log2 * descale);
  scale = scale_log2 * std::numbers::ln2;
}

void Engine::check_structure(const AttentionConfig& c) {
  check_requirements(c);
  check_run_requirements(c);
}

}  // namespace simprec::attention
