#include "lib/attention/dispatch.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace simprec::attention {
namespace {

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

}  // namespace

int64_t flash_kernel_head_dim(int64_t d) {
  for (int64_t k = 32; k <= 256; k += 32) {
    if (d <= k) return k;
  }
  return 0;
}

int flash_num_splits(int64_t batch_nheads_mblocks, int64_t num_sms, int64_t num_n_blocks,
                     int64_t max_splits) {
  // The source's arithmetic: float wave counts, compared with a double 0.8 and 0.85.
  if (batch_nheads_mblocks >= 0.8f * static_cast<float>(num_sms)) return 1;
  max_splits = std::min({max_splits, num_sms, num_n_blocks});
  const auto eligible = [num_n_blocks](int64_t n) {
    return n == 1 || ceil_div(num_n_blocks, n) != ceil_div(num_n_blocks, n - 1);
  };
  std::vector<float> efficiency;
  float best = 0.f;
  for (int64_t n = 1; n <= max_splits; ++n) {
    float eff = 0.f;
    if (eligible(n)) {
      const float waves = static_cast<float>(batch_nheads_mblocks * n) / num_sms;
      eff = waves / std::ceil(waves);
      best = std::max(best, eff);
    }
    efficiency.push_back(eff);
  }
  for (int64_t n = 1; n <= max_splits; ++n) {
    if (eligible(n) && efficiency[n - 1] >= 0.85 * best) return static_cast<int>(n);
  }
  return 1;
}

int64_t dispatch_batch_heads(const AttentionConfig& c, const AttentionShape& s) {
  return c.batch_heads > 0 ? c.batch_heads : s.problems();
}

void fill_automatic(AttentionConfig& c, const AttentionShape& s, std::string_view dispatch,
                    const std::function<KernelChoice(int64_t hd)>& choose) {
  const bool auto_tile = c.block_rows == 0 && c.block_cols == 0;
  const bool auto_bwd = c.bwd_block_rows == 0 && c.bwd_block_cols == 0;
  if (!auto_tile && !auto_bwd && c.kv_splits != 0) return;
  const int64_t hd = flash_kernel_head_dim(std::max(s.d, s.dv));
  if (hd == 0 || hd > 128) {
    throw std::invalid_argument(
        "dispatch=" + std::string(dispatch) + " has rules for head dimensions up to 128, not " +
        std::to_string(std::max(s.d, s.dv)) + "; give tile=, bwd_tile= and kv_splits= explicitly");
  }
  const KernelChoice choice = choose(hd);
  if (auto_tile) {
    c.block_rows = choice.forward.rows;
    c.block_cols = choice.forward.cols;
  }
  if (auto_bwd) {
    c.bwd_block_rows = choice.backward.rows;
    c.bwd_block_cols = choice.backward.cols;
  }
  if (c.kv_splits == 0) c.kv_splits = choice.splits;
}

void check_auto_tile(const AttentionConfig& c) {
  if (c.sram > 0 || c.block_rows != 0 || c.block_cols != 0 || c.dispatch->fills_auto_tile()) return;
  std::string known;
  for (const Dispatch* d : strategies_of<Dispatch>()) {
    if (d->fills_auto_tile())
      known += (known.empty() ? "" : " or ") + ("dispatch=" + std::string(d->name()));
  }
  throw std::invalid_argument("tile=auto needs a dispatch (" + known + "); give the tile as BRxBC");
}

AttentionConfig resolve_dispatch(const AttentionConfig& config, const AttentionShape& s) {
  AttentionConfig c = config;
  c.dispatch->resolve(c, s);
  return c;
}

AttentionConfig resolve_for_shape(const AttentionConfig& config, const AttentionShape& s) {
  AttentionConfig c = resolve_dispatch(with_sram_tile(config, s.d), s);
  c.tile_rule->resolve(c, s.nq, s.d);
  return c;
}

std::vector<std::pair<int64_t, int64_t>> split_key_tiles(int64_t key_tiles, int splits) {
  const int64_t n = std::max(1, splits);
  const int64_t per_split = ceil_div(key_tiles, n);
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (int64_t i = 0; i < n; ++i) {
    ranges.emplace_back(std::min(key_tiles, i * per_split),
                        std::min(key_tiles, (i + 1) * per_split));
  }
  return ranges;
}

}  // namespace simprec::attention
