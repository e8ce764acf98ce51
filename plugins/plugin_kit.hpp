// Small C++17 helpers for writing a simprec plugin in C++ (header-only, so a plugin stays one
// self-contained shared library): building descriptors, finding call arguments by name, and
// turning exceptions into a status and a message, since no exception may cross the C ABI.
#pragma once

#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

#include "plugins/simprec_plugin.h"

namespace simprec::plugin_kit {

// Thrown inside a kernel; guarded() turns it into the status it carries.
struct KernelFailure : std::runtime_error {
  SimprecStatus status;
  KernelFailure(SimprecStatus s, const std::string& message)
      : std::runtime_error(message), status(s) {}
};

inline SimprecOperandSpec operand(const char* name, uint32_t direction, const char* formats,
                                  const char* shape, uint32_t flags = 0) {
  return {SIMPREC_OPERAND_SPEC_STRUCT_SIZE, name, direction, flags, formats, shape};
}

inline SimprecNamedValue string_value(const char* name, const char* value) {
  SimprecNamedValue v{};
  v.struct_size = SIMPREC_NAMED_VALUE_STRUCT_SIZE;
  v.name = name;
  v.type = SIMPREC_VALUE_STRING;
  v.string_value = value;
  return v;
}

// The call's tensor of that operand name; nullptr when there is none.
inline const SimprecTensor* find_tensor(const SimprecRunArgs* args, const char* name) {
  for (size_t i = 0; i < args->tensor_count; ++i) {
    const SimprecTensor* t = args->tensors[i];
    if (t && t->name && std::strcmp(t->name, name) == 0) return t;
  }
  return nullptr;
}

inline void write_error(const SimprecRunArgs* args, const char* message) {
  if (args->error && args->error_size > 0)
    std::snprintf(args->error, args->error_size, "%s", message);
}

// Runs body(): SIMPREC_OK, or the failure's status with its message in args->error.
template <class Body>
SimprecStatus guarded(const SimprecRunArgs* args, Body body) {
  try {
    body();
    return SIMPREC_OK;
  } catch (const KernelFailure& e) {
    write_error(args, e.what());
    return e.status;
  } catch (const std::exception& e) {
    write_error(args, e.what());
    return SIMPREC_ERROR_INTERNAL;
  } catch (...) {
    write_error(args, "unknown exception");
    return SIMPREC_ERROR_INTERNAL;
  }
}

}  // namespace simprec::plugin_kit
