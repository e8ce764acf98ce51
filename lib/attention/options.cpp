#include "lib/attention/options.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "lib/attention/tile_text.hpp"
#include "lib/limits/strict_parse.hpp"

namespace simprec::attention {
namespace {

std::string join(std::span<const std::string_view> items, std::string_view sep) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : std::string(sep)) + std::string(item);
  return out;
}

// An option whose values name the values of one member of the configuration, reached by
// `ref` (a generic callable: AttentionConfig& to T&, const AttentionConfig& to const T&).
template <class T, class Ref>
StructuralOption choice_option(std::string_view key, std::string_view doc, Ref ref,
                               std::vector<std::pair<std::string_view, T>> values,
                               bool always_in_json = false) {
  StructuralOption o;
  o.key = key;
  o.doc = doc;
  for (const auto& [name, value] : values) o.choices.push_back(name);
  o.always_in_json = always_in_json;
  o.set = [key, ref, values, choices = o.choices](AttentionConfig& c, std::string_view text) {
    for (const auto& [name, value] : values) {
      if (name == text) {
        ref(c) = value;
        return;
      }
    }
    throw std::invalid_argument("unknown " + std::string(key) + " '" + std::string(text) +
                                "' (known: " + join(choices, ", ") + ")");
  };
  o.get = [ref, values](const AttentionConfig& c) {
    for (const auto& [name, value] : values) {
      if (ref(c) == value) return std::string(name);
    }
    return std::string("?");
  };
  return o;
}

template <class T>
StructuralOption enum_option(std::string_view key, std::string_view doc, T AttentionConfig::*member,
                             std::vector<std::pair<std::string_view, T>> values,
                             bool always_in_json = false) {
  return choice_option<T>(
      key, doc, [member](auto& c) -> auto& { return c.*member; }, std::move(values),
      always_in_json);
}

// A choice of the input quantisation (config.hpp, InputQuantization).
template <class T>
StructuralOption quant_option(std::string_view key, std::string_view doc,
                              T InputQuantization::*member,
                              std::vector<std::pair<std::string_view, T>> values) {
  return choice_option<T>(
      key, doc, [member](auto& c) -> auto& { return c.quant.*member; }, std::move(values));
}

// An option with a free-form value, described by `syntax`.
StructuralOption value_option(std::string_view key, std::string_view doc, std::string_view syntax,
                              std::function<void(AttentionConfig&, std::string_view)> set,
                              std::function<std::string(const AttentionConfig&)> get) {
  StructuralOption o;
  o.key = key;
  o.doc = doc;
  o.value_syntax = syntax;
  o.set = std::move(set);
  o.get = std::move(get);
  return o;
}

// An integer option in [1, max] (syntax says so); where zero_name is not empty, that word
// stands for 0 (chosen at run time).
StructuralOption count_option(std::string_view key, std::string_view doc,
                              int AttentionConfig::*member, int64_t max, std::string_view syntax,
                              std::string_view zero_name) {
  StructuralOption o;
  o.key = key;
  o.doc = doc;
  o.value_syntax = syntax;
  o.set = [key, member, max, zero_name](AttentionConfig& c, std::string_view v) {
    c.*member = !zero_name.empty() && v == zero_name
                    ? 0
                    : static_cast<int>(limits::parse_integer(v, 1, max, std::string(key)));
  };
  o.get = [member, zero_name](const AttentionConfig& c) {
    return c.*member == 0 ? std::string(zero_name) : std::to_string(c.*member);
  };
  return o;
}

std::string tile_text(int rows, int cols) {
  if (rows == 0 && cols == 0) return "auto";
  return std::to_string(rows) + "x" + std::to_string(cols);
}

const std::vector<std::pair<std::string_view, ExpImpl>> kExpImpls = {
    {"exact", ExpImpl::kExact},
    {"natural", ExpImpl::kNatural},
    {"exp2-fma", ExpImpl::kExp2Fma},
    {"exp2", ExpImpl::kExp2},
    {"exp2-scaled", ExpImpl::kExp2Scaled},
    {"exp2-scaled-fma", ExpImpl::kExp2ScaledFma}};

std::string number_text(double v) {
  char buffer[64];
  const auto r = std::to_chars(buffer, buffer + sizeof buffer, v);
  return std::string(buffer, r.ptr);
}

