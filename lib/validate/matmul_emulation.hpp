// Emulation of a matmul kernel D = A*B + C: each element is
//     round_to_D( model.dot(A[i,:], B[:,j], C[i,j]) in the accumulator format, RNE )
// with the model from the accumulation registry (emulation/accumulation.hpp) by the name the
// kernel declares ("sequential", "tc:sm90-mma-bf16", ...), the accumulator format from the
// kernel attribute "accumulator_format" (default: D's format). The final conversion to D
// rounds to nearest even; it is skipped when D is the accumulator format.
#pragma once

#include "lib/validate/kernel_emulation.hpp"

namespace simprec::validate {

void emulate_matmul(const EmulationCall& call, std::vector<plugins::HostTensor>& outputs);

}  // namespace simprec::validate
