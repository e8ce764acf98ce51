#include "lib/gemm/gemm_numerics.hpp"

#include <cstdint>
#include <stdexcept>
#include <utility>

#include "emulation/did_you_mean.hpp"
#include "emulation/excerpt.hpp"
#include "lib/config/spec_items.hpp"
#include "lib/gemm/split_k.hpp"
#include "lib/limits/strict_parse.hpp"

namespace simprec::gemm {
namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

// A key whose values are a fixed list of names, each standing for one value of a member.
template <class T>
GemmKey choice_key(std::string_view key, std::string_view doc, std::string_view syntax,
                   T GemmNumerics::*member, std::vector<std::pair<std::string_view, T>> values) {
  return GemmKey{key, doc, syntax,
                 [key, member, values](GemmNumerics& g, std::string_view text) {
                   std::vector<std::string> names;
                   for (const auto& [name, value] : values) {
                     if (name == text) {
                       g.*member = value;
                       return;
                     }
                     names.emplace_back(name);
                   }
                   throw std::invalid_argument("unknown " + std::string(key) + " '" +
                                               excerpt(text) + "'" + did_you_mean(text, names) +
                                               " (known: " + joined(names) + ")");
                 },
                 [member, values](const GemmNumerics& g) {
                   for (const auto& [name, value] : values) {
                     if (g.*member == value) return std::string(name);
                   }
                   return std::string("?");
                 }};
}

std::pair<int, int> parse_tile(std::string_view text) {
  const size_t x = text.find('x');
  if (x == std::string_view::npos) {
    throw std::invalid_argument("tile '" + excerpt(text) +
                                "': expected MxN (integers in [1, 4096])");
  }
  return {static_cast<int>(limits::parse_integer(text.substr(0, x), 1, 4096, "tile M")),
          static_cast<int>(limits::parse_integer(text.substr(x + 1), 1, 4096, "tile N"))};
}

std::vector<GemmKey> make_keys() {
  std::vector<GemmKey> t;
  t.push_back(GemmKey{
      "instruction",
      "the tensor-core instruction model chained along K (simprec mma --list; fp32 accumulator)",
      "a tc: model",
      [](GemmNumerics& g, std::string_view v) { g.instruction = &tensor_core_model(v); },
      [](const GemmNumerics& g) { return g.instruction ? g.instruction->name : std::string(); }});
  t.push_back(GemmKey{
      "promote",
      "the accumulator promoted to fp32 every N elements of K: the chain restarts from +0 and its "
      "result is added to an fp32 accumulator (none: one chain per piece of K)",
      "none or N (an integer in [1, 2^30])",
      [](GemmNumerics& g, std::string_view v) {
        g.promote_every =
            v == "none" ? 0 : static_cast<int>(limits::parse_integer(v, 1, 1 << 30, "promote"));
      },
      [](const GemmNumerics& g) {
        return g.promote_every ? std::to_string(g.promote_every) : std::string("none");
      }});
  t.push_back(GemmKey{
      "split_k",
      "K cut into pieces computed on their own, their partial sums added in fp32 in K order from "
      "+0 (PyTorch's reduced-precision reduction flags do not change it)",
      "none, pieces:N, length:L or cublas-sm90",
      [](GemmNumerics& g, std::string_view v) { g.split_k = &parse_split_k(v, g.split_value); },
      [](const GemmNumerics& g) {
        const std::string name(g.split_k->name());
        return g.split_k->takes_value() ? name + ":" + std::to_string(g.split_value) : name;
      }});
  t.push_back(GemmKey{
      "tile", "split_k=cublas-sm90: the kernel's output tile, M rows by N columns",
      "MxN (integers in [1, 4096])",
      [](GemmNumerics& g, std::string_view v) { std::tie(g.tile_m, g.tile_n) = parse_tile(v); },
      [](const GemmNumerics& g) {
        return std::to_string(g.tile_m) + "x" + std::to_string(g.tile_n);
      }});
  t.push_back(choice_key<int>("cluster",
                              "split_k=cublas-sm90: the CTAs of the kernel's cluster (132 CTAs "
                              "run at once with clusters of 1, 2 or 4, 96 with 8)",
                              "1, 2, 4 or 8", &GemmNumerics::cluster,
                              {{"1", 1}, {"2", 2}, {"4", 4}, {"8", 8}}));
  t.push_back(GemmKey{
      "problem",
      "split_k=cublas-sm90: the whole GEMM's M x N, whose output tiles cap the pieces (auto: the "
      "run's own; give it when emulating some rows of a larger GEMM)",
      "auto or MxN (integers in [1, 2^31))",
      [](GemmNumerics& g, std::string_view v) {
        if (v == "auto") {
          g.problem_m = g.problem_n = 0;
          return;
        }
        const size_t x = v.find('x');
        if (x == std::string_view::npos) {
          throw std::invalid_argument("problem '" + excerpt(v) + "': expected MxN or auto");
        }
        g.problem_m = limits::parse_integer(v.substr(0, x), 1, INT32_MAX, "problem M");
        g.problem_n = limits::parse_integer(v.substr(x + 1), 1, INT32_MAX, "problem N");
      },
      [](const GemmNumerics& g) {
        return g.problem_m ? std::to_string(g.problem_m) + "x" + std::to_string(g.problem_n)
                           : std::string("auto");
      }});
  t.push_back(choice_key<BlockScales>(
      "block_scales",
      "scales per block of K: none, mxfp8 (an E8M0 scale per 32 elements) or nvfp4 (an e4m3 "
      "scale per 16); each block one chain from +0, its fp32 result times fl(scale_a * scale_b) of "
      "its blocks, added to an fp32 accumulator (sets the promotion; unverified on hardware)",
      "none, mxfp8 or nvfp4", &GemmNumerics::block_scales,
      {{"none", BlockScales::kNone},
       {"mxfp8", BlockScales::kMxfp8},
       {"nvfp4", BlockScales::kNvfp4}}));
  t.push_back(choice_key<Scaling>(
      "scaling",
      "the scales multiplied in the epilogue: none, tensor (one fp32 scale per operand) or row "
      "(one per row of A and per column of B; one value still stands for all)",
      "none, tensor or row", &GemmNumerics::scaling,
      {{"none", Scaling::kNone}, {"tensor", Scaling::kTensor}, {"row", Scaling::kRow}}));
  t.push_back(choice_key<ScaleOrder>(
      "scale_order",
      "alpha: D times fl(scale_a * scale_b) (cuBLAS's alpha); b-then-a: fl(D * scale_b) times "
      "scale_a, each product rounded to fp32",
      "alpha or b-then-a", &GemmNumerics::scale_order,
      {{"alpha", ScaleOrder::kAlpha}, {"b-then-a", ScaleOrder::kBThenA}}));
  t.push_back(choice_key<Format>(
      "out", "the output format, rounded to nearest even after the scales and the bias",
      "fp32, bf16 or fp16", &GemmNumerics::out,
      {{"fp32", formats::fp32}, {"bf16", formats::bf16}, {"fp16", formats::fp16}}));
  return t;
}

const GemmKey* find_key(std::string_view key) {
  for (const GemmKey& k : gemm_keys()) {
    if (k.key == key) return &k;
  }
  return nullptr;
}

void assign(GemmNumerics& g, std::string_view item, std::string_view spec) {
  const size_t eq = item.find('=');
  const std::string_view key = item.substr(0, eq);
  const GemmKey* k = find_key(key);
  if (!k) {
    std::vector<std::string> names;
    for (const GemmKey& known : gemm_keys()) names.emplace_back(known.key);
    throw std::invalid_argument("GEMM numerics '" + excerpt(spec) + "': unknown key '" +
                                excerpt(key) + "'" + did_you_mean(key, names) +
                                " (known: " + joined(names) + ")");
  }
  k->set(g, item.substr(eq + 1));
}

}  // namespace

