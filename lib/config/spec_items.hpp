// The items of a one-line spec, "FIRST,ITEM,ITEM...": what attention's numerics specs
// (lib/attention/numerics_spec.hpp) and GEMM numerics specs (lib/gemm/gemm_numerics.hpp) both
// read through, so that they refuse the same malformed text with the same words.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace simprec::config {

// Calls first(item) for the first item and item(text) for each other, in order. Throws
// std::invalid_argument, as "WHAT 'TEXT': ...", for an empty item (naming `grammar`, the
// expected form) and for two items with the same key_of(item) (each key once: a repeated one
// would be a silent last-one-wins). The callbacks throw for items they refuse.
void read_spec_items(std::string_view text, std::string_view what, std::string_view grammar,
                     const std::function<std::string(std::string_view)>& key_of,
                     const std::function<void(std::string_view)>& first,
                     const std::function<void(std::string_view)>& item);

}  // namespace simprec::config
