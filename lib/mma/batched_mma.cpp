#include "lib/mma/batched_mma.hpp"

#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <span>
#include <stdexcept>

#include "emulation/bulk.hpp"
#include "emulation/round.hpp"
#include "lib/limits/checked_arithmetic.hpp"

namespace simprec {
namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

}  // namespace

std::vector<uint32_t> encodings(const NpyArray& array, const Format& format,
                                const std::string& what) {
  const bool narrow = format.width() <= 8;
  std::vector<uint32_t> bits(static_cast<size_t>(array.size()));
  if (array.type == NpyType::kUint8 || array.type == NpyType::kUint16) {
    const bool is8 = array.type == NpyType::kUint8;
    if (format.width() > 16 || is8 != narrow) {
      throw std::invalid_argument(what + ": " + npy_type_name(array.type) +
                                  " bit patterns do not fit " + format.name() + " (expected " +
                                  (format.width() > 16 ? std::string("float32 values")
                                   : narrow            ? std::string("uint8")
                                                       : std::string("uint16")) +
                                  " or exactly representable float32 values)");
    }
    for (size_t i = 0; i < bits.size(); ++i)
      bits[i] = is8 ? array.as<uint8_t>()[i] : array.as<uint16_t>()[i];
    return bits;
  }
  if (array.type != NpyType::kFloat32) {
    throw std::invalid_argument(
        what + ": dtype " + npy_type_name(array.type) + " is not accepted for " + format.name() +
        " (expected " +
        (format.width() <= 16 ? std::string(narrow ? "uint8" : "uint16") + " bit patterns or "
                              : "") +
        "float32 values)");
  }
  const std::span<const float> values = array.as<float>();
  const size_t i = first_value_not_held(format, values);
  if (i < values.size()) {
    char text[64];
    std::snprintf(text, sizeof text, "%.9g", static_cast<double>(values[i]));
    throw std::invalid_argument(what + "[" + std::to_string(i) + "] = " + text +
                                " is not representable in " + format.name());
  }
  round_to_bits<float, uint32_t>(values, bits,
                                 BulkRounding{format, Rounding{}, RandomStream{}, 0, 1});
  return bits;
}

namespace {

// Batch dimensions: everything before the last two. An operand without them is shared.
std::vector<int64_t> batch_of(const std::vector<int64_t>& shape) {
  return {shape.begin(), shape.end() - 2};
}

}  // namespace

NpyArray batched_mma(const TensorCoreModel& model, const NpyArray& a, const NpyArray& b,
                     const NpyArray* c_array, unsigned threads,
                     const limits::MemoryLimit& memory_limit) {
  if (a.shape.size() < 2 || b.shape.size() < 2) {
    throw std::invalid_argument("A and B need at least two dimensions; A is " +
                                shape_text(a.shape) + ", B is " + shape_text(b.shape));
  }
  const int64_t m = a.shape[a.shape.size() - 2], k = a.shape.back();
  const int64_t kb = b.shape[b.shape.size() - 2], n = b.shape.back();
  if (k != kb) {
    throw std::invalid_argument("A " + shape_text(a.shape) + " and B " + shape_text(b.shape) +
                                ": K differs (" + std::to_string(k) + " vs " + std::to_string(kb) +
                                ")");
  }
  // M, N and K reach the GEMM as int.
  if (m < 1 || n < 1 || k < 1 || m > INT_MAX || n > INT_MAX || k > INT_MAX) {
    throw std::invalid_argument("A " + shape_text(a.shape) + " and B " + shape_text(b.shape) +
                                ": M, N and K must each be in [1, 2^31)");
  }
  std::vector<int64_t> batch = batch_of(a.shape);
  const auto check_batch = [&](const std::vector<int64_t>& shape, const char* name) {
    const std::vector<int64_t> other = batch_of(shape);
    if (other.empty()) return;
    if (batch.empty()) batch = other;
    if (other != batch) {
      throw std::invalid_argument(std::string(name) + " " + shape_text(shape) +
                                  ": batch dimensions differ from A " + shape_text(a.shape));
    }
  };
  check_batch(b.shape, "B");
  std::vector<uint32_t> c_bits;
  std::vector<int64_t> c_shape;
  if (c_array) {
    const NpyArray& c = *c_array;
    if (c.shape.size() < 2 || c.shape[c.shape.size() - 2] != m || c.shape.back() != n) {
      throw std::invalid_argument("C " + shape_text(c.shape) + ": expected (..., " +
                                  std::to_string(m) + ", " + std::to_string(n) + ")");
    }
    check_batch(c.shape, "C");
    c_bits = encodings(c, model.accumulator, "C");
    c_shape = c.shape;
  }
  // D's size is checked, and the memory the call needs estimated, before anything is allocated.
  const int64_t batches =
      limits::checked_product(std::span<const int64_t>(batch), "batch dimensions");
  limits::MemoryEstimate estimate;
  const std::vector<int64_t> d_dims = {batches, m, n};
  estimate.add(limits::checked_product(std::span<const int64_t>(d_dims), "D (batch x M x N)"),
               2 * sizeof(uint32_t));
  estimate.add(m * k + k * n, 2 * sizeof(uint32_t)).add(m * n, 2 * sizeof(uint32_t));
  estimate.add(a.size() + b.size(), sizeof(uint32_t));
  limits::check_memory(estimate, memory_limit, "D " + shape_text(d_dims));
  const std::vector<uint32_t> a_bits = encodings(a, model.input_a, "A"),
                              b_bits = encodings(b, model.input_b, "B");
  const bool a_shared = a.shape.size() == 2, b_shared = b.shape.size() == 2,
             c_shared = c_shape.size() == 2;
  std::vector<uint32_t> d(static_cast<size_t>(batches * m * n));
  std::vector<uint16_t> at(static_cast<size_t>(m * k)), bt(static_cast<size_t>(k * n));
  std::vector<uint32_t> ct(static_cast<size_t>(m * n), 0u);
  for (int64_t t = 0; t < batches; ++t) {
    const int64_t ao = a_shared ? 0 : t * m * k, bo = b_shared ? 0 : t * k * n,
                  co = c_shared ? 0 : t * m * n;
    for (int64_t i = 0; i < m * k; ++i) at[i] = static_cast<uint16_t>(a_bits[ao + i]);
    for (int64_t i = 0; i < k * n; ++i) bt[i] = static_cast<uint16_t>(b_bits[bo + i]);
    if (!c_bits.empty())
      for (int64_t i = 0; i < m * n; ++i) ct[i] = c_bits[co + i];
    const std::vector<uint32_t> dt = tensor_core_gemm(
        model, at, bt, ct, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), threads);
    std::copy(dt.begin(), dt.end(), d.begin() + t * m * n);
  }
  std::vector<int64_t> d_shape = batch;
  d_shape.push_back(m);
  d_shape.push_back(n);
  if (model.accumulator == formats::fp32) {
    std::vector<float> values(d.size());
    std::memcpy(values.data(), d.data(), d.size() * 4);
    return make_npy<float>(d_shape, values);
  } else {
    const std::vector<uint16_t> values(d.begin(), d.end());
    return make_npy<uint16_t>(d_shape, values);
  }
}

}  // namespace simprec
