#include "emulation/excerpt.hpp"

#include <cstdio>

namespace simprec {

std::string excerpt(std::string_view text, size_t max_chars) {
  std::string out;
  size_t shown = 0;
  for (; shown < text.size() && out.size() < max_chars; ++shown) {
    const auto c = static_cast<unsigned char>(text[shown]);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\\') {
      out += "\\\\";
    } else if (c < 0x20 || c >= 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (shown < text.size()) out += "... (" + std::to_string(text.size()) + " bytes)";
  return out;
}

std::string bounded_message(std::string_view message, size_t max_bytes) {
  if (message.size() <= max_bytes) return std::string(message);
  const size_t tail = max_bytes / 8, head = max_bytes - tail;
  return std::string(message.substr(0, head)) + " [... " +
         std::to_string(message.size() - head - tail) + " bytes cut ...] " +
         std::string(message.substr(message.size() - tail));
}

}  // namespace simprec