std::vector<StructuralOption> make_structural_options() {
  std::vector<StructuralOption> t;
  t.push_back(enum_option<Algorithm>(
      "algorithm", "standard attention (whole rows) or flash attention (key/value blocks)",
      &AttentionConfig::algorithm,
      {{"flash", Algorithm::kFlash}, {"standard", Algorithm::kStandard}}, true));
  t.push_back(enum_option<ExpImpl>(
      "exp_impl",
      "how P = exp(scale (S - m)) is formed: exact (argument in double), natural (argument "
      "rounded at exp_arg, then exp), exp2-fma (fma(S, c, -round(m c)), then exp2), exp2 "
      "(round(S c) - round(m c), then exp2), exp2-scaled (u(x) = round(round(x scale) log2 e) "
      "with both constants rounded; round(u(S) - u(m)), then exp2: Triton's FlexAttention), "
      "exp2-scaled-fma (fma(round(S scale), log2 e, -u(m)), then exp2)",
      &AttentionConfig::exp_impl, kExpImpls, true));
  t.push_back(enum_option<PvMode>(
      "pv_mode",
      "fused: O accumulates across blocks in pv_acc (FA2); per-block: each block's P.V rounded "
      "at pv_acc, then added to O at o_update (paper A)",
      &AttentionConfig::pv_mode, {{"fused", PvMode::kFused}, {"per-block", PvMode::kPerBlock}},
      true));
  t.push_back(enum_option<NormMode>(
      "norm",
      "final normalisation: reciprocal (1/l, then O (1/l)), divide (O/l rounded once) or "
      "div-full (the H100's div.full.f32: O rcp.approx(l), Triton's division)",
      &AttentionConfig::norm_mode,
      {{"reciprocal", NormMode::kReciprocal},
       {"divide", NormMode::kDivide},
       {"div-full", NormMode::kDivFull}},
      true));
  t.push_back(enum_option<RescaleImpl>(
      "rescale",
      "alpha when the row max grows: exact, exp2-shift (exp2 of the difference of the exponent "
      "shifts), exp2-diff (exp2(round(m_old - m_new) c), FA2's softmax_rescale_o), exp2-shift-fma "
      "(exp2(fma(-c, m_new, shift_old)), after every key block: Triton's contraction)",
      &AttentionConfig::rescale,
      {{"exact", RescaleImpl::kExact},
       {"exp2-shift", RescaleImpl::kExp2Shift},
       {"exp2-diff", RescaleImpl::kExp2Diff},
       {"exp2-shift-fma", RescaleImpl::kExp2ShiftFma}}));
  t.push_back(enum_option<int>("rowsum_warps",
                               "rowsum_block=quad-fma over 1 warp or 2 (warp w: the block's "
                               "columns j with (j / 8) % 2 == w; "
                               "block sum W0 + W1)",
                               &AttentionConfig::rowsum_warps, {{"1", 1}, {"2", 2}}));
  t.push_back(enum_option<BlockMask>(
      "block_mask",
      "the key blocks a causal flash pass visits: none (ascending up to the diagonal) or "
      "diagonal-first (FlexAttention's 128x128 causal block mask: the partial sparse blocks "
      "(the diagonal's and those past a length 128 does not divide), then the full ones, each "
      "ascending; the backward pass likewise)",
      &AttentionConfig::block_mask,
      {{"none", BlockMask::kNone}, {"diagonal-first", BlockMask::kDiagonalFirst}}));
  t.push_back(enum_option<FlexCompile>(
      "flex_compile",
      "the key blocks where exp_impl=exp2-scaled-fma does not fuse (a mask's select stands "
      "between product and subtraction; there exp2-scaled): none; static (FlexAttention "
      "compiled for the shape: the block mask's partial sparse blocks and, for a length not a "
      "multiple of 128, every block); dynamic (compiled for symbolic lengths: every block)",
      &AttentionConfig::flex_compile,
      {{"none", FlexCompile::kNone},
       {"static", FlexCompile::kStatic},
       {"dynamic", FlexCompile::kDynamic}}));
  t.push_back(enum_option<TileRule>(
      "tile_rule",
      "the tile: fixed (tile as given) or flex-sm90 (by head dimension as FlexAttention's "
      "forward on sm_90: d <= 64 128x128, d <= 96 64x64, else 128x64)",
      &AttentionConfig::tile_rule,
      {{"fixed", TileRule::kFixed}, {"flex-sm90", TileRule::kFlexSm90}}));
  t.push_back(enum_option<int>(
      "rowsum_lanes", "the row sum l as 1 running sum or 4 partial sums (a thread quad's lanes)",
      &AttentionConfig::rowsum_lanes, {{"1", 1}, {"4", 4}}));
  t.push_back(enum_option<RowsumBlock>(
      "rowsum_block",
      "how a key block enters l: running (columns in order), warp-groups (32 columns in 4 "
      "lanes, the memory-efficient kernel) or quad-fma (the block in 4 lanes combined "
      "(l0 + l2) + (l1 + l3), then l = fma(l, alpha, sum): Triton's tl.sum)",
      &AttentionConfig::rowsum_block,
      {{"running", RowsumBlock::kRunning},
       {"warp-groups", RowsumBlock::kWarpGroups},
       {"quad-fma", RowsumBlock::kQuadFma}}));
  t.push_back(enum_option<RowsumRescale>(
      "rowsum_rescale",
      "how alpha rescales the rowsum_lanes=4 partial sums: mul (l alpha rounded, then the "
      "block's terms added) or fma (fma(l, alpha, first term), then the rest: FA2's "
      "row_sum *= scale contracted by nvcc into the next addition)",
      &AttentionConfig::rowsum_rescale,
      {{"mul", RowsumRescale::kMul}, {"fma", RowsumRescale::kFma}}));
  t.push_back(enum_option<DeviceMath>(
      "device_math",
      "exp2, exp and log: correctly-rounded (at their sites) or sm90 (the H100's "
      "ex2.approx.ftz and lg2.approx.ftz, measured exhaustively, and libdevice's expf, logf and "
      "log2f, for fp32 sites)",
      &AttentionConfig::device_math,
      {{"correctly-rounded", DeviceMath::kCorrectlyRounded}, {"sm90", DeviceMath::kSm90}}));
  t.push_back(enum_option<LseImpl>(
      "lse_impl",
      "the LSE from m and l: exact, fma-log (fma(m, scale, log l)), shift-div-log2e (shift / "
      "log2 e + log l), log2 (lse2 = shift + log2 l, reported times ln 2: FlexAttention), "
      "fma-log2-div (fma(m, c, log2 l) / log2 e: a Triton kernel's (m c + log2 l) / log2 e), "
      "fma-log2-div-full (the same, the division by div.full.f32: Triton's on the H100)",
      &AttentionConfig::lse_impl,
      {{"exact", LseImpl::kExact},
       {"fma-log", LseImpl::kFmaLog},
       {"shift-div-log2e", LseImpl::kShiftDivLog2e},
       {"log2", LseImpl::kLog2},
       {"fma-log2-div", LseImpl::kFmaLog2Div},
       {"fma-log2-div-full", LseImpl::kFmaLog2DivFull}}));
  {
    StructuralOption o;
    o.key = "bwd_exp_impl";
    o.doc = "the backward pass's exp implementation (same: the forward pass's exp_impl)";
    o.choices = {"same", "exact", "natural", "exp2-fma", "exp2", "exp2-scaled", "exp2-scaled-fma"};
    o.set = [](AttentionConfig& c, std::string_view v) {
      c.bwd_exp_impl = v == "same" ? std::nullopt : std::optional(parse_exp_impl(v));
    };
    o.get = [](const AttentionConfig& c) {
      return c.bwd_exp_impl ? std::string(to_string(*c.bwd_exp_impl)) : std::string("same");
    };
    t.push_back(std::move(o));
  }
  t.push_back(enum_option<DeltaSum>(
      "delta_sum",
      "the order of D = rowsum(dO o O)'s additions: sequential, fa2 (dot_do_o), mem-eff "
      "(computeDelta), triton (8 columns per thread, a butterfly over the padded row's threads: "
      "a persistent reduction), triton-looped (one warp per row, a looped reduction)",
      &AttentionConfig::delta_sum,
      {{"sequential", DeltaSum::kSequential},
       {"fa2", DeltaSum::kFa2},
       {"mem-eff", DeltaSum::kMemEff},
       {"triton", DeltaSum::kTriton},
       {"triton-looped", DeltaSum::kTritonLooped}}));
  t.push_back(enum_option<QueryOrder>(
      "query_order",
      "the backward pass's order over query blocks: ascending, descending (FA2), split-keys "
      "(memory-efficient kernel)",
      &AttentionConfig::query_order,
      {{"ascending", QueryOrder::kAscending},
       {"descending", QueryOrder::kDescending},
       {"split-keys", QueryOrder::kSplitKeys}}));
  t.push_back(enum_option<SplitTies>(
      "split_ties",
      "query_order=split-keys: the order of the key blocks that reach a query block at the same "
      "step: descending (the higher key block first, as PyTorch's memory-efficient kernel most "
      "often adds them on an H100), ascending, shuffled (an order drawn from seed)",
      &AttentionConfig::split_ties,
      {{"descending", SplitTies::kDescending},
       {"ascending", SplitTies::kAscending},
       {"shuffled", SplitTies::kShuffled}}));
  t.push_back(enum_option<DqMode>(
      "dq",
      "dQ across key blocks: chained (one accumulator) or block-partials (each block's product "
      "added in dq_acc's format, FA2's atomicAdd)",
      &AttentionConfig::dq_mode,
      {{"chained", DqMode::kChained}, {"block-partials", DqMode::kBlockPartials}}));
  t.push_back(enum_option<GradScale>(
      "grad_scale",
      "where the softmax scale enters dQ and dK: exact (one rounding at grad_out), "
      "fp32-then-cast (FA2's epilogue), ds (dS scaled before its cast)",
      &AttentionConfig::grad_scale,
      {{"exact", GradScale::kExactProduct},
       {"fp32-then-cast", GradScale::kFp32ThenCast},
       {"ds", GradScale::kScaleDs}}));
  t.push_back(enum_option<DsProb>(
      "ds_p", "the P in dS = P o (dP - D): exp (as rounded at exp) or cast (as cast at p_cast_bwd)",
      &AttentionConfig::ds_p, {{"exp", DsProb::kExp}, {"cast", DsProb::kCast}}));
  t.push_back(enum_option<LseLog2e>(
      "lse_log2e",
      "the backward shift from the LSE: exact (lse log2 e rounded once) or fp32 (lse * "
      "fp32(log2 e))",
      &AttentionConfig::lse_log2e, {{"exact", LseLog2e::kExact}, {"fp32", LseLog2e::kFp32Log2e}}));
  t.push_back(enum_option<DeltaMode>(
      "delta",
      "flash backward's D: output (rowsum(dO o O)) or dpp (rowsum(dP o P), the delta-dpp "
      "mitigation)",
      &AttentionConfig::delta_mode,
      {{"output", DeltaMode::kFromOutput}, {"dpp", DeltaMode::kFromDpP}}));
  {
    StructuralOption o;
    o.key = "beta_arithmetic";
    o.doc =
        "beta-rowmax's threshold and shifted max in fp64 or in fp32 (the GPU kernels' FADD, FMUL)";
    o.choices = {"fp64", "fp32"};
    o.set = [](AttentionConfig& c, std::string_view v) {
      if (v == "fp64") {
        c.beta_rowmax.arithmetic = BetaArithmetic::kFp64;
      } else if (v == "fp32") {
        c.beta_rowmax.arithmetic = BetaArithmetic::kFp32;
      } else {
        throw std::invalid_argument("unknown beta_arithmetic '" + std::string(v) +
                                    "' (known: fp64, fp32)");
      }
    };
    o.get = [](const AttentionConfig& c) {
      return std::string(to_string(c.beta_rowmax.arithmetic));
    };
    t.push_back(std::move(o));
  }
  t.push_back(value_option(
      "pv_promote",
      "two-level P.V accumulation: 0 (one chain at pv_acc over every key block) or K (the chain "
      "restarts from zero every K key blocks and is added to a second accumulator at o_update)",
      "0 or K (an integer in [1, 65536])",
      [](AttentionConfig& c, std::string_view v) {
        c.pv_promote_blocks =
            static_cast<int>(limits::parse_integer(v, 0, 65536, "pv_promote (key blocks)"));
      },
      [](const AttentionConfig& c) { return std::to_string(c.pv_promote_blocks); }));
  t.push_back(value_option(
      "p_scale",
      "P times this power of two before p_cast, O divided by it before o_norm (FP8 kernels "
      "scale P into e4m3's range; forward pass)",
      "a power of two in [2^-16, 2^16]",
      [](AttentionConfig& c, std::string_view v) {
        const double x = parse_finite_number(v, "p_scale");
        int e = 0;
        if (!(x > 0) || std::frexp(x, &e) != 0.5 || e < -15 || e > 17) {
          throw std::invalid_argument("p_scale '" + std::string(v) +
                                      "': expected a power of two in [2^-16, 2^16]");
        }
        c.p_scale = x;
      },
      [](const AttentionConfig& c) { return number_text(c.p_scale); }));
  t.push_back(value_option(
      "lazy_rescale",
      "FlashAttention-4's lazy rescaling: O and l are rescaled only when the row max grows by "
      "more than this many log2 units, so P may exceed 1 (0: whenever it grows)",
      "a number in [0, 64]",
      [](AttentionConfig& c, std::string_view v) {
        const double x = parse_finite_number(v, "lazy_rescale");
        if (!(x >= 0 && x <= 64)) {
          throw std::invalid_argument("lazy_rescale '" + std::string(v) +
                                      "': expected a number of log2 units in [0, 64]");
        }
        c.lazy_rescale = x;
      },
      [](const AttentionConfig& c) { return number_text(c.lazy_rescale); }));
  t.push_back(value_option(
      "qk_quant",
      "Q and K quantised after the input site with scales (qk_scale): none, int8 "
      "(SageAttention's symmetric INT8, scale = amax/127) or a format (scale = amax/its "
      "largest finite value)",
      "none, int8 or a format name (e4m3fn, ...)",
      [](AttentionConfig& c, std::string_view v) {
        c.quant.qk_int8 = v == "int8";
        c.quant.qk = v == "none" || v == "int8" ? std::nullopt : std::optional(parse_format(v));
      },
      [](const AttentionConfig& c) {
        return c.quant.qk_int8 ? std::string("int8")
               : c.quant.qk    ? c.quant.qk->name()
                               : std::string("none");
      }));
  t.push_back(quant_option(
      "qk_scale",
      "the groups of Q and K that share a scale: tensor or head (descale folded into the "
      "softmax scale, FlashAttention-3's q_descale, k_descale) or block (block_rows queries, "
      "block_cols keys; scores dequantised in fp32, SageAttention)",
      &InputQuantization::qk_scale,
      {{"tensor", QuantScale::kTensor},
       {"head", QuantScale::kHead},
       {"block", QuantScale::kBlock}}));
  t.push_back(value_option(
      "v_quant",
      "V quantised after the input site with scales (v_scale): none or a format; O is "
      "multiplied by the scale with the normalisation",
      "none or a format name (e4m3fn, ...)",
      [](AttentionConfig& c, std::string_view v) {
        c.quant.v = v == "none" ? std::nullopt : std::optional(parse_format(v));
      },
      [](const AttentionConfig& c) {
        return c.quant.v ? c.quant.v->name() : std::string("none");
      }));
  t.push_back(quant_option(
      "v_scale",
      "the groups of V that share a scale: tensor, head (FlashAttention-3's v_descale) or "
      "channel (one per column of V, SageAttention2)",
      &InputQuantization::v_scale,
      {{"tensor", QuantScale::kTensor},
       {"head", QuantScale::kHead},
       {"channel", QuantScale::kChannel}}));
  t.push_back(quant_option("k_smooth",
                           "K minus its per-channel mean over the keys before "
                           "quantisation (SageAttention's smoothing): off or on",
                           &InputQuantization::k_smooth, {{"off", false}, {"on", true}}));
  {
    StructuralOption o;
    o.key = "tile";
    o.doc =
        "flash attention's tile: Br query rows by Bc key columns (auto: the dispatch's; sets "
        "sram to 0)";
    o.value_syntax = "BRxBC (integers in [1, 65536]) or auto";
    o.set = [](AttentionConfig& c, std::string_view v) {
      std::tie(c.block_rows, c.block_cols) = v == "auto" ? std::pair(0, 0) : parse_tile(v);
      c.sram = 0;
    };
    o.get = [](const AttentionConfig& c) { return tile_text(c.block_rows, c.block_cols); };
    t.push_back(std::move(o));
  }
  {
    StructuralOption o;
    o.key = "bwd_tile";
    o.doc = "the flash backward pass's tile (auto: the dispatch's, or the forward tile)";
    o.value_syntax = "BRxBC (integers in [1, 65536]) or auto";
    o.set = [](AttentionConfig& c, std::string_view v) {
      std::tie(c.bwd_block_rows, c.bwd_block_cols) = v == "auto" ? std::pair(0, 0) : parse_tile(v);
    };
    o.get = [](const AttentionConfig& c) { return tile_text(c.bwd_block_rows, c.bwd_block_cols); };
    t.push_back(std::move(o));
  }
  // After tile: a tile given explicitly turns the SRAM rule off, and a canonical numerics spec
  // lists sram after tile so that it reads back the same.
  t.push_back(enum_option<FlashState>(
      "flash_state",
      "flash attention's state across key/value tiles: running (FA2: O and l unnormalised, O/l "
      "at the end) or normalised (FA1's Algorithm 1: O, l and m renormalised and written back "
      "after every tile, paper B)",
      &AttentionConfig::flash_state,
      {{"running", FlashState::kRunning}, {"normalised", FlashState::kNormalised}}));
  {
    StructuralOption o;
    o.key = "sram";
    o.doc =
        "FlashAttention-1's SRAM size M in elements: the tile becomes Br = min(ceil(M/4d), d), "
        "Bc = ceil(M/4d) for head dimension d (as block_order places them); 0: the tile option "
        "applies";
    o.value_syntax = "M (an integer in [0, 2^40])";
    o.set = [](AttentionConfig& c, std::string_view v) {
      c.sram = limits::parse_integer(v, 0, int64_t{1} << 40, "sram");
    };
    o.get = [](const AttentionConfig& c) { return std::to_string(c.sram); };
    t.push_back(std::move(o));
  }
  t.push_back(enum_option<BlockOrder>(
      "block_order",
      "where sram's two tile sizes go: paper (Br = min(ceil(M/4d), d), Bc = ceil(M/4d)), "
      "swapped (Br and Bc exchanged) or square (both ceil(M/4d))",
      &AttentionConfig::block_order,
      {{"paper", BlockOrder::kPaper},
       {"swapped", BlockOrder::kSwapped},
       {"square", BlockOrder::kSquare}}));
  t.push_back(enum_option<KeyOrder>(
      "key_order",
      "the forward pass's order over a query block's key blocks: ascending, or descending "
      "(FlashAttention-2)",
      &AttentionConfig::key_order,
      {{"ascending", KeyOrder::kAscending}, {"descending", KeyOrder::kDescending}}));
  t.push_back(enum_option<Dispatch>(
      "dispatch",
      "whose kernel selection fills in tile=auto, bwd_tile=auto and kv_splits=auto from the "
      "shape: none, torch-flash, torch-efficient (PyTorch's SDPA backends)",
      &AttentionConfig::dispatch,
      {{"none", Dispatch::kNone},
       {"torch-flash", Dispatch::kTorchFlash},
       {"torch-efficient", Dispatch::kTorchEfficient}}));
  t.push_back(count_option(
      "kv_splits",
      "the forward pass's key/value splits, each with its own softmax, merged in fp32 by "
      "FlashAttention-2's combine kernel (auto: the dispatch's heuristic)",
      &AttentionConfig::kv_splits, 128, "an integer in [1, 128] or auto", "auto"));
  t.push_back(count_option("batch_heads",
                           "the whole problem's batch x heads that the dispatch weighs (auto: "
                           "the run's own B*H)",
                           &AttentionConfig::batch_heads, int64_t{1} << 30,
                           "an integer in [1, 2^30] or auto", "auto"));
  t.push_back(count_option("sms", "the GPU's multiprocessors that the dispatch weighs",
                           &AttentionConfig::sms, 65536, "an integer in [1, 65536]", ""));
  return t;
}

