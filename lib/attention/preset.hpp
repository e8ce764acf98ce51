// Presets: the kernel models built into simprec (model.hpp; one file each in
// lib/attention/models/), each for a low-precision format F (bf16 by default).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "lib/attention/config.hpp"

namespace simprec::attention {

// The built-in model `name` at format F. Throws std::invalid_argument listing the known names.
AttentionConfig make_preset(std::string_view name, const Format& low_precision = formats::bf16);
// Every built-in model's name, in name order.
std::vector<std::string> preset_names();
// Its description (empty for an unknown name).
std::string_view preset_description(std::string_view name);

}  // namespace simprec::attention
