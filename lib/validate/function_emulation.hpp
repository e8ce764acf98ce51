// Emulation of a device-function kernel y = f(x): model "correctly-rounded" rounds the exact
// f(x) once into y's format (emulation/elementary.hpp); f is the kernel attribute "function"
// (exp, exp2 or log).
#pragma once

#include "lib/validate/kernel_emulation.hpp"

namespace simprec::validate {

void emulate_function(const EmulationCall& call, std::vector<plugins::HostTensor>& outputs);

}  // namespace simprec::validate
