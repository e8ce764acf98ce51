#include "lib/discover/search_space.hpp"

#include <algorithm>
#include <array>
#include <set>
#include <string>

#include "emulation/accumulation.hpp"
#include "emulation/tensor_core.hpp"
#include "lib/attention/options.hpp"
#include "lib/attention/site.hpp"

namespace simprec::discover {
namespace {

using attention::Site;

// Facts of the call (the case gives them) and parameters without a kernel-plausible range.
constexpr std::array<std::string_view, 11> kFixedKeys = {
    "batch_heads",  "sms",      "compiled_for", "sram",    "pv_promote", "p_scale",
    "lazy_rescale", "qk_quant", "qk_scale",     "v_quant", "v_scale"};

// Forward-pass tiles kernels use: rows and columns moved one at a time.
constexpr std::array<int, 4> kTileRows = {16, 32, 64, 128};
constexpr std::array<int, 8> kTileCols = {16, 32, 48, 64, 80, 96, 128, 256};
constexpr std::array<std::string_view, 5> kSplits = {"1", "2", "3", "4", "auto"};

// The sites searched, by what varies there.
enum class SiteKind { kCast, kOutput, kProduct, kSoftmax };
struct SiteMove {
  std::string_view key;  // a site or the products group
  SiteKind kind;
  bool backward;
};
constexpr std::array<SiteMove, 16> kSiteMoves = {{
    {"p_cast", SiteKind::kCast, false},
    {"o_out", SiteKind::kOutput, false},
    {"products", SiteKind::kProduct, false},
    {"s", SiteKind::kProduct, false},
    {"pv_acc", SiteKind::kProduct, false},
    {"exp_arg", SiteKind::kSoftmax, false},
    {"exp", SiteKind::kSoftmax, false},
    {"rowsum", SiteKind::kSoftmax, false},
    {"o_rescale", SiteKind::kSoftmax, false},
    {"o_norm", SiteKind::kSoftmax, false},
    {"lse", SiteKind::kSoftmax, false},
    {"p_cast_bwd", SiteKind::kCast, true},
    {"ds_cast", SiteKind::kCast, true},
    {"grad_out", SiteKind::kOutput, true},
    {"d", SiteKind::kSoftmax, true},
    {"ds", SiteKind::kSoftmax, true},
}};

// The parameters only the backward pass reads (its slots say so themselves: backward_only).
constexpr std::array<std::string_view, 2> kBackwardParameters = {"bwd_tile", "bwd_exp_impl"};

std::vector<std::string> tile_values(const std::string& current, bool with_auto) {
  std::vector<std::string> out;
  if (with_auto) out.push_back("auto");
  const size_t x = current.find('x');
  if (x == std::string::npos) {
    out.push_back("64x64");
    return out;
  }
  const std::string rows = current.substr(0, x), cols = current.substr(x + 1);
  for (int c : kTileCols) out.push_back(rows + "x" + std::to_string(c));
  for (int r : kTileRows) out.push_back(std::to_string(r) + "x" + cols);
  return out;
}

// The values a free-form parameter is tried at.
std::vector<std::string> parameter_values(const attention::StructuralOption& o,
                                          const std::string& current) {
  if (o.key == "tile") return tile_values(current, true);
  if (o.key == "bwd_tile") return tile_values(current, true);
  if (o.key == "kv_splits") return {kSplits.begin(), kSplits.end()};
  return {};
}

std::string rounding_of(const attention::SiteSpec& s) {
  return attention::rounding_name(s.rounding);
}

std::vector<std::string> site_values(const SiteMove& m, const attention::AttentionConfig& c) {
  const attention::SiteSpec current =
      m.key == "products" ? c.site(Site::kS) : c.site(attention::parse_site(m.key));
  const std::string f = c.low_precision.name(), now = current.format.name();
  std::vector<std::string> out;
  switch (m.kind) {
    case SiteKind::kCast: {
      std::set<std::string> formats = {f, "fp16", "bf16", "fp32"};
      for (const std::string& format : formats) {
        for (const char* r : {"rne", "rtz"}) out.push_back(format + ":" + r);
      }
      break;
    }
    case SiteKind::kOutput:
      for (const char* r : {"rne", "rtz", "rna"}) out.push_back(now + ":" + r);
      break;
    case SiteKind::kProduct:
      for (const std::string& acc : accumulation_names()) {
        std::string format = now;
        if (acc.rfind("tc:", 0) == 0) format = tensor_core_model(acc).accumulator.name();
        out.push_back(format + ":rne:" + acc);
      }
      break;
    case SiteKind::kSoftmax: {
      std::set<std::string> formats = {"fp32", f};
      for (const std::string& format : formats) {
        std::string value = format + ":rne";
        if (attention::site_accumulates(attention::parse_site(m.key)))
          value += ":" + current.accumulation;
        out.push_back(value);
      }
      break;
    }
  }
  std::erase(out, attention::to_string(current));
  std::erase(out, now + ":" + rounding_of(current));
  return out;
}

bool backward_only(const attention::StructuralOption& o) {
  if (o.slot) return o.slot->backward_only;
  return std::find(kBackwardParameters.begin(), kBackwardParameters.end(), o.key) !=
         kBackwardParameters.end();
}

}  // namespace

bool is_fixed_key(std::string_view key) {
  return std::find(kFixedKeys.begin(), kFixedKeys.end(), key) != kFixedKeys.end();
}

std::vector<Move> single_moves(const attention::AttentionConfig& config,
                               const SpaceOptions& options) {
  std::vector<Move> moves;
  for (const attention::StructuralOption& o : attention::structural_options()) {
    const std::string key(o.key);
    if (is_fixed_key(key) || (!options.gradients && backward_only(o))) continue;
    const std::string current = o.get(config);
    std::vector<std::string> values;
    if (!o.choices.empty()) {
      for (std::string_view v : o.choices) values.emplace_back(v);
    } else {
      values = parameter_values(o, current);
    }
    for (const std::string& v : values) {
      if (v != current) moves.push_back({{key, v}});
    }
  }
  for (const SiteMove& m : kSiteMoves) {
    if (m.backward && !options.gradients) continue;
    for (const std::string& v : site_values(m, config)) moves.push_back({{std::string(m.key), v}});
  }
  return moves;
}

std::string describe_space() {
  std::string text =
      "slots: every strategy of every slot in the registry (simprec numerics --list); the "
      "backward pass's slots only with gradients given\n"
      "parameters with fixed values: each value\n"
      "tile, bwd_tile: auto, rows 16, 32, 64, 128 and columns 16, 32, 48, 64, 80, 96, 128, 256, "
      "one at a time\n"
      "kv_splits: 1, 2, 3, 4, auto\n"
      "p_cast, p_cast_bwd, ds_cast: F, fp16, bf16 or fp32, rne or rtz\n"
      "o_out, grad_out: the output's format, rne, rtz or rna\n"
      "products, s, pv_acc: every accumulation model (sequential, pairwise, kahan, exact and the "
      "registered tensor-core models)\n"
      "exp_arg, exp, rowsum, o_rescale, o_norm, lse, d, ds: fp32 or F\n"
      "never moved:";
  for (std::string_view k : kFixedKeys) text += " " + std::string(k);
  return text + "\n";
}

}  // namespace simprec::discover
