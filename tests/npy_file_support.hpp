// .npy files written byte by byte for tests, so that a header can claim anything (a shape that
// overflows, a negative dimension, more data than the file holds).
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

namespace simprec::testing {

// Version 1.0 file with header "{'descr': DESCR, 'fortran_order': False, 'shape': SHAPE, }"
// (SHAPE as written, e.g. "(2, 3)"), padded to 64 bytes, then `data`.
inline void write_raw_npy(const std::filesystem::path& file, const std::string& descr,
                          const std::string& shape, const std::string& data) {
  std::string header =
      "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write("\x93NUMPY\x01\x00", 8);
  const char len[2] = {static_cast<char>(header.size() & 0xff),
                       static_cast<char>(header.size() >> 8)};
  out.write(len, 2);
  out << header << data;
}

// Version 2.0 file (a 4-byte header length, for headers past 64 KB) with `header` as written,
// padded to 64 bytes, then `data`.
inline void write_npy_v2(const std::filesystem::path& file, std::string header,
                         const std::string& data) {
  header.append((64 - (12 + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  const auto n = static_cast<uint32_t>(header.size());
  const char len[4] = {static_cast<char>(n & 0xff), static_cast<char>((n >> 8) & 0xff),
                       static_cast<char>((n >> 16) & 0xff), static_cast<char>(n >> 24)};
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write("\x93NUMPY\x02\x00", 8);
  out.write(len, 4);
  out << header << data;
}

// `count` little-endian float32 copies of `value`.
inline std::string float32_data(float value, size_t count) {
  std::string data;
  for (size_t i = 0; i < count; ++i) data.append(reinterpret_cast<const char*>(&value), 4);
  return data;
}

}  // namespace simprec::testing
