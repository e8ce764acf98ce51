#include "lib/attention/tile_text.hpp"

#include <optional>
#include <stdexcept>
#include <string>

#include "lib/limits/strict_parse.hpp"

namespace simprec::attention {

std::pair<int, int> parse_tile(std::string_view text) {
  const auto x = text.find('x');
  const auto size = [&](std::string_view part) -> std::optional<int64_t> {
    const auto v = limits::parse_int64(part);
    if (!v || *v < 1 || *v > kMaxTile) return std::nullopt;
    return v;
  };
  if (x != std::string_view::npos) {
    const auto rows = size(text.substr(0, x)), cols = size(text.substr(x + 1));
    if (rows && cols) return {static_cast<int>(*rows), static_cast<int>(*cols)};
  }
  throw std::invalid_argument("tile '" + limits::excerpt(text) +
                              "' is not a tile size (expected BRxBC with integers in [1, " +
                              std::to_string(kMaxTile) + "], e.g. 64x64)");
}

}  // namespace simprec::attention
