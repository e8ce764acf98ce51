// A kernel the search can call on probes of its choosing: a plugin kernel (plugin_kernel.hpp),
// a Python callable (python/src/discover.cpp).
#pragma once

#include <stdexcept>
#include <string>

#include "lib/attention/tensors.hpp"
#include "lib/discover/evidence.hpp"
#include "lib/discover/probes.hpp"

namespace simprec::discover {

// A probe the kernel will not run (a shape or scale it does not support): the search leaves the
// probe out and goes on.
struct ProbeRefused : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class CallableKernel {
 public:
  virtual ~CallableKernel() = default;
  virtual std::string description() const = 0;  // "plugin P kernel K", for the report
  virtual std::string input_format() const = 0;
  virtual ProbeLimits limits() const = 0;
  // The kernel run on the probe's inputs (values of input_format()): a case holding every row
  // of each output the kernel returns. Throws ProbeRefused where the kernel fails on the
  // probe, and what ends the search (a call past its time limit in process) as it comes.
  virtual Case run(const ProbeDesign& probe, const attention::AttentionInputs& inputs) = 0;
};

}  // namespace simprec::discover
