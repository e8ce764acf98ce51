// D = A*B + C on arrays with batch dimensions, the way `simprec mma` computes it: each batch
// entry one tensor_core_gemm of the model (emulation/tensor_core.hpp).
#pragma once

#include "emulation/tensor_core.hpp"
#include "lib/limits/memory_bound.hpp"
#include "lib/npy/npy.hpp"

namespace simprec {

// A (..., M, K), B (..., K, N), C (..., M, N) or none (zeros); an operand without batch
// dimensions is shared by every batch entry. A and B hold uint16/uint8 encodings of the model's
// input format for that operand (input_a, input_b) or float32 values it represents exactly; C
// float32 values (fp16 accumulators: uint16 encodings or float32). D is float32, or uint16 fp16
// encodings for fp16 accumulators. Every size is checked and the memory the call needs is estimated
// against `memory_limit` before anything is allocated (lib/limits/memory_bound.hpp). Throws
// std::invalid_argument naming the operand and what does not fit. Encodings of `format` from an
// .npy array of bit patterns of its width (uint8, uint16) or of float32 values it represents
// exactly; throws std::invalid_argument naming `what` (and the first value that is not one of the
// format's).
std::vector<uint32_t> encodings(const NpyArray& array, const Format& format,
                                const std::string& what);

NpyArray batched_mma(const TensorCoreModel& model, const NpyArray& a, const NpyArray& b,
                     const NpyArray* c, unsigned threads,
                     const limits::MemoryLimit& memory_limit = limits::memory_limit(""));

}  // namespace simprec
