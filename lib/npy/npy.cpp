#include "lib/npy/npy.hpp"

#include <cstring>
#include <stdexcept>

#include "lib/limits/checked_arithmetic.hpp"
#include "lib/limits/input_file.hpp"
#include "lib/limits/strict_parse.hpp"
#include "lib/npy/npy_header.hpp"

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

// The largest header read: numpy writes headers of a few hundred bytes for the dtypes read here,
// and the parser is linear, so this only bounds the memory a hostile file can claim.
constexpr uint32_t kMaxHeaderBytes = 1u << 20;

// Reads and checks the header; returns where the data starts and its size.
std::pair<uint64_t, uint64_t> read_header(const limits::InputFile& in, NpyArray& array) {
  const std::filesystem::path& path = in.path();
  const uint64_t file_bytes = in.size();
  unsigned char prefix[12];
  if (file_bytes < 10) fail(path, "bad magic (a file of " + std::to_string(file_bytes) + " bytes)");
  in.read_at(0, prefix, 10);
  if (std::memcmp(prefix, "\x93NUMPY", 6) != 0) fail(path, "bad magic");
  const int major = prefix[6];
  uint32_t header_len = 0;
  uint64_t header_offset = 0;
  if (major == 1) {
    header_len = prefix[8] | (prefix[9] << 8);
    header_offset = 10;
  } else if (major == 2 || major == 3) {
    if (file_bytes < 12) fail(path, "truncated header");
    in.read_at(10, prefix + 10, 2);
    header_len = prefix[8] | (prefix[9] << 8) | (prefix[10] << 16) | (uint32_t{prefix[11]} << 24);
    header_offset = 12;
  } else {
    fail(path, "unsupported version " + std::to_string(major));
  }
  if (header_len > kMaxHeaderBytes) {
    fail(path, "a header of " + std::to_string(header_len) + " bytes (at most " +
                   std::to_string(kMaxHeaderBytes) + " are read)");
  }
  const uint64_t data_offset = header_offset + header_len;
  if (data_offset > file_bytes) fail(path, "truncated header");
  std::string text(header_len, '\0');
  in.read_at(header_offset, text.data(), header_len);

  NpyHeader header;
  try {
    header = parse_npy_header(text);
  } catch (const std::invalid_argument& e) {
    fail(path, e.what());
  }
  bool known = false;
  for (const auto& t : kTypes) {
    // numpy's bool is one byte holding 0 or 1: read as uint8.
    if (header.descr == t.descr ||
        (t.bytes == 1 && (header.descr == "<u1" || header.descr == "|b1"))) {
      array.type = t.type;
      known = true;
    }
  }
  if (!known) {
    fail(path, "dtype '" + limits::excerpt(header.descr) +
                   "' (expected float32, float64, uint8, uint16, uint32, uint64, int32, int64 or "
                   "bool, little endian)");
  }
  if (header.fortran_order)
    fail(path, "Fortran order is not supported (save a C-contiguous array)");
  array.shape = std::move(header.shape);
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
  return {data_offset, bytes};
}

constexpr const char* kExpected = "a .npy file";

}  // namespace

NpyArray read_npy_header(const std::filesystem::path& path) {
  const limits::InputFile in(path, kExpected);
  NpyArray array;
  read_header(in, array);
  return array;
}

NpyArray read_npy(const std::filesystem::path& path) {
  const limits::InputFile in(path, kExpected);
  NpyArray array;
  const auto [offset, bytes] = read_header(in, array);
  array.data.resize(bytes);
  in.read_at(offset, array.data.data(), bytes);
  return array;
}

void write_npy(const limits::OutputFolder& folder, const std::string& name, const NpyArray& array) {
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
  const auto len = static_cast<uint16_t>(header.size());
  const char prefix[10] = {'\x93',
                           'N',
                           'U',
                           'M',
                           'P',
                           'Y',
                           1,
                           0,
                           static_cast<char>(len & 0xff),
                           static_cast<char>(len >> 8)};
  // A temporary file renamed into place: nothing is left behind but the file asked for, and a
  // link at its name is replaced, never written through.
  limits::ReplacingFile out(folder, name);
  out.write(prefix, sizeof prefix);
  out.write(header);
  out.write(array.data.data(), array.data.size());
  out.commit();
}

void write_npy(const std::filesystem::path& path, const NpyArray& array) {
  write_npy(limits::folder_of(path), path.filename().string(), array);
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