std::span<const GemmKey> gemm_keys() {
  static const std::vector<GemmKey> keys = make_keys();
  return keys;
}

GemmNumerics make_gemm_preset(std::string_view name) {
  std::vector<std::string> names;
  for (const GemmPreset& p : gemm_presets()) {
    names.emplace_back(p.name);
    if (p.name != name) continue;
    GemmNumerics g;
    g.preset = std::string(name);
    g.instruction = &tensor_core_model("tc:sm90-wgmma-bf16");
    g.split_k = &split_k_none();
    std::string_view rest = p.assignments;
    while (!rest.empty()) {
      const size_t comma = rest.find(',');
      assign(g, rest.substr(0, comma), p.assignments);
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
    return g;
  }
  throw std::invalid_argument("unknown GEMM preset '" + excerpt(name) + "'" +
                              did_you_mean(name, names) + " (known: " + joined(names) + ")");
}

GemmNumerics parse_gemm_numerics(std::string_view text) {
  GemmNumerics g;
  config::read_spec_items(
      text, "GEMM numerics", "PRESET[,KEY=VALUE...]",
      [](std::string_view item) { return std::string(item.substr(0, item.find('='))); },
      [&](std::string_view item) {
        if (item.find('=') != std::string_view::npos) {
          throw std::invalid_argument("GEMM numerics '" + excerpt(text) +
                                      "' must start with a preset, not '" + excerpt(item) + "'");
        }
        g = make_gemm_preset(item);
      },
      [&](std::string_view item) {
        if (item.find('=') == std::string_view::npos) {
          throw std::invalid_argument("GEMM numerics '" + excerpt(text) + "': '" + excerpt(item) +
                                      "' is not KEY=VALUE (expected PRESET[,KEY=VALUE...])");
        }
        assign(g, item, text);
      });
  check_gemm_numerics(g);
  return g;
}

int block_length(BlockScales b) {
  return b == BlockScales::kMxfp8 ? 32 : b == BlockScales::kNvfp4 ? 16 : 0;
}

Format block_scale_format(BlockScales b) {
  return b == BlockScales::kMxfp8 ? formats::e8m0 : formats::e4m3fn;
}

void check_gemm_numerics(const GemmNumerics& g) {
  if (g.instruction->accumulator != formats::fp32) {
    throw std::invalid_argument("instruction=" + g.instruction->name + " accumulates in " +
                                g.instruction->accumulator.name() +
                                "; a GEMM model chains an instruction with an fp32 accumulator");
  }
  if (g.block_scales != BlockScales::kNone && g.promote_every != 0) {
    throw std::invalid_argument("promote=" + std::to_string(g.promote_every) +
                                " with block_scales: block scales promote "
                                "every block already; give promote=none");
  }
}

std::string canonical_gemm_numerics(const GemmNumerics& g) {
  const GemmNumerics base = make_gemm_preset(g.preset);
  std::string text = g.preset;
  for (const GemmKey& k : gemm_keys()) {
    const std::string value = k.get(g);
    if (value != k.get(base)) text += "," + std::string(k.key) + "=" + value;
  }
  return text;
}

std::string gemm_reference_markdown() {
  std::string s = "## GEMM presets\n\n| preset | models | numerics |\n| --- | --- | --- |\n";
  for (const GemmPreset& p : gemm_presets()) {
    s += "| `" + std::string(p.name) + "` | " + std::string(p.doc) + " | `" +
         std::string(p.assignments) + "` |\n";
  }
  s += "\n## GEMM keys\n\n| key | values | default | what it sets |\n| --- | --- | --- | --- |\n";
  const GemmNumerics defaults = make_gemm_preset("chain");
  for (const GemmKey& k : gemm_keys()) {
    s += "| `" + std::string(k.key) + "` | " + std::string(k.syntax) + " | `" + k.get(defaults) +
         "` | " + std::string(k.doc) + " |\n";
  }
  s += "\n## Split-K strategies\n\n| split_k | pieces |\n| --- | --- |\n";
  for (const SplitKStrategy* st : split_k_strategies()) {
    s += "| `" + std::string(st->syntax()) + "` | " + std::string(st->doc()) + " |\n";
  }
  return s;
}

}  // namespace simprec::gemm
