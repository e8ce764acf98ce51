#include "lib/npy/npy.hpp"

#include <unistd.h>
#include <cstring>
#include <fstream>
#include <regex>
#include <stdexcept>
#include <system_error>

#include "lib/limits/checked_arithmetic.hpp"
#include "lib/limits/input_file.hpp"
#include "lib/limits/strict_parse.hpp"

namespace simprec {
namespace {

struct TypeInfo {
  NpyType type;
  const char* descr;
  const char* name;
  size_t bytes;
};
constexpr TypeInfo kTypes[] = {
    {NpyType::kFloat32, "<f4", "float32", 4}, {NpyType::kFloat64, "<f8", "float64", 8},
    {NpyType::kUint8, "|u1", "uint8", 1},     {NpyType::kUint16, "<u2", "uint16", 2},
    {NpyType::kUint32, "<u4", "uint32", 4},   {NpyType::kUint64, "<u8", "uint64", 8},
    {NpyType::kInt32, "<i4", "int32", 4},     {NpyType::kInt64, "<i8", "int64", 8},
};

const TypeInfo& info(NpyType t) {
  for (const auto& i : kTypes) {
    if (i.type == t) return i;
  }
  throw std::logic_error("npy: unknown type");
}

[[noreturn]] void fail(const std::filesystem::path& path, const std::string& what) {
  throw std::runtime_error(path.string() + ": not a usable .npy file: " + what);
}

// The dimensions of a header's shape tuple, "(2, 3)", "(5,)" or "()": non-negative decimal
// integers, with at most one trailing comma.
std::vector<int64_t> parse_shape(const std::filesystem::path& path, const std::string& dims) {
  std::vector<int64_t> shape;
  size_t start = 0;
  while (start <= dims.size()) {
    size_t comma = dims.find(',', start);
    if (comma == std::string::npos) comma = dims.size();
    std::string item = dims.substr(start, comma - start);
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    const bool last = comma == dims.size();
    if (item.empty()) {
      // "()" and the trailing comma of "(5,)" or "(2, 3,)" hold no dimension.
      if (last && (shape.empty() == (start == 0))) break;
      fail(path, "shape (" + dims + ") has an empty entry");
    }
    const auto d = limits::parse_int64(item);
    if (!d || *d < 0) {
      fail(path, "shape entry '" + limits::excerpt(item) +
                     "' is not a dimension (expected a non-negative integer)");
    }
    shape.push_back(*d);
    start = comma + 1;
  }
  return shape;
}

}  // namespace

int64_t NpyArray::size() const {
  return limits::checked_product(std::span<const int64_t>(shape), "npy shape");
}

size_t NpyArray::element_bytes() const {
  return info(type).bytes;
}

std::string npy_type_name(NpyType type) {
  return info(type).name;
}

std::vector<double> NpyArray::to_doubles() const {
  std::vector<double> out(static_cast<size_t>(size()));
  const auto convert = [&](auto tag) {
    using T = decltype(tag);
    const auto values = as<T>();
    for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<double>(values[i]);
  };
  switch (type) {
    case NpyType::kFloat32:
      convert(float{});
      break;
    case NpyType::kFloat64:
      convert(double{});
      break;
    case NpyType::kUint8:
      convert(uint8_t{});
      break;
    case NpyType::kUint16:
      convert(uint16_t{});
      break;
    case NpyType::kUint32:
      convert(uint32_t{});
      break;
    case NpyType::kUint64:
      convert(uint64_t{});
      break;
    case NpyType::kInt32:
      convert(int32_t{});
      break;
    case NpyType::kInt64:
      convert(int64_t{});
      break;
  }
  return out;
}

namespace {

// Reads and checks the header; leaves `in` at the start of the data and returns its size.
uint64_t read_header(const std::filesystem::path& path, std::ifstream& in, NpyArray& array) {
  const uint64_t file_bytes = limits::require_regular_file(path);
  in.open(path, std::ios::binary);
  if (!in) throw std::runtime_error(path.string() + ": cannot open: " + std::strerror(errno));
  char magic[8];
  if (!in.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0) fail(path, "bad magic");
  const int major = static_cast<unsigned char>(magic[6]);
  uint32_t header_len = 0;
  uint64_t data_offset = 0;
  if (major == 1) {
    unsigned char len[2];
    if (!in.read(reinterpret_cast<char*>(len), 2)) fail(path, "truncated header");
    header_len = len[0] | (len[1] << 8);
    data_offset = 10 + uint64_t{header_len};
  } else if (major == 2 || major == 3) {
    unsigned char len[4];
    if (!in.read(reinterpret_cast<char*>(len), 4)) fail(path, "truncated header");
    header_len = len[0] | (len[1] << 8) | (len[2] << 16) | (uint32_t{len[3]} << 24);
    data_offset = 12 + uint64_t{header_len};
  } else {
    fail(path, "unsupported version " + std::to_string(major));
  }
  if (header_len > (1u << 20)) fail(path, "header of " + std::to_string(header_len) + " bytes");
  if (data_offset > file_bytes) fail(path, "truncated header");
  std::string header(header_len, '\0');
  if (!in.read(header.data(), header_len)) fail(path, "truncated header");

  std::smatch m;
  if (!std::regex_search(header, m, std::regex(R"('descr'\s*:\s*'([^']*)')")))
    fail(path, "no descr");
  const std::string descr = m[1];
  bool known = false;
  for (const auto& t : kTypes) {
    if (descr == t.descr || (t.bytes == 1 && descr == "<u1")) {
      array.type = t.type;
      known = true;
    }
  }
  if (!known) {
    fail(path, "dtype '" + limits::excerpt(descr) +
                   "' (expected float32, float64, uint8, uint16, uint32, uint64, int32 or int64, "
                   "little endian)");
  }
  if (!std::regex_search(header, m, std::regex(R"('fortran_order'\s*:\s*(True|False))"))) {
    fail(path, "no fortran_order");
  }
  if (m[1] == "True") fail(path, "Fortran order is not supported (save a C-contiguous array)");
  if (!std::regex_search(header, m, std::regex(R"('shape'\s*:\s*\(([^)]*)\))")))
    fail(path, "no shape");
  array.shape = parse_shape(path, m[1]);
  // The sizes the header claims are checked against the file before anything is allocated.
  uint64_t bytes = 0;
  try {
    std::vector<uint64_t> factors(array.shape.begin(), array.shape.end());
    factors.push_back(array.element_bytes());
    bytes = limits::checked_product(std::span<const uint64_t>(factors), "shape times element size");
  } catch (const std::invalid_argument& e) {
    fail(path, std::string(e.what()));
  }
  const uint64_t data_bytes = file_bytes - data_offset;
  if (bytes > static_cast<uint64_t>(INT64_MAX) || bytes != data_bytes) {
    fail(path, "the shape " + limits::product_text(std::span<const int64_t>(array.shape)) + " of " +
                   npy_type_name(array.type) + " needs " + std::to_string(bytes) +
                   " bytes of data, the file holds " + std::to_string(data_bytes));
  }
  return bytes;
}

}  // namespace

NpyArray read_npy_header(const std::filesystem::path& path) {
  std::ifstream in;
  NpyArray array;
  read_header(path, in, array);
  return array;
}

NpyArray read_npy(const std::filesystem::path& path) {
  std::ifstream in;
  NpyArray array;
  const uint64_t bytes = read_header(path, in, array);
  array.data.resize(bytes);
  if (!in.read(reinterpret_cast<char*>(array.data.data()), static_cast<std::streamsize>(bytes))) {
    fail(path, "data shorter than the shape says (" + std::to_string(bytes) + " bytes expected)");
  }
  return array;
}

void write_npy(const std::filesystem::path& path, const NpyArray& array) {
  std::string shape = "(";
  for (size_t i = 0; i < array.shape.size(); ++i) {
    shape += std::to_string(array.shape[i]) +
             (array.shape.size() == 1 ? "," : (i + 1 < array.shape.size() ? ", " : ""));
  }
  shape += ")";
  std::string header = std::string("{'descr': '") + info(array.type).descr +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad so that the data starts on a 64-byte boundary, ending the header with '\n'.
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  const std::filesystem::path tmp = path.string() + ".tmp." + std::to_string(::getpid());
  // The temporary file goes whenever the write or the rename fails (a directory in the way, a
  // full disk): nothing is left behind but the file asked for.
  const auto fail_write = [&](const std::string& what) {
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    throw std::runtime_error(path.string() + ": " + what);
  };
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) fail_write("cannot write: it is a directory");
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) fail_write(std::string("cannot write: ") + std::strerror(errno));
    out.write("\x93NUMPY\x01\x00", 8);
    const auto len = static_cast<uint16_t>(header.size());
    const char len_bytes[2] = {static_cast<char>(len & 0xff), static_cast<char>(len >> 8)};
    out.write(len_bytes, 2);
    out << header;
    out.write(reinterpret_cast<const char*>(array.data.data()),
              static_cast<std::streamsize>(array.data.size()));
    out.flush();
    if (!out) fail_write(std::string("write failed: ") + std::strerror(errno));
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) fail_write("cannot rename into place: " + ec.message());
}