int parse_bits(const std::string& text, std::string_view mitigation) {
  return static_cast<int>(
      limits::parse_integer(text, 1, 32, std::string(mitigation) + " random bit count"));
}

std::vector<Mitigation> make_mitigations() {
  std::vector<Mitigation> t;
  t.push_back(Mitigation{
      "beta-rowmax",
      "paper A's fix: when a block's row max is repeated within EPS (on scaled scores), subtract "
      "BETA times the max (or 0 for a negative max) instead of the max",
      {{"BETA", "the factor, finite and > 1", "2"},
       {"EPS", "the repeat tolerance on scaled scores, finite and >= 0", "0.001"}},
      [](AttentionConfig& c, std::span<const std::string> a) {
        const double beta = parse_finite_number(a[0], "beta-rowmax beta");
        const double eps = parse_finite_number(a[1], "beta-rowmax eps");
        if (!(beta > 1)) {
          throw std::invalid_argument("beta-rowmax beta '" + a[0] + "': expected a number > 1");
        }
        if (!(eps >= 0)) {
          throw std::invalid_argument("beta-rowmax eps '" + a[1] + "': expected a number >= 0");
        }
        c.beta_rowmax.enabled = true;
        c.beta_rowmax.beta = beta;
        c.beta_rowmax.eps = eps;
      },
      [](std::span<const std::string> a) {
        return std::vector<KernelParameter>{{"beta_rowmax", true},
                                            {"beta", parse_finite_number(a[0], "beta-rowmax beta")},
                                            {"eps", parse_finite_number(a[1], "beta-rowmax eps")}};
      }});
  const auto sr_p_kernel = [](std::span<const std::string> a) {
    return std::vector<KernelParameter>{
        {"sr_p_bits", static_cast<int64_t>(parse_bits(a[0], "sr-p"))}};
  };
  t.push_back(Mitigation{"sr-p",
                         "stochastic rounding of P at p_cast with BITS random bits (1..32)",
                         {{"BITS", "random bits, 1..32", "32"}},
                         [](AttentionConfig& c, std::span<const std::string> a) {
                           make_site_stochastic(c, Site::kPCast, parse_bits(a[0], "sr-p"));
                         },
                         sr_p_kernel});
  t.push_back(Mitigation{"sr-p-tiled",
                         "sr-p with the random bits laid out as the GPU kernels hold their tiles "
                         "(emulation/tiled_random.hpp); BITS divides 32",
                         {{"BITS", "random bits: 1, 2, 4, 8, 16 or 32", "32"}},
                         [](AttentionConfig& c, std::span<const std::string> a) {
                           const int bits = parse_bits(a[0], "sr-p-tiled");
                           if (32 % bits != 0) {
                             throw std::invalid_argument("sr-p-tiled: the bit count " + a[0] +
                                                         " must divide 32 (1, 2, 4, 8, 16, 32)");
                           }
                           make_site_stochastic(c, Site::kPCast, bits);
                           c.tiled_random = true;
                         },
                         sr_p_kernel});
  t.push_back(Mitigation{
      "sr-o",
      "stochastic rounding, with BITS random bits, of every O rounding in a format narrower than "
      "fp32 (pv_acc, o_update, o_rescale, o_norm, o_out)",
      {{"BITS", "random bits, 1..32", "32"}},
      [](AttentionConfig& c, std::span<const std::string> a) {
        const int bits = parse_bits(a[0], "sr-o");
        for (Site s : {Site::kPvAcc, Site::kOUpdate, Site::kORescale, Site::kONorm, Site::kOOut}) {
          if (c.site(s).format.precision() < formats::fp32.precision()) {
            make_site_stochastic(c, s, bits);
          }
        }
      },
      nullptr});
  t.push_back(Mitigation{
      "hp",
      "higher precision at one site: FORMAT, or fp32 when the site is narrower, else fp64",
      {{"SITE", "a rounding site (required)", ""}, {"FORMAT", "the site's new format", ""}},
      [](AttentionConfig& c, std::span<const std::string> a) {
        if (a[0].empty()) throw std::invalid_argument("hp takes a site: hp:SITE[:FORMAT]");
        SiteSpec& spec = c.site(parse_site(a[0]));
        if (!a[1].empty()) {
          spec.format = parse_format(a[1]);
        } else {
          spec.format =
              spec.format.precision() < formats::fp32.precision() ? formats::fp32 : formats::fp64;
        }
      },
      nullptr});
  t.push_back(Mitigation{
      "delta-dpp",
      "D from rowsum(dP o P) in the flash backward pass (paper A's stable "
      "variant; the option delta=dpp)",
      {},
      [](AttentionConfig& c, std::span<const std::string>) { c.delta_mode = DeltaMode::kFromDpP; },
      nullptr});
  return t;
}

