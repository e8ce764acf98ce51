// NumPy .npy files: the exchange format for tensors on the command line.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "lib/limits/output_folder.hpp"

namespace simprec {

enum class NpyType : uint8_t {
  kFloat32,
  kFloat64,
  kUint8,
  kUint16,
  kUint32,
  kUint64,
  kInt32,
  kInt64
};

struct NpyArray {
  NpyType type = NpyType::kFloat32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;  // C order, little endian

  int64_t size() const;  // number of elements
  size_t element_bytes() const;
  template <class T>
  std::span<const T> as() const {
    return {reinterpret_cast<const T*>(data.data()), data.size() / sizeof(T)};
  }
  template <class T>
  std::span<T> as() {
    return {reinterpret_cast<T*>(data.data()), data.size() / sizeof(T)};
  }
  // Elements as doubles (float and integer types; exact for all of them up to 2^53).
  std::vector<double> to_doubles() const;
};

std::string npy_type_name(NpyType type);  // "float32", "uint16", ...

// Throws std::runtime_error naming the file and what is wrong (not a regular file, bad magic,
// unsupported dtype, Fortran order, a shape entry that is not a non-negative integer, a size
// that overflows or disagrees with the file's size: all found before the data is allocated).
NpyArray read_npy(const std::filesystem::path& path);
// The type and shape alone, checked as read_npy checks them (the data is not read).
NpyArray read_npy_header(const std::filesystem::path& path);
// Writes atomically through limits::OutputFolder (a temporary file renamed into place; a link at
// the name is replaced, never followed). Throws std::runtime_error naming the file.
void write_npy(const std::filesystem::path& path, const NpyArray& array);
void write_npy(const limits::OutputFolder& folder, const std::string& name, const NpyArray& array);

template <class T>
NpyArray make_npy(std::vector<int64_t> shape, std::span<const T> values);

}  // namespace simprec
