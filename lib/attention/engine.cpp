#include "lib/attention/engine.hpp"

#include <algorithm>
#include <numbers>
#include <stdexcept>
#include <string>

#include "lib/attention/dispatch.hpp"

namespace simprec::attention {

Engine::Engine(const AttentionConfig& config, const AttentionShape& s) : cfg(config), shape(s) {
  check_structure(config);
  scale = softmax_scale(config, s);
  lanes = config.rowsum_lanes;
  const bool exp2_impl =
      is_exp2(config.exp_impl) || is_exp2(config.bwd_exp_impl.value_or(config.exp_impl));
  device_exp2 = config.exp2_table && exp2_impl;
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
  scale_log2 = rd(Site::kExpArg, scale * std::numbers::log2e);
  scale_rounded = rd(Site::kExpArg, scale);
  log2e = rd(Site::kExpArg, std::numbers::log2e);
  bwd_exp_impl = config.bwd_exp_impl.value_or(config.exp_impl);
  rows_max = std::max(s.nq, s.nk);
  // Partial row sums take columns 0..lanes-1 (and the final combination 0..2) of their rows.
  // Warp-group row sums take columns up to 7 past a group's first column.
  // Two-level accumulation rescales its chain with column 4 of a row.
  const bool small_columns = lanes > 1 || config.pv_promote_blocks > 0;
  cols_max = std::max({s.nq, s.nk, s.d, s.dv, small_columns ? int64_t{8} : int64_t{0}}) + 1 +
             (config.rowsum_block != RowsumBlock::kRunning ? 17 : 0);
  const auto [bwd_rows, bwd_cols] = backward_tile(config);
  const int64_t smallest =
      std::min<int64_t>({config.block_rows, config.block_cols, bwd_rows, bwd_cols});
  const int64_t tiles = std::max(s.nq, s.nk) / std::max<int64_t>(1, smallest) + 2;
  steps_max = static_cast<uint64_t>(tiles) * (std::max<int64_t>({s.nq, s.nk, s.d, s.dv}) + 2) + 16;
}

void Engine::for_quantized_problem(const InputScales& s, int64_t p) {
  scales = &s;
  if (!cfg.quant.quantizes_qk()) return;
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
  if (c.rowsum_warps != 1 && c.rowsum_warps != 2) {
    throw std::invalid_argument("rowsum_warps must be 1 or 2, not " +
                                std::to_string(c.rowsum_warps));
  }
  if (c.rowsum_lanes != 1 && c.rowsum_lanes != 4) {
    throw std::invalid_argument("rowsum_lanes must be 1 or 4, not " +
                                std::to_string(c.rowsum_lanes));
  }
  // Standard attention ignores the flash-only options (rowsum_lanes, pv_promote, p_scale,
  // lazy_rescale), as the standard-attention baseline of a flash configuration needs.
  if (c.algorithm != Algorithm::kFlash) return;
  if (c.pv_promote_blocks != 0 && c.pv_mode != PvMode::kFused) {
    throw std::invalid_argument("pv_promote=" + std::to_string(c.pv_promote_blocks) +
                                " needs pv_mode=fused (per-block mode already adds each block "
                                "at o_update)");
  }
  if (c.rowsum_block == RowsumBlock::kWarpGroups &&
      (c.rowsum_lanes != 1 || c.pv_mode == PvMode::kPerBlock)) {
    throw std::invalid_argument("rowsum_block=warp-groups needs rowsum_lanes=1 and pv_mode=fused");
  }
  if (c.rowsum_lanes != 1 && c.pv_mode == PvMode::kPerBlock) {
    throw std::invalid_argument("rowsum_lanes=4 needs pv_mode=fused");
  }
  if (c.rescale != RescaleImpl::kExact && !is_exp2(c.exp_impl)) {
    throw std::invalid_argument("rescale=" + std::string(to_string(c.rescale)) +
                                " needs an exp2 exp_impl (exp2-fma, exp2, exp2-scaled, "
                                "exp2-scaled-fma), not " +
                                std::string(to_string(c.exp_impl)));
  }
  if (c.flash_state == FlashState::kNormalised &&
      (c.pv_mode != PvMode::kFused || c.rowsum_lanes != 1 ||
       c.rowsum_block != RowsumBlock::kRunning || c.rescale != RescaleImpl::kExact)) {
    throw std::invalid_argument(
        "flash_state=normalised (FlashAttention-1) forms its own tile sums and rescales: it "
        "needs pv_mode=fused, rowsum_lanes=1, rowsum_block=running and rescale=exact");
  }
  if (c.rowsum_rescale == RowsumRescale::kFma && c.rowsum_lanes != 4) {
    throw std::invalid_argument("rowsum_rescale=fma needs rowsum_lanes=4");
  }
  if (c.rowsum_block == RowsumBlock::kQuadFma &&
      (c.rowsum_lanes != 1 || c.pv_mode == PvMode::kPerBlock)) {
    throw std::invalid_argument("rowsum_block=quad-fma needs rowsum_lanes=1 and pv_mode=fused");
  }
  if (c.block_mask == BlockMask::kDiagonalFirst &&
      (kSparseBlock % c.block_rows != 0 || kSparseBlock % c.block_cols != 0)) {
    throw std::invalid_argument("block_mask=diagonal-first needs a tile that divides " +
                                std::to_string(kSparseBlock) + "x" + std::to_string(kSparseBlock) +
                                ", not " + std::to_string(c.block_rows) + "x" +
                                std::to_string(c.block_cols));
  }
  if (c.lse_impl == LseImpl::kLog2 && !is_exp2_scaled(c.exp_impl)) {
    throw std::invalid_argument(
        "lse_impl=log2 needs exp_impl exp2-scaled or exp2-scaled-fma, not " +
        std::string(to_string(c.exp_impl)));
  }
  const SiteSpec& p_cast = c.site(Site::kPCast);
  if (c.tiled_random && p_cast.rounding.mode == RoundingMode::kStochastic &&
      32 % p_cast.rounding.sr_bits != 0) {
    throw std::invalid_argument(
        "tiled random bits at p_cast need a bit count that divides 32 (1, 2, 4, 8, 16, 32), "
        "not " +
        std::to_string(p_cast.rounding.sr_bits));
  }
}

}  // namespace simprec::attention
