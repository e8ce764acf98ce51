// The inputs of a validation run: read from .npy files or generated from a seed, with shapes
// that fit the kernel's declared operands and dimension constraints.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "lib/npy/npy.hpp"
#include "plugins/host/kernel_request.hpp"
#include "plugins/host/plugin_info.hpp"

namespace simprec::validate {

struct InputChoices {
  std::map<std::string, int64_t> dimensions;   // shape symbol -> size (default 64, fitted)
  std::map<std::string, std::string> formats;  // operand -> format (default: first accepted)
  std::map<std::string, std::filesystem::path> files;  // input -> .npy file
  std::map<std::string, std::string> parameters;       // parameter -> text, parsed by its type
  std::set<std::string> omitted;                       // optional inputs left out
  uint64_t seed = 1;
  double low = -1.0, high = 1.0;  // generated values: uniform in [low, high), rounded to nearest
  // Attention kernels: an input generator of lib/inputs (normal, peaky, repeated-max, low-rank,
  // sinks) for Q, K, V and, for backward kernels, dO; empty: uniform values.
  std::string generator;
  // Attention backward kernels: the model whose emulated forward pass gives O and LSE (those not
  // read from files); empty: the kernel's declared model.
  std::string model;
  // The memory bound (lib/limits/memory_bound.hpp): "--max-memory" text, empty: physical memory.
  std::string max_memory;
};

// Builds the request. Files fix the symbols of their shapes; the other inputs are generated,
// input number i (in declaration order) from random stream (seed, i), or, with a generator,
// Q, K, V and dO by inputs::generate(generator, B x H x Sq x D, seed) with Sk = Sq and Dv = D.
// An attention backward kernel's O and LSE not read from files come from the emulated forward
// pass (set_forward_inputs). Before anything is generated, the memory of every operand (outputs
// twice: the kernel's and the emulation's, each with a double copy for the comparison) is
// estimated against the memory bound. Throws std::invalid_argument for a choice that does not
// fit the kernel or the bound.
plugins::KernelRequest make_validation_request(const plugins::KernelInfo& kernel,
                                               const InputChoices& choices);

// The size used for a symbol nobody chose: 64 for dimensions of vectors and matrices, 32 of
// rank-3 and 16 of higher-rank tensors, moved into the declared constraints.
int64_t default_dimension(const plugins::KernelInfo& kernel, const std::string& symbol);

// A .npy file as an input tensor; the format is `format` or, when empty, inferred from the dtype
// among the operand's accepted formats.
plugins::HostTensor read_npy_input(const plugins::OperandInfo& operand,
                                   const std::filesystem::path& file, const std::string& format);

// The tensor as read_npy_input reads it back: float64/float32 values, uint16/uint8 bit patterns.
NpyArray npy_of(const plugins::HostTensor& tensor);

}  // namespace simprec::validate
