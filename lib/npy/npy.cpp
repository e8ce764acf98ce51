#include "lib/npy/npy.hpp"

#include <unistd.h>
#include <cstring>
#include <fstream>
#include <regex>
#include <stdexcept>
#include <system_error>

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

}  // namespace

int64_t NpyArray::size() const {
  int64_t n = 1;
  for (const auto d : shape) n *= d;
  return n;
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

NpyArray read_npy(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path.string() + ": cannot open: " + std::strerror(errno));
  char magic[8];
  if (!in.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0) fail(path, "bad magic");
  const int major = static_cast<unsigned char>(magic[6]);
  uint32_t header_len = 0;
  if (major == 1) {
    unsigned char len[2];
    if (!in.read(reinterpret_cast<char*>(len), 2)) fail(path, "truncated header");
    header_len = len[0] | (len[1] << 8);
  } else if (major == 2 || major == 3) {
    unsigned char len[4];
    if (!in.read(reinterpret_cast<char*>(len), 4)) fail(path, "truncated header");
    header_len = len[0] | (len[1] << 8) | (len[2] << 16) | (uint32_t{len[3]} << 24);
  } else {
    fail(path, "unsupported version " + std::to_string(major));
  }
  if (header_len > (1u << 20)) fail(path, "header of " + std::to_string(header_len) + " bytes");
  std::string header(header_len, '\0');
  if (!in.read(header.data(), header_len)) fail(path, "truncated header");

  std::smatch m;
  if (!std::regex_search(header, m, std::regex(R"('descr'\s*:\s*'([^']*)')")))
    fail(path, "no descr");
  const std::string descr = m[1];
  NpyArray array;
  bool known = false;
  for (const auto& t : kTypes) {
    if (descr == t.descr || (t.bytes == 1 && descr == "<u1")) {
      array.type = t.type;
      known = true;
    }
  }
  if (!known) {
    fail(path, "dtype '" + descr +
                   "' (expected float32, float64, uint8, uint16, uint32, uint64, int32 or int64, "
                   "little endian)");
  }
  if (!std::regex_search(header, m, std::regex(R"('fortran_order'\s*:\s*(True|False))"))) {
    fail(path, "no fortran_order");
  }
  if (m[1] == "True") fail(path, "Fortran order is not supported (save a C-contiguous array)");
  if (!std::regex_search(header, m, std::regex(R"('shape'\s*:\s*\(([^)]*)\))")))
    fail(path, "no shape");
  const std::string dims = m[1];
  const std::regex number(R"(\d+)");
  for (std::sregex_iterator it(dims.begin(), dims.end(), number), end; it != end; ++it) {
    array.shape.push_back(std::stoll(it->str()));
  }
  // The size the header claims, checked before anything is allocated: it must fit the
  // arithmetic (multiplied in the order size() takes) and the bytes left in the file.
  int64_t elements = 1, claimed = 0;
  for (const auto d : array.shape) {
    if (__builtin_mul_overflow(elements, d, &elements))
      fail(path, "shape (" + dims + ") is too large");
  }
  if (__builtin_mul_overflow(elements, static_cast<int64_t>(array.element_bytes()), &claimed))
    fail(path, "shape (" + dims + ") is too large");
  const std::streampos data_start = in.tellg();
  in.seekg(0, std::ios::end);
  const std::streamoff available = in.tellg() - data_start;
  in.seekg(data_start);
  if (claimed > available) {
    fail(path, "data shorter than the shape says (" + std::to_string(claimed) +
                   " bytes expected, " + std::to_string(available) + " present)");
  }
  const auto bytes = static_cast<size_t>(claimed);
  array.data.resize(bytes);
  if (!in.read(reinterpret_cast<char*>(array.data.data()), static_cast<std::streamsize>(bytes))) {
    fail(path, "data shorter than the shape says (" + std::to_string(bytes) + " bytes expected)");
  }
  if (in.peek() != std::char_traits<char>::eof()) fail(path, "data longer than the shape says");
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
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error(path.string() + ": cannot write: " + std::strerror(errno));
    out.write("\x93NUMPY\x01\x00", 8);
    const auto len = static_cast<uint16_t>(header.size());
    const char len_bytes[2] = {static_cast<char>(len & 0xff), static_cast<char>(len >> 8)};
    out.write(len_bytes, 2);
    out << header;
    out.write(reinterpret_cast<const char*>(array.data.data()),
              static_cast<std::streamsize>(array.data.size()));
    out.flush();
    if (!out) throw std::runtime_error(path.string() + ": write failed: " + std::strerror(errno));
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw std::runtime_error(path.string() + ": cannot rename into place: " + ec.message());
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
  if (a.size() != static_cast<int64_t>(values.size())) {
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
