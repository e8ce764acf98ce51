#include "lib/limits/strict_parse.hpp"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace simprec::limits {
namespace {

template <class T>
std::optional<T> parse_whole(std::string_view text) {
  if (text.empty() || text.front() == '+') return std::nullopt;
  T value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, 10);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

std::optional<int64_t> parse_int64(std::string_view text) {
  return parse_whole<int64_t>(text);
}

std::optional<uint64_t> parse_uint64(std::string_view text) {
  // from_chars reads "-1" into an unsigned type as an error already; a leading '-' is refused
  // explicitly all the same, so that "-0" is not a seed either.
  if (!text.empty() && text.front() == '-') return std::nullopt;
  return parse_whole<uint64_t>(text);
}

int64_t parse_integer(std::string_view text, int64_t min, int64_t max, const std::string& what) {
  const auto value = parse_int64(text);
  if (!value || *value < min || *value > max) {
    throw std::invalid_argument(what + " '" + excerpt(text) + "' is not an integer in [" +
                                std::to_string(min) + ", " + std::to_string(max) + "]");
  }
  return *value;
}

uint64_t parse_seed(std::string_view text, const std::string& what) {
  const auto value = parse_uint64(text);
  if (!value) {
    throw std::invalid_argument(what + " '" + excerpt(text) +
                                "' is not a seed (expected a decimal integer in [0, "
                                "18446744073709551615])");
  }
  return *value;
}

std::optional<double> parse_finite_double(std::string_view text) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text.front()))) return std::nullopt;
  const std::string copy(text);
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size() || !std::isfinite(value)) return std::nullopt;
  // strtod sets ERANGE for underflow too; a tiny value is still the number the user wrote.
  if (errno == ERANGE && std::fabs(value) > 1) return std::nullopt;
  return value;
}

std::string shortest_text(double v) {
  char buffer[64];
  const auto r = std::to_chars(buffer, buffer + sizeof buffer, v);
  return std::string(buffer, r.ptr);
}

}  // namespace simprec::limits
