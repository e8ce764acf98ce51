// Helpers shared by the CUDA plugins (gpu_probe, flash_gpu): CUDA errors as plugin failures and
// device memory freed on scope exit. Header-only, like plugin_kit.hpp.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>

#include "plugins/plugin_kit.hpp"

namespace simprec::plugin_kit {

// Throws a SIMPREC_ERROR_DEVICE failure naming `what` when a CUDA call failed.
inline void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw KernelFailure(SIMPREC_ERROR_DEVICE, std::string(what) + ": " + cudaGetErrorString(e));
}

// Device memory freed on scope exit.
struct DeviceBuffer {
  void* ptr = nullptr;
  explicit DeviceBuffer(size_t bytes) {
    check_cuda(cudaMalloc(&ptr, bytes ? bytes : 1), "cudaMalloc");
  }
  ~DeviceBuffer() { cudaFree(ptr); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

}  // namespace simprec::plugin_kit
