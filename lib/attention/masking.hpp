// Which scores of a problem take part in its softmax, and what is added to them first: the
// causal mask aligned at the top left or the bottom right, a sliding window, a boolean mask and
// an additive bias (tensors broadcast over batch and heads, as SDPA's attn_mask), ALiBi and the
// tanh soft-cap (FlexAttention's score_mod of Gemma 2). A score is modified on its scaled value
// (the kernels add a bias after the softmax scale) and masked (-inf) after every modification.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace simprec::attention {

struct AttentionShape;
class ScoreMod;
class MaskMod;

// Where a causal mask's diagonal runs when Sq != Sk: from the first query and key (top-left,
// key j visible to query i when j <= i: SDPA's is_causal) or from the last of each (bottom-right,
// j <= i + Sk - Sq: FlashAttention's, and PyTorch's causal_lower_right).
enum class CausalAlign : uint8_t { kTopLeft, kBottomRight };
const char* causal_align_name(CausalAlign a);
// "top-left" or "bottom-right"; anything else throws std::invalid_argument naming `what` (the
// option or key that gave it).
CausalAlign parse_causal_align(std::string_view text, std::string_view what);

// Values of shape (batch, heads, nq, nk), C order, where batch and heads may be 1 and are then
// broadcast over the run's.
struct BroadcastTensor {
  int64_t batch = 1, heads = 1, nq = 0, nk = 0;
  std::vector<double> values;
  double at(int64_t b, int64_t h, int64_t i, int64_t j) const {
    const int64_t bb = batch == 1 ? 0 : b, hh = heads == 1 ? 0 : h;
    return values[static_cast<size_t>(((bb * heads + hh) * nq + i) * nk + j)];
  }
  // Throws std::invalid_argument (naming `what`) unless the values fill the shape and the shape
  // broadcasts over the run's.
  void check(const AttentionShape& run, const char* what) const;
};

// An array of shape `dims` (..., Sq, Sk) as a BroadcastTensor of a run of shape `s` whose
// queries have leading dimensions `leading` (..., H): its dimensions before the last two are
// aligned at the right with `leading`, each 1 or the run's, and those before the heads all 1 or
// all the run's. Throws std::invalid_argument naming `what`.
BroadcastTensor broadcast_tensor(const std::vector<int64_t>& dims, std::vector<double> values,
                                 const AttentionShape& s, const std::vector<int64_t>& leading,
                                 const std::string& what);

struct Masking {
  CausalAlign causal_align = CausalAlign::kTopLeft;
  // A sliding window about the (aligned) diagonal: key j is visible to query i when
  // i' - window_left <= j <= i' + window_right, i' = i (top-left) or i + Sk - Sq (bottom-right);
  // -1: unbounded on that side. With causal, window_right is 0 whatever it says.
  int64_t window_left = -1, window_right = -1;
  std::shared_ptr<const BroadcastTensor> mask;  // 0: masked
  std::shared_ptr<const MaskMod> mask_mod;      // an expression (score_mod.hpp); false: masked
  std::shared_ptr<const BroadcastTensor> bias;  // added to the scaled score
  std::vector<double> alibi_slopes;             // per head h: + slope_h (j - i)
  bool alibi_default = false;  // ALiBi with the paper's slopes 2^(-8 (h + 1) / H) (Press et al.)
  double softcap = 0;          // > 0: the score becomes cap tanh(score / cap)
  // Any score_mod in FlexAttention's form (score_mod.hpp); not with the three above.
  std::shared_ptr<const ScoreMod> score_mod;
  // What modifies the score before the bias: score_mod, or the soft-cap and ALiBi as the
  // score_mod FlexAttention compiles for them (ScoreMod::softcap_and_alibi); null for none.
  std::shared_ptr<const ScoreMod> score_program(int64_t heads) const;

  bool has_window() const { return window_left >= 0 || window_right >= 0; }
  bool has_alibi() const { return alibi_default || !alibi_slopes.empty(); }
  // Head h's ALiBi slope in a run of `heads` heads.
  double alibi_slope(int64_t h, int64_t heads) const;
  // Whether a score's value changes (the scaled score is then what the softmax sees).
  bool modifies_scores() const { return bias || has_alibi() || softcap > 0 || score_mod; }
  // Whether anything beyond a top-left causal mask is set.
  bool active() const {
    return causal_align != CausalAlign::kTopLeft || has_window() || mask || mask_mod ||
           modifies_scores();
  }
  // Throws std::invalid_argument on a value out of range or a tensor that does not fit `s`.
  void check(const AttentionShape& s) const;
  // A line for reports ("bottom-right causal, window 256/0, bias 1x4, softcap 20").
  std::string describe(bool causal) const;
};

// Which keys each query of problem p (batch p / H, head p % H) sees.
class Visibility {
 public:
  Visibility(const Masking& m, bool causal, const AttentionShape& s, int64_t problem);
  bool operator()(int64_t i, int64_t j) const {
    const int64_t ia = i + offset_;
    if (causal_ && j > ia) return false;
    if (left_ >= 0 && j < ia - left_) return false;
    if (right_ >= 0 && j > ia + right_) return false;
    if (mask_ && mask_->at(b_, h_, i, j) == 0.0) return false;
    return !mask_mod_ || mask_mod_visible(i, j);
  }
  // Whether some (any) or every (all) key of [j0, j1) is visible to some or every query of
  // [i0, i1).
  bool any(int64_t i0, int64_t i1, int64_t j0, int64_t j1) const;
  bool all(int64_t i0, int64_t i1, int64_t j0, int64_t j1) const;
  // Whether it is the plain top-left causal mask or no mask (what the block strategies and the
  // float fast path compute without asking).
  bool plain() const { return plain_; }

 private:
  bool mask_mod_visible(int64_t i, int64_t j) const;

  bool causal_, plain_;
  int64_t offset_, left_, right_;
  const BroadcastTensor* mask_;
  const MaskMod* mask_mod_;
  int64_t b_, h_;
};

}  // namespace simprec::attention
