// Text that comes from a plugin (names, messages) on its way to a terminal, a one-record-per-line
// listing or JSON: what may pass as it is, and how the rest is shown. Valid UTF-8 passes (JSON
// needs it, and a message in any language is welcome); a byte that is not part of valid UTF-8
// becomes the four characters \xNN, so that a message keeps every byte readable instead of being
// lost.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace simprec::plugins {

// `text` with every byte that is not part of a valid UTF-8 sequence written as \xNN.
std::string valid_utf8(std::string_view text);

// valid_utf8(text) with control characters (below 0x20, and 0x7f) escaped too: \n, \r, \t or
// \xNN. For text printed inside one line of a listing.
std::string one_line_text(std::string_view text);

// The offset of the first control character (below 0x20, or 0x7f) in `text`, if any.
std::optional<size_t> first_control_character(std::string_view text);

}  // namespace simprec::plugins
