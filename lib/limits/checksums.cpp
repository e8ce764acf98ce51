#include "lib/limits/checksums.hpp"

#include <lzma.h>

#include <cstdio>

#include "lib/limits/input_file.hpp"

namespace simprec::limits {

uint32_t crc32_of(std::string_view bytes) {
  return lzma_crc32(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), 0);
}

std::string crc32_hex(std::string_view bytes) {
  char text[9];
  std::snprintf(text, sizeof text, "%08x", static_cast<unsigned>(crc32_of(bytes)));
  return text;
}

std::string file_digest(const std::filesystem::path& path, std::string_view expected) {
  const InputFile file(path, expected);
  uint64_t crc = 0;
  file.for_each_chunk(size_t{1} << 20, [&](std::string_view piece) {
    crc = lzma_crc64(reinterpret_cast<const uint8_t*>(piece.data()), piece.size(), crc);
  });
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(crc));
  return "crc64:" + std::string(text) + ":" + std::to_string(file.size());
}

}  // namespace simprec::limits
