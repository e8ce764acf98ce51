// "BRxBC" tile sizes as the command line and experiment files give them: one parser, one range,
// so that both accept and refuse the same tiles.
#pragma once

#include <string_view>
#include <utility>

namespace simprec::attention {

// Tile sizes are integers in [1, kMaxTile]. A tile larger than the sequence is kept as given
// (not clamped to N): the stochastic-rounding stream indices depend on the tile width, so a
// clamped tile would give different bits.
inline constexpr int kMaxTile = 65536;

// Br and Bc of "BRxBC"; throws std::invalid_argument quoting the text otherwise.
std::pair<int, int> parse_tile(std::string_view text);

}  // namespace simprec::attention
