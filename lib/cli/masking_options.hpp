// The masking options of `simprec attention` (lib/attention/masking.hpp): --causal-align,
// --window, --softcap, --alibi, --mask, --bias, --score-mod, --mask-mod and --score-tensor.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "lib/attention/masking.hpp"
#include "lib/attention/tensors.hpp"

namespace simprec::cli {

struct MaskingOptions {
  std::string causal_align = "top-left", window, softcap, alibi, mask, bias, score_mod, mask_mod;
  std::vector<std::string> score_tensors;  // NAME=FILE.npy
  void add_to(CLI::App& command);
  bool any() const;
  // The masking for a run of shape `s` whose queries have leading dimensions `leading`; throws
  // UsageError naming the option and the offending value.
  attention::Masking masking(const attention::AttentionShape& s,
                             const std::vector<int64_t>& leading) const;
};

}  // namespace simprec::cli