std::vector<std::string_view> split_colons(std::string_view text) {
  std::vector<std::string_view> parts;
  for (size_t start = 0;;) {
    const size_t at = text.find(':', start);
    parts.push_back(text.substr(start, at - start));
    if (at == std::string_view::npos) break;
    start = at + 1;
  }
  return parts;
}

std::string known_mitigations() {
  std::string known;
  for (const Mitigation& m : mitigations()) {
    std::string syntax(m.name);
    for (const auto& a : m.arguments) {
      syntax += a.default_text.empty() && a.name == "SITE" ? ":" + std::string(a.name)
                                                           : "[:" + std::string(a.name) + "]";
    }
    known += (known.empty() ? "" : ", ") + syntax;
  }
  return known;
}

// The mitigation named by text's first part and its arguments with defaults filled in.
std::pair<const Mitigation*, std::vector<std::string>> resolve(std::string_view text) {
  const auto parts = split_colons(text);
  const Mitigation* m = find_mitigation(parts[0]);
  if (!m) {
    throw std::invalid_argument("unknown mitigation '" + std::string(text) +
                                "' (known: " + known_mitigations() + ")");
  }
  if (parts.size() - 1 > m->arguments.size()) {
    throw std::invalid_argument("mitigation '" + std::string(text) + "' has " +
                                std::to_string(parts.size() - 1) + " arguments; " +
                                std::string(m->name) + " takes at most " +
                                std::to_string(m->arguments.size()));
  }
  std::vector<std::string> args;
  for (size_t i = 0; i < m->arguments.size(); ++i) {
    if (i + 1 < parts.size()) {
      if (parts[i + 1].empty()) {
        throw std::invalid_argument("mitigation '" + std::string(text) + "': empty " +
                                    std::string(m->arguments[i].name));
      }
      args.emplace_back(parts[i + 1]);
    } else {
      args.emplace_back(m->arguments[i].default_text);
    }
  }
  return {m, std::move(args)};
}

}  // namespace