template <class T>
NpyArray make_npy(std::vector<int64_t> shape, std::span<const T> values) {
  NpyArray a;
  if constexpr (std::is_same_v<T, float>)
    a.type = NpyType::kFloat32;
  else if constexpr (std::is_same_v<T, double>)
    a.type = NpyType::kFloat64;
  else if constexpr (std::is_same_v<T, uint8_t>)
    a.type = NpyType::kUint8;
  else if constexpr (std::is_same_v<T, uint16_t>)
    a.type = NpyType::kUint16;
  else if constexpr (std::is_same_v<T, uint32_t>)
    a.type = NpyType::kUint32;
  else if constexpr (std::is_same_v<T, uint64_t>)
    a.type = NpyType::kUint64;
  else if constexpr (std::is_same_v<T, int32_t>)
    a.type = NpyType::kInt32;
  else
    a.type = NpyType::kInt64;
  a.shape = std::move(shape);
  if (a.size() != static_cast<int64_t>(values.size())) {  // size() throws on overflow
    throw std::invalid_argument("make_npy: shape does not match the number of values");
  }
  a.data.resize(values.size() * sizeof(T));
  std::memcpy(a.data.data(), values.data(), a.data.size());
  return a;
}

template NpyArray make_npy<float>(std::vector<int64_t>, std::span<const float>);
template NpyArray make_npy<double>(std::vector<int64_t>, std::span<const double>);
template NpyArray make_npy<uint8_t>(std::vector<int64_t>, std::span<const uint8_t>);
template NpyArray make_npy<uint16_t>(std::vector<int64_t>, std::span<const uint16_t>);
template NpyArray make_npy<uint32_t>(std::vector<int64_t>, std::span<const uint32_t>);
template NpyArray make_npy<uint64_t>(std::vector<int64_t>, std::span<const uint64_t>);
template NpyArray make_npy<int32_t>(std::vector<int64_t>, std::span<const int32_t>);
template NpyArray make_npy<int64_t>(std::vector<int64_t>, std::span<const int64_t>);

}  // namespace simprec
