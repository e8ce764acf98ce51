// The memory bound: work whose estimated memory exceeds the limit (--max-memory SIZE, else the
// machine's physical memory) is refused before anything is allocated, with the estimate.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace simprec::limits {

// Bytes, adding up saturated at 2^64 - 1: an estimate that large is refused like any other.
class MemoryEstimate {
 public:
  // `count` items of `bytes_each` bytes (negative counts are treated as 0).
  MemoryEstimate& add(int64_t count, uint64_t bytes_each);
  MemoryEstimate& add(const MemoryEstimate& other);
  MemoryEstimate& times(uint64_t factor);
  uint64_t bytes() const { return bytes_; }

 private:
  uint64_t bytes_ = 0;
};

struct MemoryLimit {
  uint64_t bytes = 0;
  std::string source;  // "--max-memory 4G" or "the machine's physical memory"
};

// The machine's physical memory (sysconf); 0 where it cannot be read.
uint64_t physical_memory_bytes();

// "1073741824", "512M", "4G", "1.5T" (K, M, G, T: powers of 1024, optional "iB"/"B"). Throws
// std::invalid_argument naming `what` and the text on anything else, or on 0.
uint64_t parse_memory_size(std::string_view text, const std::string& what);

// The limit: `max_memory_text` (an option's value) when given, else the physical memory.
MemoryLimit memory_limit(const std::string& max_memory_text);

// "4.75 GiB", "512 MiB", "900 bytes"; "more than 16 EiB" for a saturated estimate.
std::string memory_text(uint64_t bytes);

// Throws std::invalid_argument when `estimate` exceeds the limit: "WHAT needs an estimated
// X of memory, more than LIMIT (SOURCE)".
void check_memory(const MemoryEstimate& estimate, const MemoryLimit& limit,
                  const std::string& what);

}  // namespace simprec::limits
