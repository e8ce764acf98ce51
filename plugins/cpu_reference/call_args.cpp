#include "plugins/cpu_reference/call_args.hpp"

#include <cmath>
#include <cstring>

namespace simprec::cpu_reference {
namespace {

[[noreturn]] void invalid(const std::string& message) {
  throw KernelFailure(SIMPREC_ERROR_INVALID_ARGUMENT, message);
}

const void* data_of(const SimprecTensor& t) {
  return static_cast<const char*>(t.tensor->data) + t.tensor->byte_offset;
}

bool is(const SimprecTensor& t, const char* format) {
  return std::strcmp(t.format, format) == 0;
}

void check_storage(const SimprecTensor& t, uint8_t code, uint8_t bits) {
  if (t.tensor->dtype.code != code || t.tensor->dtype.bits != bits || t.tensor->dtype.lanes != 1) {
    invalid(std::string("tensor '") + t.name + "' in format " + t.format +
            " has the wrong DLPack dtype");
  }
  if (t.tensor->device.device_type != kDLCPU)
    invalid(std::string("tensor '") + t.name + "' is not in host memory");
}

}  // namespace

const SimprecTensor& tensor(const SimprecRunArgs* args, const char* name) {
  const SimprecTensor* t = find_tensor(args, name);
  if (!t) invalid(std::string("missing tensor '") + name + "'");
  return *t;
}

int64_t dimension(const SimprecTensor& t, int axis) {
  if (axis >= t.tensor->ndim)
    invalid(std::string("tensor '") + t.name + "' has too few dimensions");
  return t.tensor->shape[axis];
}

int64_t element_count(const SimprecTensor& t) {
  int64_t n = 1;
  for (int i = 0; i < t.tensor->ndim; ++i) n *= t.tensor->shape[i];
  return n;
}

namespace {

// Exact, by the bits (no _Float16, which clang 14 lacks on x86-64): the sign, the 5-bit
// exponent rebiased from 15 to 127 and the 10-bit fraction moved to the top of float's 23.
float fp16_to_float(uint16_t h) {
  const uint32_t sign = uint32_t{h & 0x8000u} << 16;
  const uint32_t exponent = (h >> 10) & 0x1f;
  const uint32_t fraction = h & 0x3ffu;
  if (exponent == 0) {  // zero or subnormal: fraction * 2^-24
    const float magnitude = std::ldexp(static_cast<float>(fraction), -24);
    return sign ? -magnitude : magnitude;
  }
  const uint32_t wide_exponent = exponent == 0x1f ? 0xff : exponent - 15 + 127;
  const uint32_t wide = sign | (wide_exponent << 23) | (fraction << 13);
  float f;
  std::memcpy(&f, &wide, sizeof f);
  return f;
}

}  // namespace

std::vector<float> read_floats(const SimprecTensor& t) {
  const auto n = static_cast<size_t>(element_count(t));
  std::vector<float> out(n);
  if (is(t, "fp32")) {
    check_storage(t, kDLFloat, 32);
    std::memcpy(out.data(), data_of(t), n * sizeof(float));
  } else if (is(t, "bf16")) {
    check_storage(t, kDLUInt, 16);
    const auto* bits = static_cast<const uint16_t*>(data_of(t));
    // bf16 is the top half of a float.
    for (size_t i = 0; i < n; ++i) {
      const uint32_t wide = uint32_t{bits[i]} << 16;
      std::memcpy(&out[i], &wide, sizeof wide);
    }
  } else if (is(t, "fp16")) {
    check_storage(t, kDLUInt, 16);
    const auto* bits = static_cast<const uint16_t*>(data_of(t));
    for (size_t i = 0; i < n; ++i) out[i] = fp16_to_float(bits[i]);
  } else {
    invalid(std::string("tensor '") + t.name + "': format " + t.format +
            " is not fp32, bf16 or fp16");
  }
  return out;
}

std::vector<double> read_doubles(const SimprecTensor& t) {
  if (!is(t, "fp64")) {
    const auto floats = read_floats(t);
    return {floats.begin(), floats.end()};
  }
  check_storage(t, kDLFloat, 64);
  std::vector<double> out(static_cast<size_t>(element_count(t)));
  std::memcpy(out.data(), data_of(t), out.size() * sizeof(double));
  return out;
}

void write_floats(const SimprecTensor& t, const std::vector<float>& values) {
  if (!is(t, "fp32")) invalid(std::string("output '") + t.name + "' must be fp32, not " + t.format);
  check_storage(t, kDLFloat, 32);
  if (values.size() != static_cast<size_t>(element_count(t)))
    invalid(std::string("output '") + t.name + "' has the wrong size");
  std::memcpy(static_cast<char*>(t.tensor->data) + t.tensor->byte_offset, values.data(),
              values.size() * sizeof(float));
}

void write_doubles(const SimprecTensor& t, const std::vector<double>& values) {
  if (!is(t, "fp64")) invalid(std::string("output '") + t.name + "' must be fp64, not " + t.format);
  check_storage(t, kDLFloat, 64);
  if (values.size() != static_cast<size_t>(element_count(t)))
    invalid(std::string("output '") + t.name + "' has the wrong size");
  std::memcpy(static_cast<char*>(t.tensor->data) + t.tensor->byte_offset, values.data(),
              values.size() * sizeof(double));
}

const SimprecNamedValue* find_parameter(const SimprecRunArgs* args, const char* name) {
  for (size_t i = 0; i < args->parameter_count; ++i) {
    if (std::strcmp(args->parameters[i]->name, name) == 0) return args->parameters[i];
  }
  return nullptr;
}

bool bool_parameter(const SimprecRunArgs* args, const char* name, bool fallback) {
  const SimprecNamedValue* v = find_parameter(args, name);
  if (!v) return fallback;
  if (v->type != SIMPREC_VALUE_BOOL)
    invalid(std::string("parameter '") + name + "' must be a bool");
  return v->int64_value != 0;
}

double float64_parameter(const SimprecRunArgs* args, const char* name, double fallback) {
  const SimprecNamedValue* v = find_parameter(args, name);
  if (!v) return fallback;
  if (v->type != SIMPREC_VALUE_FLOAT64)
    invalid(std::string("parameter '") + name + "' must be a float64");
  return v->float64_value;
}

}  // namespace simprec::cpu_reference
