// The masking arguments of simprec.attention (lib/attention/masking.hpp): a boolean mask and an
// additive bias as numpy arrays broadcast over batch and heads, the causal alignment, a sliding
// window, ALiBi slopes, a soft-cap, and a score_mod expression with its tensors.
#pragma once

#include <pybind11/pybind11.h>

#include <optional>
#include <string>
#include <utility>

#include "lib/attention/masking.hpp"
#include "lib/attention/tensors.hpp"

namespace simprec::python {

struct MaskingArguments {
  pybind11::object mask = pybind11::none(), bias = pybind11::none();
  std::string causal_align = "top-left";
  std::optional<std::pair<int64_t, int64_t>> window;
  pybind11::object alibi_slopes = pybind11::none();
  double softcap = 0.0;
  // score_mod and mask_mod expressions (lib/attention/score_mod.hpp) and the arrays they read by
  // name.
  std::optional<std::string> score_mod, mask_mod;
  pybind11::object score_tensors = pybind11::none();
};

// The masking for a run of shape `s` (leading dimensions of Q: `leading`); throws
// pybind11::value_error naming the argument.
attention::Masking masking_argument(const MaskingArguments& a, const attention::AttentionShape& s,
                                    const std::vector<int64_t>& leading);

}  // namespace simprec::python
