#include "lib/cli/masking_options.hpp"

#include <cmath>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "lib/attention/score_mod.hpp"
#include "lib/cli/command.hpp"
#include "lib/limits/strict_parse.hpp"
#include "lib/npy/npy.hpp"

namespace simprec::cli {

void MaskingOptions::add_to(CLI::App& command) {
  command.add_option("--causal-align", causal_align,
                     "where --causal's diagonal runs when Nq != Nk: top-left (key j visible to "
                     "query i when j <= i, SDPA's is_causal) or bottom-right (j <= i + Nk - Nq)");
  command.add_option("--window", window,
                     "L,R: a sliding window, keys from L before to R after the (aligned) "
                     "diagonal (-1: unbounded on that side)");
  command.add_option("--softcap", softcap,
                     "CAP: scores become CAP tanh(score / CAP) (Gemma 2's soft-cap, as "
                     "FlexAttention compiles it)");
  command.add_option("--alibi", alibi,
                     "ALiBi slopes: 'default' (2^(-8(h+1)/H)) or S1,S2,... one per head");
  command.add_option("--mask", mask,
                     "FILE.npy: a boolean (or 0/1) mask (..., Nq, Nk) broadcast over the batch "
                     "and heads; 0: masked");
  command.add_option("--bias", bias,
                     "FILE.npy: an additive bias (..., Nq, Nk) broadcast over the batch and heads, "
                     "added to the scaled scores (-inf masks)");
  command.add_option("--score-mod", score_mod,
                     "EXPR: a score_mod in FlexAttention's form, e.g. 'score + bias[h, q_idx, "
                     "kv_idx]' (docs/score_mod.md), emulated as Inductor and Triton compile it");
  command.add_option("--mask-mod", mask_mod,
                     "EXPR: a mask_mod in FlexAttention's form, e.g. 'q_idx // 256 == kv_idx // "
                     "256' (false: masked; docs/score_mod.md)");
  command.add_option("--score-tensor", score_tensors,
                     "NAME=FILE.npy: an array --score-mod and --mask-mod read by NAME "
                     "(repeatable)");
}

bool MaskingOptions::any() const {
  return causal_align != "top-left" || !window.empty() || !softcap.empty() || !alibi.empty() ||
         !mask.empty() || !bias.empty() || !score_mod.empty() || !mask_mod.empty() ||
         !score_tensors.empty();
}

namespace {

double finite_value(const std::string& text, const std::string& what) {
  const std::optional<double> v = limits::parse_finite_double(text);
  if (!v)
    throw std::invalid_argument(what + " '" + limits::excerpt(text) + "': not a finite number");
  return *v;
}

std::shared_ptr<const attention::BroadcastTensor> tensor_from(const std::string& path,
                                                              const char* option,
                                                              const attention::AttentionShape& s,
                                                              const std::vector<int64_t>& leading) {
  if (path.empty()) return nullptr;
  try {
    const NpyArray a = read_npy(path);
    return std::make_shared<const attention::BroadcastTensor>(
        attention::broadcast_tensor(a.shape, a.to_doubles(), s, leading, option + (" " + path)));
  } catch (const std::exception& e) {
    throw UsageError(e.what());
  }
}

// NAME=FILE.npy as an array of booleans, integers or floats a score_mod reads.
attention::ScoreModTensor score_tensor_from(const std::string& spec) {
  const size_t eq = spec.find('=');
  if (eq == std::string::npos || eq == 0)
    throw UsageError("--score-tensor '" + limits::excerpt(spec) + "': expected NAME=FILE.npy");
  attention::ScoreModTensor t;
  t.name = spec.substr(0, eq);
  const std::string path = spec.substr(eq + 1);
  try {
    const NpyArray a = read_npy(path);
    t.dims = a.shape;
    t.values = a.to_doubles();
    // A boolean .npy reads as 0/1 integers (compare it: m[q_idx, kv_idx] == 1).
    t.type = a.type == NpyType::kFloat32 || a.type == NpyType::kFloat64
                 ? attention::ScoreType::kFloat
                 : attention::ScoreType::kInt;
  } catch (const std::exception& e) {
    throw UsageError("--score-tensor " + limits::excerpt(t.name) + ": " + e.what());
  }
  return t;
}

}  // namespace

attention::Masking MaskingOptions::masking(const attention::AttentionShape& s,
                                           const std::vector<int64_t>& leading) const {
  attention::Masking m;
  try {
    m.causal_align = attention::parse_causal_align(causal_align, "--causal-align");
    if (!window.empty()) {
      const size_t comma = window.find(',');
      if (comma == std::string::npos)
        throw std::invalid_argument("--window '" + limits::excerpt(window) + "': expected L,R");
      m.window_left =
          limits::parse_integer(window.substr(0, comma), -1, int64_t{1} << 40, "--window L");
      m.window_right =
          limits::parse_integer(window.substr(comma + 1), -1, int64_t{1} << 40, "--window R");
    }
    if (!softcap.empty()) {
      m.softcap = finite_value(softcap, "--softcap");
      if (!(m.softcap > 0) || std::isinf(m.softcap))
        throw std::invalid_argument("--softcap '" + limits::excerpt(softcap) +
                                    "': expected a finite cap > 0");
    }
    if (alibi == "default") {
      m.alibi_default = true;
    } else if (!alibi.empty()) {
      std::stringstream ss(alibi);
      std::string item;
      while (std::getline(ss, item, ','))
        m.alibi_slopes.push_back(finite_value(item, "--alibi slope"));
    }
    m.mask = tensor_from(mask, "--mask", s, leading);
    m.bias = tensor_from(bias, "--bias", s, leading);
    std::vector<attention::ScoreModTensor> tensors;
    for (const std::string& spec : score_tensors) tensors.push_back(score_tensor_from(spec));
    if (!score_tensors.empty() && score_mod.empty() && mask_mod.empty())
      throw UsageError("--score-tensor without --score-mod or --mask-mod");
    if (!mask_mod.empty())
      m.mask_mod = std::make_shared<const attention::MaskMod>(mask_mod, tensors);
    if (!score_mod.empty())
      m.score_mod = std::make_shared<const attention::ScoreMod>(score_mod, std::move(tensors));
    m.check(s);
  } catch (const UsageError&) {
    throw;
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  return m;
}

}  // namespace simprec::cli
