// What the plugin tests share: where the built test plugins are, open options and a small
// request.
#pragma once

#include <cstring>
#include <string>

#include "plugins/host/plugin.hpp"

namespace simprec::plugins {

inline const std::string kPluginDir = SIMPREC_TEST_PLUGIN_DIR;
inline const std::string kBrokenDir = SIMPREC_TEST_BROKEN_PLUGIN_DIR;

inline OpenOptions with_isolation(Isolation isolation) {
  OpenOptions options;
  options.isolation = isolation;
  return options;
}
inline OpenOptions in_process() {
  return with_isolation(Isolation::kInProcess);
}

// A 2x2 fp32 GEMM for `kernel`: A = [[1,2],[3,4]], B = [[0.5,-1],[2,0.25]], no C.
inline KernelRequest small_gemm(const std::string& kernel) {
  KernelRequest request;
  request.kernel = kernel;
  HostTensor a = HostTensor::zeros("A", "fp32", {2, 2});
  HostTensor b = HostTensor::zeros("B", "fp32", {2, 2});
  const float av[] = {1, 2, 3, 4}, bv[] = {0.5f, -1, 2, 0.25f};
  std::memcpy(a.bytes.data(), av, sizeof av);
  std::memcpy(b.bytes.data(), bv, sizeof bv);
  request.inputs = {a, b};
  return request;
}

}  // namespace simprec::plugins
