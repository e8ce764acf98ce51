#include "lib/attention/options.hpp"

#include <cmath>
#include <stdexcept>
#include <tuple>
#include <type_traits>
#include <utility>

#include "emulation/did_you_mean.hpp"
#include "lib/attention/tile_text.hpp"
#include "lib/limits/strict_parse.hpp"

namespace simprec::attention {
namespace {

// A slot: its value names one of the registry's strategies of S, held in `member` (a generic
// callable: AttentionConfig& to Choice<S>&, const AttentionConfig& to const Choice<S>&).
template <class S, class Ref>
StructuralOption slot_option(Ref ref, bool always_in_json = false) {
  StructuralOption o;
  o.key = S::kSlot.key;
  o.doc = S::kSlot.doc;
  o.slot = &S::kSlot;
  for (const S* s : strategies_of<S>()) o.choices.push_back(s->name());
  o.always_in_json = always_in_json;
  o.set = [ref](AttentionConfig& c, std::string_view text) {
    ref(c) = Choice<S>(find_strategy<S>(text));
  };
  o.get = [ref](const AttentionConfig& c) { return std::string(ref(c).name()); };
  o.strategy = [ref](const AttentionConfig& c) -> const Strategy* { return &*ref(c); };
  return o;
}

template <class S>
StructuralOption slot_option(Choice<S> AttentionConfig::*member, bool always_in_json = false) {
  return slot_option<S>(
      [member](auto& c) -> auto& { return c.*member; }, always_in_json);
}

// A parameter whose values name the values of one member of the configuration, reached by
// `ref` (a generic callable, as slot_option's).
template <class T, class Ref>
StructuralOption choice_option(std::string_view key, std::string_view doc, Ref ref,
                               std::vector<std::pair<std::string_view, T>> values) {
  StructuralOption o;
  o.key = key;
  o.doc = doc;
  for (const auto& [name, value] : values) o.choices.push_back(name);
  o.set = [key, ref, values, choices = o.choices](AttentionConfig& c, std::string_view text) {
    for (const auto& [name, value] : values) {
      if (name == text) {
        ref(c) = value;
        return;
      }
    }
    std::string known;
    std::vector<std::string> names;
    for (const auto& name : choices) {
      known += (known.empty() ? "" : ", ") + std::string(name);
      names.emplace_back(name);
    }
    throw std::invalid_argument("unknown " + std::string(key) + " '" + limits::excerpt(text) + "'" +
                                did_you_mean(text, names) + " (known: " + known + ")");
  };
  o.get = [ref, values](const AttentionConfig& c) {
    for (const auto& [name, value] : values) {
      if (ref(c) == value) return std::string(name);
    }
    if constexpr (std::is_integral_v<T>) return std::to_string(ref(c));
    return std::string("?");
  };
  return o;
}

template <class T>
StructuralOption enum_option(std::string_view key, std::string_view doc, T AttentionConfig::*member,
                             std::vector<std::pair<std::string_view, T>> values) {
  return choice_option<T>(
      key, doc, [member](auto& c) -> auto& { return c.*member; }, std::move(values));
}

// A choice of the input quantisation (config.hpp, InputQuantization).
template <class T>
StructuralOption quant_option(std::string_view key, std::string_view doc,
                              T InputQuantization::*member,
                              std::vector<std::pair<std::string_view, T>> values) {
  return choice_option<T>(
      key, doc, [member](auto& c) -> auto& { return c.quant.*member; }, std::move(values));
}

// A parameter with a free-form value, described by `syntax`.
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

// An integer parameter in [1, max] (syntax says so); where zero_name is not empty, that word
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

// A tile "BRxBC", or "auto" for (0, 0).
StructuralOption tile_option(std::string_view key, std::string_view doc, int AttentionConfig::*rows,
                             int AttentionConfig::*cols, bool clears_sram) {
  return value_option(
      key, doc, "BRxBC (integers in [1, 65536]) or auto",
      [rows, cols, clears_sram](AttentionConfig& c, std::string_view v) {
        std::tie(c.*rows, c.*cols) = v == "auto" ? std::pair(0, 0) : parse_tile(v);
        if (clears_sram) c.sram = 0;
      },
      [rows, cols](const AttentionConfig& c) {
        if (c.*rows == 0 && c.*cols == 0) return std::string("auto");
        return std::to_string(c.*rows) + "x" + std::to_string(c.*cols);
      });
}

// The element format of a quantisation: one with a sign and a zero (an exponent-only scale format
// such as e8m0 holds neither, and quantised values would all be NaN).
Format element_format(std::string_view text, std::string_view key) {
  const Format f = parse_format(text);
  require_sign(f, std::string(key) + "'s elements");
  return f;
}

std::vector<StructuralOption> make_structural_options() {
  std::vector<StructuralOption> t;
  // The order is the canonical spec's (numerics_spec.hpp): options added later go last.
  t.push_back(slot_option(&AttentionConfig::algorithm, true));
  t.push_back(slot_option(&AttentionConfig::exp_impl, true));
  t.push_back(slot_option(&AttentionConfig::pv_mode, true));
  t.push_back(slot_option(&AttentionConfig::norm, true));
  t.push_back(slot_option(&AttentionConfig::rescale));
  t.push_back(enum_option<int>("rowsum_warps",
                               "rowsum_block=quad-fma over 1 warp or 2 (warp w: the block's "
                               "columns j with (j / 8) % 2 == w; block sum W0 + W1)",
                               &AttentionConfig::rowsum_warps, {{"1", 1}, {"2", 2}}));
  t.push_back(slot_option(&AttentionConfig::block_mask));
  t.push_back(slot_option(&AttentionConfig::flex_compile));
  t.push_back(slot_option(&AttentionConfig::tile_rule));
  t.push_back(enum_option<int>(
      "rowsum_lanes", "the row sum l as 1 running sum or 4 partial sums (a thread quad's lanes)",
      &AttentionConfig::rowsum_lanes, {{"1", 1}, {"4", 4}}));
  t.push_back(slot_option(&AttentionConfig::rowsum_block));
  t.push_back(slot_option(&AttentionConfig::rowsum_rescale));
  t.push_back(slot_option(&AttentionConfig::device_math));
  t.push_back(slot_option(&AttentionConfig::lse_impl));
  {
    StructuralOption o;
    o.key = "bwd_exp_impl";
    o.doc = "the backward pass's exp_impl (same: the forward pass's)";
    o.value_syntax = "same or an exp_impl strategy";
    o.choices.push_back("same");
    for (const ExpArg* s : strategies_of<ExpArg>()) o.choices.push_back(s->name());
    o.set = [](AttentionConfig& c, std::string_view v) {
      c.bwd_exp_impl = v == "same" ? std::nullopt : std::optional(Choice<ExpArg>(v));
    };
    o.get = [](const AttentionConfig& c) {
      return c.bwd_exp_impl ? std::string(c.bwd_exp_impl->name()) : std::string("same");
    };
    t.push_back(std::move(o));
  }
  t.push_back(slot_option(&AttentionConfig::delta_sum));
  t.push_back(slot_option(&AttentionConfig::query_order));
  t.push_back(slot_option(&AttentionConfig::split_ties));
  t.push_back(slot_option(&AttentionConfig::dq));
  t.push_back(slot_option(&AttentionConfig::grad_scale));
  t.push_back(slot_option(&AttentionConfig::kv_group_sum));
  t.push_back(slot_option(&AttentionConfig::ds_p));
  t.push_back(slot_option(&AttentionConfig::lse_log2e));
  t.push_back(slot_option(&AttentionConfig::delta));
  t.push_back(choice_option<BetaArithmetic>(
      "beta_arithmetic",
      "beta-rowmax's threshold and shifted max in fp64 or in fp32 (the GPU kernels' FADD, FMUL)",
      [](auto& c) -> auto& { return c.beta_rowmax.arithmetic; },
      {{"fp64", BetaArithmetic::kFp64}, {"fp32", BetaArithmetic::kFp32}}));
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
          throw std::invalid_argument("p_scale '" + limits::excerpt(v) +
                                      "': expected a power of two in [2^-16, 2^16]");
        }
        c.p_scale = x;
      },
      [](const AttentionConfig& c) { return limits::shortest_text(c.p_scale); }));
  t.push_back(value_option(
      "lazy_rescale",
      "FlashAttention-4's lazy rescaling: O and l are rescaled only when the row max grows by "
      "more than this many log2 units, so P may exceed 1 (0: whenever it grows)",
      "a number in [0, 64]",
      [](AttentionConfig& c, std::string_view v) {
        const double x = parse_finite_number(v, "lazy_rescale");
        if (!(x >= 0 && x <= 64)) {
          throw std::invalid_argument("lazy_rescale '" + limits::excerpt(v) +
                                      "': expected a number of log2 units in [0, 64]");
        }
        c.lazy_rescale = x;
      },
      [](const AttentionConfig& c) { return limits::shortest_text(c.lazy_rescale); }));
  t.push_back(value_option(
      "qk_quant",
      "Q and K quantised after the input site with scales (qk_scale): none, int8 "
      "(SageAttention's symmetric INT8, scale = amax/127) or a format (scale = amax/its "
      "largest finite value)",
      "none, int8 or a format name (e4m3fn, ...)",
      [](AttentionConfig& c, std::string_view v) {
        c.quant.qk_int8 = v == "int8";
        c.quant.qk = v == "none" || v == "int8" ? std::nullopt
                                                : std::optional(element_format(v, "qk_quant"));
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
        c.quant.v = v == "none" ? std::nullopt : std::optional(element_format(v, "v_quant"));
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
  t.push_back(tile_option("tile",
                          "flash attention's tile: Br query rows by Bc key columns (auto: the "
                          "dispatch's; sets sram to 0)",
                          &AttentionConfig::block_rows, &AttentionConfig::block_cols, true));
  t.push_back(tile_option("bwd_tile",
                          "the flash backward pass's tile (auto: the dispatch's, or the forward "
                          "tile)",
                          &AttentionConfig::bwd_block_rows, &AttentionConfig::bwd_block_cols,
                          false));
  // After tile: a tile given explicitly turns the SRAM rule off, and a canonical numerics spec
  // lists sram after tile so that it reads back the same.
  t.push_back(slot_option(&AttentionConfig::flash_state));
  t.push_back(value_option(
      "sram",
      "FlashAttention-1's SRAM size M in elements: the tile becomes Br = min(ceil(M/4d), d), "
      "Bc = ceil(M/4d) for head dimension d (as block_order places them); 0: the tile option "
      "applies",
      "M (an integer in [0, 2^40])",
      [](AttentionConfig& c, std::string_view v) {
        c.sram = limits::parse_integer(v, 0, int64_t{1} << 40, "sram");
      },
      [](const AttentionConfig& c) { return std::to_string(c.sram); }));
  t.push_back(slot_option(&AttentionConfig::block_order));
  t.push_back(slot_option(&AttentionConfig::key_order));
  t.push_back(slot_option(&AttentionConfig::dispatch));
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
  t.push_back(slot_option(&AttentionConfig::softmax_scale));
  t.push_back(value_option(
      "compiled_for",
      "the lengths and head dimension a torch.compile graph was first compiled for "
      "(flex_compile=automatic-dynamic; auto: the run's own, a graph's first call)",
      "SQxSKxD (integers in [1, 2^31]) or auto",
      [](AttentionConfig& c, std::string_view v) {
        if (v == "auto") {
          c.compiled_for = {};
          return;
        }
        const size_t x1 = v.find('x'), x2 = x1 == std::string_view::npos ? x1 : v.find('x', x1 + 1);
        if (x2 == std::string_view::npos) {
          throw std::invalid_argument("compiled_for '" + limits::excerpt(v) +
                                      "': expected SQxSKxD or auto");
        }
        const std::string_view parts[] = {v.substr(0, x1), v.substr(x1 + 1, x2 - x1 - 1),
                                          v.substr(x2 + 1)};
        for (int i = 0; i < 3; ++i) {
          c.compiled_for[i] = limits::parse_integer(parts[i], 1, int64_t{1} << 31, "compiled_for");
        }
      },
      [](const AttentionConfig& c) {
        if (c.compiled_for == std::array<int64_t, 3>{}) return std::string("auto");
        return std::to_string(c.compiled_for[0]) + "x" + std::to_string(c.compiled_for[1]) + "x" +
               std::to_string(c.compiled_for[2]);
      }));
  return t;
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

double parse_finite_number(std::string_view text, std::string_view what) {
  if (const auto v = limits::parse_finite_double(text)) return *v;
  throw std::invalid_argument(std::string(what) + " '" + limits::excerpt(text) +
                              "': expected a finite number");
}

}  // namespace simprec::attention
