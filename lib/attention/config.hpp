// What an emulated attention run computes: the algorithm, its structural choices, a rounding
// specification for every named site, and the mitigations. Presets build these (preset.hpp);
// `--set` and `--mitigation` edit them.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "lib/attention/device_function.hpp"
#include "lib/attention/site.hpp"

namespace simprec::attention {

enum class Algorithm : uint8_t { kStandard, kFlash };

// How P is computed from the scores S (m the row max, scale the softmax scale):
//   kExact:  P = exp(scale*(S - m)), argument in double, exp correctly rounded (elementary.hpp)
//   kNatural: a = round(S*scale) - round(m*scale), both rounded at exp_arg; P = exp(a)
//            (PyTorch math and paper A; the max element gives exactly 1)
//   kExp2Fma: c = fp32(scale*log2 e); a = fma(S, c, -round(m*c)), one rounding; P = exp2(a)
//            (FlashAttention-2 upstream; the max element need not give exactly 1)
//   kExp2:   a = round(S*c) - round(m*c), two roundings; P = exp2(a) (PyTorch's vendored FA2)
enum class ExpImpl : uint8_t { kExact, kNatural, kExp2Fma, kExp2 };

// kFused: O accumulates across key/value blocks in the pv_acc accumulator (FA2).
// kPerBlock: each block's P.V is rounded at pv_acc, then added to O at o_update (paper A).
enum class PvMode : uint8_t { kFused, kPerBlock };

// Flash attention's final normalisation at o_norm: kReciprocal rounds 1/l, then O*(1/l) (FA2);
// kDivide rounds O/l once (PyTorch's oc.div_(l) in paper A's reference).
enum class NormMode : uint8_t { kReciprocal, kDivide };

// How flash attention computes alpha, the factor that rescales O and l when the row max grows:
//   kExact:     alpha = exp(scale*(m_old - m_new)), rounded once at o_rescale
//   kExp2Shift: alpha = exp2(round(shift_old - shift_new)), the difference of the two exponent
//               shifts round(m*c) rounded at o_rescale, then exp2 rounded at o_rescale (or the
//               device's exp2, see exp2_table): what a kernel computing exp2f(shift_old -
//               shift_new) does. Needs exp_impl exp2-fma or exp2.
enum class RescaleImpl : uint8_t { kExact, kExp2Shift };

std::string_view to_string(Algorithm a);
std::string_view to_string(ExpImpl e);
std::string_view to_string(PvMode m);
std::string_view to_string(RescaleImpl r);
ExpImpl parse_exp_impl(std::string_view text);
Algorithm parse_algorithm(std::string_view text);

// Paper A's mitigation: when the block's row max r_m of the scaled scores is repeated within eps
// (a score s counts when scale*s >= scale*r_m - eps), subtract beta*r_m (r_m > 0) or 0 (r_m < 0)
// instead of r_m.
struct BetaRowmax {
  bool enabled = false;
  double beta = 2.0;
  double eps = 1e-3;
};

// How D = rowsum(dO o O) is formed in the flash backward pass; kFromDpP uses rowsum(dP o P),
// the variant paper A found stable (standard attention always uses it, as autograd does).
enum class DeltaMode : uint8_t { kFromOutput, kFromDpP };

struct AttentionConfig {
  std::string preset = "fp64";
  Format low_precision = formats::fp64;  // the preset's format parameter; also the I/O format
  Algorithm algorithm = Algorithm::kFlash;
  ExpImpl exp_impl = ExpImpl::kNatural;
  PvMode pv_mode = PvMode::kFused;
  NormMode norm_mode = NormMode::kReciprocal;
  DeltaMode delta_mode = DeltaMode::kFromOutput;
  RescaleImpl rescale = RescaleImpl::kExact;
  // Flash attention's row sum l as this many partial sums (1 or 4). With 4, column j of a key
  // block (j counted from the block's first column) goes to partial (j % 8) / 2, the mma.sync
  // accumulator layout of a thread quad; each partial is rescaled by alpha and adds its block
  // terms in column order at rowsum; at the end l = (l0 + l2) + (l1 + l3), each sum rounded at
  // rowsum (the quad's butterfly all-reduce). Standard attention ignores it.
  int rowsum_lanes = 1;
  std::array<SiteSpec, kSiteCount> sites{};
  int block_rows = 64;  // Br
  int block_cols = 64;  // Bc
  bool causal = false;
  std::optional<double> scale;  // default 1/sqrt(d)
  BetaRowmax beta_rowmax;
  std::vector<std::string> mitigations;  // as given, for reports
  std::vector<std::string> overrides;    // as given, for reports
  uint64_t seed = 0;                     // random streams of stochastic rounding
  // Stochastic rounding at p_cast draws its bits from tiled_random::p_draw(seed, problem, row,
  // column, bits) (emulation/tiled_random.hpp, the layout the CUDA kernels use) instead of the
  // site's random stream; the bit count must divide 32.
  bool tiled_random = false;
  // Values of the device's exp2 (fp32 argument bits -> fp32 result bits). When set, exp_impl is
  // exp2-fma or exp2, and the result site (exp for P, o_rescale for alpha) is fp32
  // round-to-nearest-even, every exp2 of an fp32 argument is looked up here; an argument the
  // table lacks gets exp2 rounded at the site and is reported in AttentionOutputs::exp2_misses
  // (run_attention_with_device_function fills the table from those).
  std::shared_ptr<const DeviceFunctionTable> exp2_table;
  unsigned threads = 0;  // 0: hardware concurrency
  bool trace = false;    // collect per-site rounding statistics

  SiteSpec& site(Site s) { return sites[static_cast<int>(s)]; }
  const SiteSpec& site(Site s) const { return sites[static_cast<int>(s)]; }
};

// "SITE=FORMAT:ROUNDING[:ACCUMULATION]"; also the structural keys exp_impl=, algorithm=,
// pv_mode=, norm=, rescale=exact|exp2-shift, rowsum_lanes=1|4. Throws std::invalid_argument on
// unknown sites, formats, modes or accumulation models.
void apply_override(AttentionConfig& config, std::string_view assignment);

// "beta-rowmax[:beta[:eps]]", "sr-p[:bits]", "sr-p-tiled[:bits]" (sr-p with tiled_random),
// "sr-o[:bits]", "hp:SITE[:FORMAT]", "delta-dpp" (D from rowsum(dP o P)). Throws
// std::invalid_argument on unknown names.
void apply_mitigation(AttentionConfig& config, std::string_view text);

// Every site made exact (fp64, nearest, sequential in double) except the input site.
void make_site_exact(AttentionConfig& config, Site site);
// The site rounded stochastically in its own format.
void make_site_stochastic(AttentionConfig& config, Site site, int bits = 32);

nlohmann::json to_json(const AttentionConfig& config);

}  // namespace simprec::attention
