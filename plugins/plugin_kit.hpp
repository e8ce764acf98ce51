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

// The plugin's description for this ABI version: its name, version, one line of description and
// its kernels (which must outlive it).
inline SimprecPlugin describe_plugin(const char* name, const char* version, const char* description,
                                     const SimprecKernel* const* kernels, size_t kernel_count) {
  SimprecPlugin p{};
  p.struct_size = SIMPREC_PLUGIN_STRUCT_SIZE;
  p.abi_major = SIMPREC_PLUGIN_ABI_MAJOR;
  p.abi_minor = SIMPREC_PLUGIN_ABI_MINOR;
  p.name = name;
  p.version = version;
  p.description = description;
  p.kernel_count = kernel_count;
  p.kernels = kernels;
  p.shutdown = nullptr;
  return p;
}

// A kernel's description for this ABI version with its identity filled in; the caller points
// it at its operands, dimensions, parameters and attributes (which must outlive it).
inline SimprecKernel describe_kernel(const char* name, uint32_t kind, uint32_t flags,
                                     const char* description, const char* emulation_model,
                                     SimprecRunFunction run) {
  SimprecKernel k{};
  k.struct_size = SIMPREC_KERNEL_STRUCT_SIZE;
  k.name = name;
  k.kind = kind;
  k.flags = flags;
  k.description = description;
  k.emulation_model = emulation_model;
  k.run = run;
  return k;
}

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

// Bytes of a host tensor's data (C-contiguous, as the ABI passes it).
inline size_t bytes_of(const DLTensor& d) {
  size_t n = d.dtype.bits / 8;
  for (int i = 0; i < d.ndim; ++i) n *= static_cast<size_t>(d.shape[i]);
  return n;
}

// The call's tensor of that operand name with `ndim` dimensions of `bits`-bit elements, or a
// KernelFailure saying what is missing or wrong.
inline const DLTensor& require_tensor(const SimprecRunArgs* args, const char* name, int ndim,
                                      int bits) {
  const SimprecTensor* t = find_tensor(args, name);
  if (!t || !t->tensor)
    throw KernelFailure(SIMPREC_ERROR_INVALID_ARGUMENT, std::string("missing tensor ") + name);
  const DLTensor& d = *t->tensor;
  if (d.ndim != ndim || d.dtype.bits != bits || d.dtype.lanes != 1) {
    throw KernelFailure(SIMPREC_ERROR_INVALID_ARGUMENT,
                        std::string(name) + ": expected " + std::to_string(ndim) +
                            " dimensions of " + std::to_string(bits) + "-bit elements");
  }
  return d;
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

// The body of simprec_plugin_entry for a plugin whose description a `Tables` object builds once
// (its member `plugin`): negotiates the major version, then hands out the description.
template <class Tables>
SimprecStatus serve_entry(SimprecEntryArgs* args, const char* plugin_name) {
  if (args->host_abi_major != SIMPREC_PLUGIN_ABI_MAJOR) {
    if (args->error && args->error_size > 0)
      std::snprintf(args->error, args->error_size, "%s speaks ABI %d only", plugin_name,
                    SIMPREC_PLUGIN_ABI_MAJOR);
    return SIMPREC_ERROR_UNSUPPORTED;
  }
  try {
    static const Tables tables;
    args->plugin = &tables.plugin;
    return SIMPREC_OK;
  } catch (...) {
    if (args->error && args->error_size > 0)
      std::snprintf(args->error, args->error_size, "%s: cannot describe itself", plugin_name);
    return SIMPREC_ERROR_INTERNAL;
  }
}

}  // namespace simprec::plugin_kit
