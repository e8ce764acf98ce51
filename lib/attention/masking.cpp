#include "lib/attention/masking.hpp"

#include "emulation/excerpt.hpp"
#include "lib/attention/score_mod.hpp"

#include <cmath>
#include <stdexcept>

#include "lib/attention/tensors.hpp"
#include "lib/limits/checked_arithmetic.hpp"
#include "lib/limits/strict_parse.hpp"

namespace simprec::attention {

const char* causal_align_name(CausalAlign a) {
  return a == CausalAlign::kTopLeft ? "top-left" : "bottom-right";
}

CausalAlign parse_causal_align(std::string_view text, std::string_view what) {
  for (const CausalAlign a : {CausalAlign::kTopLeft, CausalAlign::kBottomRight}) {
    if (text == causal_align_name(a)) return a;
  }
  throw std::invalid_argument(std::string(what) + " '" + limits::excerpt(text) +
                              "': expected top-left or bottom-right");
}

void BroadcastTensor::check(const AttentionShape& s, const char* what) const {
  const auto text = [](int64_t b, int64_t h, int64_t q, int64_t k) {
    return "(" + std::to_string(b) + ", " + std::to_string(h) + ", " + std::to_string(q) + ", " +
           std::to_string(k) + ")";
  };
  if ((batch != 1 && batch != s.batch) || (heads != 1 && heads != s.heads) || nq != s.nq ||
      nk != s.nk) {
    throw std::invalid_argument(std::string(what) + ": shape " + text(batch, heads, nq, nk) +
                                " does not broadcast over the run's " +
                                text(s.batch, s.heads, s.nq, s.nk) +
                                " (batch and heads may be 1; Sq and Sk must match)");
  }
  const int64_t elements = limits::checked_product({batch, heads, nq, nk}, what);
  if (values.size() != static_cast<size_t>(elements)) {
    throw std::invalid_argument(std::string(what) + ": " + std::to_string(values.size()) +
                                " values for shape " + text(batch, heads, nq, nk));
  }
}

BroadcastTensor broadcast_tensor(const std::vector<int64_t>& dims, std::vector<double> values,
                                 const AttentionShape& s, const std::vector<int64_t>& leading,
                                 const std::string& what) {
  std::string text = "(";
  for (size_t i = 0; i < dims.size(); ++i) text += (i ? ", " : "") + std::to_string(dims[i]);
  text += dims.size() == 1 ? ",)" : ")";
  const auto fail = [&](const std::string& why) {
    throw std::invalid_argument(what + ": shape " + text + " " + why);
  };
  const size_t rank = dims.size();
  if (rank < 2 || rank > 2 + leading.size())
    fail("does not broadcast over the queries' leading dimensions and (Sq, Sk)");
  if (dims[rank - 2] != s.nq || dims[rank - 1] != s.nk)
    fail("expected (..., " + std::to_string(s.nq) + ", " + std::to_string(s.nk) + ") (Sq, Sk)");
  BroadcastTensor t;
  const size_t lead = rank - 2;
  for (size_t i = 0; i < lead; ++i) {
    const int64_t size = dims[i], run = leading[leading.size() - lead + i];
    if (size != 1 && size != run) fail("does not broadcast over the queries' leading dimensions");
    if (size == 1) continue;
    if (i + 1 == lead) {
      t.heads = size;
    } else {
      t.batch *= size;
    }
  }
  if (t.batch != 1 && t.batch != s.batch)
    fail("broadcasts over some batch dimensions only: give all of them or size 1 for each");
  t.nq = s.nq;
  t.nk = s.nk;
  t.values = std::move(values);
  t.check(s, what.c_str());
  return t;
}

std::shared_ptr<const ScoreMod> Masking::score_program(int64_t heads) const {
  if (score_mod || (softcap <= 0 && !has_alibi())) return score_mod;
  std::vector<double> slopes;
  if (has_alibi()) {
    for (int64_t h = 0; h < heads; ++h) slopes.push_back(alibi_slope(h, heads));
  }
  return std::make_shared<const ScoreMod>(ScoreMod::softcap_and_alibi(softcap, slopes));
}

double Masking::alibi_slope(int64_t h, int64_t heads) const {
  if (!alibi_slopes.empty()) return alibi_slopes[static_cast<size_t>(h)];
  return std::exp2(-8.0 * static_cast<double>(h + 1) / static_cast<double>(heads));
}

void Masking::check(const AttentionShape& s) const {
  if (window_left < -1 || window_right < -1) {
    throw std::invalid_argument("window: sizes must be >= 0 (or -1, unbounded), got " +
                                std::to_string(window_left) + " and " +
                                std::to_string(window_right));
  }
  if (mask) mask->check(s, "mask");
  if (bias) {
    bias->check(s, "bias");
    for (const double x : bias->values) {
      if (std::isnan(x) || x == HUGE_VAL) {
        throw std::invalid_argument("bias: holds " + limits::shortest_text(x) +
                                    "; expected finite values or -inf (masked)");
      }
    }
  }
  if (alibi_default && !alibi_slopes.empty())
    throw std::invalid_argument("alibi: default slopes and given slopes together");
  if (!alibi_slopes.empty() && static_cast<int64_t>(alibi_slopes.size()) != s.heads) {
    throw std::invalid_argument("alibi: " + std::to_string(alibi_slopes.size()) + " slopes for " +
                                std::to_string(s.heads) + " heads");
  }
  for (const double x : alibi_slopes) {
    if (!std::isfinite(x))
      throw std::invalid_argument("alibi: slope " + limits::shortest_text(x) + " is not finite");
  }
  if (!(softcap >= 0) || std::isinf(softcap)) {
    throw std::invalid_argument("softcap: " + limits::shortest_text(softcap) +
                                " (expected a finite cap > 0, or 0 for none)");
  }
  if (score_mod && (has_alibi() || softcap > 0))
    throw std::invalid_argument(
        "score_mod with ALiBi or a soft-cap: write them into the score_mod");
}

std::string Masking::describe(bool causal) const {
  std::string out;
  const auto add = [&](const std::string& x) { out += (out.empty() ? "" : ", ") + x; };
  if (causal) add(std::string(causal_align_name(causal_align)) + " causal");
  if (has_window())
    add("window " + std::to_string(window_left) + "/" + std::to_string(window_right));
  if (mask) add("mask " + std::to_string(mask->batch) + "x" + std::to_string(mask->heads));
  if (bias) add("bias " + std::to_string(bias->batch) + "x" + std::to_string(bias->heads));
  if (has_alibi()) add(alibi_default ? "alibi (default slopes)" : "alibi");
  if (softcap > 0) add("softcap " + limits::shortest_text(softcap));
  if (mask_mod) add("mask_mod " + excerpt(mask_mod->text()));
  if (score_mod) add("score_mod " + excerpt(score_mod->text()));
  return out;
}

Visibility::Visibility(const Masking& m, bool causal, const AttentionShape& s, int64_t problem)
    : causal_(causal),
      offset_(m.causal_align == CausalAlign::kBottomRight ? s.nk - s.nq : 0),
      left_(m.window_left),
      right_(causal && m.has_window() ? 0 : m.window_right),
      mask_(m.mask.get()),
      mask_mod_(m.mask_mod.get()),
      b_(problem / s.heads),
      h_(problem % s.heads) {
  plain_ = offset_ == 0 && left_ < 0 && right_ < 0 && !mask_ && !mask_mod_;
}

bool Visibility::mask_mod_visible(int64_t i, int64_t j) const {
  return mask_mod_->visible(b_, h_, i, j);
}

bool Visibility::any(int64_t i0, int64_t i1, int64_t j0, int64_t j1) const {
  for (int64_t i = i0; i < i1; ++i) {
    for (int64_t j = j0; j < j1; ++j) {
      if ((*this)(i, j)) return true;
    }
  }
  return false;
}

bool Visibility::all(int64_t i0, int64_t i1, int64_t j0, int64_t j1) const {
  for (int64_t i = i0; i < i1; ++i) {
    for (int64_t j = j0; j < j1; ++j) {
      if (!(*this)(i, j)) return false;
    }
  }
  return true;
}

}  // namespace simprec::attention
