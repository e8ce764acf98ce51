#include "lib/limits/memory_bound.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

#include "lib/limits/checked_arithmetic.hpp"
#include "lib/limits/strict_parse.hpp"

namespace simprec::limits {
namespace {

constexpr uint64_t kSaturated = std::numeric_limits<uint64_t>::max();

uint64_t saturating_mul(uint64_t a, uint64_t b) {
  return checked_mul(a, b).value_or(kSaturated);
}
uint64_t saturating_add(uint64_t a, uint64_t b) {
  return checked_add(a, b).value_or(kSaturated);
}

}  // namespace

MemoryEstimate& MemoryEstimate::add(int64_t count, uint64_t bytes_each) {
  if (count > 0) bytes_ = saturating_add(bytes_, saturating_mul(uint64_t(count), bytes_each));
  return *this;
}

MemoryEstimate& MemoryEstimate::add(const MemoryEstimate& other) {
  bytes_ = saturating_add(bytes_, other.bytes_);
  return *this;
}

MemoryEstimate& MemoryEstimate::times(uint64_t factor) {
  bytes_ = saturating_mul(bytes_, factor);
  return *this;
}

uint64_t physical_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return 0;
  return saturating_mul(uint64_t(pages), uint64_t(page));
}

uint64_t parse_memory_size(std::string_view text, const std::string& what) {
  const auto fail = [&]() -> uint64_t {
    throw std::invalid_argument(what + " '" + excerpt(text) +
                                "' is not a memory size (expected bytes, or a number with K, M, "
                                "G or T, e.g. 512M or 4G)");
  };
  std::string_view number = text;
  for (const std::string_view suffix : {"iB", "B"}) {
    if (number.size() > suffix.size() && number.ends_with(suffix)) {
      number.remove_suffix(suffix.size());
      break;
    }
  }
  int shift = 0;
  if (!number.empty()) {
    switch (number.back()) {
      case 'K':
      case 'k':
        shift = 10;
        break;
      case 'M':
      case 'm':
        shift = 20;
        break;
      case 'G':
      case 'g':
        shift = 30;
        break;
      case 'T':
      case 't':
        shift = 40;
        break;
      default:
        break;
    }
    if (shift) number.remove_suffix(1);
  }
  if (const auto whole = parse_uint64(number)) {
    if (*whole == 0 || *whole > (kSaturated >> shift)) fail();
    return *whole << shift;
  }
  const auto value = parse_finite_double(number);
  if (!value || !(*value > 0)) fail();
  const double bytes = std::ldexp(*value, shift);
  if (bytes < 1 || bytes >= 0x1p64) fail();
  return static_cast<uint64_t>(bytes);
}

MemoryLimit memory_limit(const std::string& max_memory_text) {
  if (!max_memory_text.empty())
    return {parse_memory_size(max_memory_text, "--max-memory"), "--max-memory " + max_memory_text};
  const uint64_t physical = physical_memory_bytes();
  return {physical ? physical : kSaturated, "the machine's physical memory"};
}

std::string memory_text(uint64_t bytes) {
  if (bytes == kSaturated) return "more than 16 EiB";
  if (bytes < 1024) return std::to_string(bytes) + " bytes";
  const char* units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes) / 1024;
  int unit = 0;
  while (value >= 1024 && unit < 5) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.3g %s", value, units[unit]);
  return text;
}

void check_memory(const MemoryEstimate& estimate, const MemoryLimit& limit,
                  const std::string& what) {
  if (estimate.bytes() <= limit.bytes) return;
  throw std::invalid_argument(what + " needs an estimated " + memory_text(estimate.bytes()) +
                              " of memory, more than " + memory_text(limit.bytes) + " (" +
                              limit.source + ")");
}

}  // namespace simprec::limits
