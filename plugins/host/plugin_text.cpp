#include "plugins/host/plugin_text.hpp"

#include <cstdio>

namespace simprec::plugins {
namespace {

bool is_control(unsigned char c) {
  return c < 0x20 || c == 0x7f;
}

// The length of the valid UTF-8 sequence that starts text[i], 0 when none does (RFC 3629: no
// overlong forms, no surrogates, nothing above U+10FFFF).
size_t utf8_sequence_length(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  if (lead < 0x80) return 1;
  size_t length = 0;
  unsigned char low = 0x80, high = 0xbf;  // the range of the second byte
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    if (lead == 0xe0) low = 0xa0;
    if (lead == 0xed) high = 0x9f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    if (lead == 0xf0) low = 0x90;
    if (lead == 0xf4) high = 0x8f;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  if (byte(i + 1) < low || byte(i + 1) > high) return 0;
  for (size_t k = 2; k < length; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xbf) return 0;
  }
  return length;
}

std::string hex_escape(unsigned char c) {
  char text[5];
  std::snprintf(text, sizeof text, "\\x%02x", c);
  return text;
}

std::string escaped(std::string_view text, bool escape_controls) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const size_t length = utf8_sequence_length(text, i);
    const auto c = static_cast<unsigned char>(text[i]);
    if (length == 0) {
      out += hex_escape(c);
      ++i;
      continue;
    }
    if (escape_controls && length == 1 && is_control(c)) {
      out += c == '\n' ? "\\n" : c == '\r' ? "\\r" : c == '\t' ? "\\t" : hex_escape(c);
    } else {
      out.append(text.substr(i, length));
    }
    i += length;
  }
  return out;
}

}  // namespace

std::string valid_utf8(std::string_view text) {
  return escaped(text, false);
}

std::string one_line_text(std::string_view text) {
  return escaped(text, true);
}

std::optional<size_t> first_control_character(std::string_view text) {
  for (size_t i = 0; i < text.size(); ++i) {
    if (is_control(static_cast<unsigned char>(text[i]))) return i;
  }
  return std::nullopt;
}

}  // namespace simprec::plugins
