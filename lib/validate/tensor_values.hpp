// Exact values of the elements of a host tensor, whatever its storage: what the emulation reads
// from the inputs of a kernel and writes to the outputs it predicts.
#pragma once

#include <cstdint>
#include <vector>

#include "emulation/format.hpp"
#include "plugins/host/host_tensor.hpp"

namespace simprec::validate {

// The format whose encodings the storage holds: fp32 for fp32 and tf32 tensors (tf32 travels
// as fp32), fp64 for fp64, the tensor's own format for bit-pattern storage.
Format storage_format(const plugins::HostTensor& tensor);

double value_at(const plugins::HostTensor& tensor, int64_t index);
std::vector<double> values_of(const plugins::HostTensor& tensor);
// Stores `value`, which must already be a value of the tensor's format (it is rounded to
// nearest-even into the storage, which is exact for such values).
void set_value(plugins::HostTensor& tensor, int64_t index, double value);

}  // namespace simprec::validate
