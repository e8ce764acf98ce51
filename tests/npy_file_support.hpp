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

// `count` little-endian float32 copies of `value`.
inline std::string float32_data(float value, size_t count) {
  std::string data;
  for (size_t i = 0; i < count; ++i) data.append(reinterpret_cast<const char*>(&value), 4);
  return data;
}

}  // namespace simprec::testing
