// Emulation of a device-function kernel y = f(x) (for f = div, y = x / d), f the kernel
// attribute "function": exp, exp2, log, log2, rcp or div (and fast_log, a kernel's __logf, for
// device_math models). Model "correctly-rounded" rounds the exact f(x) once into y's format
// (emulation/elementary.hpp; exp, exp2 and log only); a device_math strategy ("glibc", "numpy",
// "sm90", "sm90-fast-math", "triton-sm90", ...) computes what that strategy gives for fp32 x
// and y, and the correctly rounded fp32 value where it has none, as the attention emulation
// does at an fp32 site.
#pragma once

#include "lib/validate/kernel_emulation.hpp"

namespace simprec::validate {

void emulate_function(const EmulationCall& call, std::vector<plugins::HostTensor>& outputs);

}  // namespace simprec::validate
