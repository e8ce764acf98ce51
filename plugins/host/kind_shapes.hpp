// The shapes a kernel kind fixes (simprec_plugin.h), which the host's own emulation relies on
// when it reads the inputs and writes the outputs it allocated from the plugin's declaration:
//   matmul              A [M,K], B [K,N], C [M,N], D [M,N]
//   attention forward   Q [B,H,Sq,D], K [B,Hk,Sk,D], V [B,Hk,Sk,Dv], O [B,H,Sq,Dv], LSE [B,H,Sq]
//   attention backward  the same Q, K, V, O, LSE, dO [B,H,Sq,Dv], dQ [B,H,Sq,D],
//                       dK [B,Hk,Sk,D], dV [B,Hk,Sk,Dv]
//   function            x [N], y [N]
// A declaration that contradicts them (D declared [M,M]) would have the emulation write past an
// output or compare padding as agreement. It is refused when the plugin is described, where the
// declaration alone shows it (a letter of the kind declared as two different symbols, or two
// different sizes), and before every call, on the actual sizes.
#pragma once

#include <string>
#include <vector>

#include "plugins/host/host_tensor.hpp"
#include "plugins/host/plugin_info.hpp"

namespace simprec::plugins {

// Empty when the kernel's declared shapes can be its kind's; else what contradicts them:
// "output 'D' is declared [M,M], but a matmul kernel's D is [M,N]: its dimension 2 is N, which
// input 'B' declares as 'N', not 'M'".
std::string declared_shape_problem(const KernelInfo& kernel);

// Throws std::invalid_argument when the tensors of a call (inputs given, outputs as the host
// allocates them) do not have the kind's shapes, naming the operand, its shape and the size
// expected.
void check_kind_shapes(const KernelInfo& kernel, const std::vector<HostTensor>& inputs,
                       const std::vector<HostTensor>& outputs);

}  // namespace simprec::plugins