std::span<const StructuralOption> structural_options() {
  static const std::vector<StructuralOption> table = make_structural_options();
  return table;
}

const StructuralOption* find_structural_option(std::string_view key) {
  for (const StructuralOption& o : structural_options()) {
    if (o.key == key) return &o;
  }
  return nullptr;
}

std::string default_value(const StructuralOption& option) {
  return option.get(AttentionConfig{});
}

std::span<const Mitigation> mitigations() {
  static const std::vector<Mitigation> table = make_mitigations();
  return table;
}

const Mitigation* find_mitigation(std::string_view name) {
  for (const Mitigation& m : mitigations()) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

void apply_mitigation(AttentionConfig& config, std::string_view text) {
  const auto [m, args] = resolve(text);
  m->apply(config, args);
  config.mitigations.emplace_back(text);
}

std::string canonical_mitigation(std::string_view text) {
  const auto [m, args] = resolve(text);
  AttentionConfig scratch;
  m->apply(scratch, args);  // validates the arguments
  std::string out(m->name);
  // Numbers in their shortest round-trip form; trailing absent optional arguments dropped.
  size_t last = args.size();
  while (last > 0 && args[last - 1].empty()) --last;
  for (size_t i = 0; i < last; ++i) {
    const auto number = limits::parse_finite_double(args[i]);
    out += ":" + (number ? number_text(*number) : args[i]);
  }
  return out;
}

std::vector<KernelParameter> mitigation_kernel_parameters(std::string_view text) {
  const auto [m, args] = resolve(text);
  if (!m->kernel_parameters) {
    std::string known;
    for (const Mitigation& k : mitigations()) {
      if (k.kernel_parameters) known += (known.empty() ? "" : ", ") + std::string(k.name);
    }
    throw std::invalid_argument("mitigation '" + std::string(text) +
                                "' cannot be passed to a plugin kernel (known: " + known + ")");
  }
  AttentionConfig scratch;
  m->apply(scratch, args);  // validates the arguments
  return m->kernel_parameters(args);
}

std::span<const std::string_view> kernel_parameter_names() {
  static const std::string_view names[] = {"causal", "scale",     "beta_rowmax", "beta",
                                           "eps",    "sr_p_bits", "seed"};
  return names;
}

double parse_finite_number(std::string_view text, std::string_view what) {
  if (const auto v = limits::parse_finite_double(text)) return *v;
  throw std::invalid_argument(std::string(what) + " '" + limits::excerpt(text) +
                              "': expected a finite number");
}

std::string options_markdown() {
  std::string out = "| option | values | default | what it sets |\n| --- | --- | --- | --- |\n";
  for (const StructuralOption& o : structural_options()) {
    const std::string values =
        o.choices.empty() ? std::string(o.value_syntax) : join(o.choices, ", ");
    out += "| `" + std::string(o.key) + "` | " + values + " | " + default_value(o) + " | " +
           std::string(o.doc) + " |\n";
  }
  return out;
}

std::string mitigations_markdown() {
  std::string out =
      "| mitigation | arguments (default) | kernel parameters | what it does |\n"
      "| --- | --- | --- | --- |\n";
  for (const Mitigation& m : mitigations()) {
    std::string args;
    for (const auto& a : m.arguments) {
      args += (args.empty() ? "" : "; ") + std::string(a.name) + ": " + std::string(a.doc);
      if (!a.default_text.empty()) args += " (" + std::string(a.default_text) + ")";
    }
    std::string kernel = "none";
    if (m.kernel_parameters) {
      std::vector<std::string> defaults;
      for (const auto& a : m.arguments) defaults.emplace_back(a.default_text);
      kernel.clear();
      for (const auto& p : m.kernel_parameters(defaults)) {
        kernel += (kernel.empty() ? "`" : ", `") + p.name + "`";
      }
    }
    out += "| `" + std::string(m.name) + "` | " + (args.empty() ? "none" : args) + " | " + kernel +
           " | " + std::string(m.doc) + " |\n";
  }
  return out;
}

}  // namespace simprec::attention
