// How numbers are printed: the shortest decimal that reads back as the same double, which for
// every format here is the exact value's shortest round-trip form.
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>

namespace simprec::cli {

inline std::string shortest_text(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x < 0 ? "-inf" : "inf";
  char buffer[64];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, x);
  return std::string(buffer, end);
}

// "0x" and the format's width in hex digits.
inline std::string hex_bits(uint64_t bits, int width_bits) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "0x%0*llx", (width_bits + 3) / 4,
                static_cast<unsigned long long>(bits));
  return buffer;
}

}  // namespace simprec::cli
