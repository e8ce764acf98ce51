// Reading the arguments of a kernel call inside the CPU reference plugin: tensors by operand
// name, values decoded to float/double, parameters by name, and errors turned into a status
// and a message (no exception may leave the plugin).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "plugins/plugin_kit.hpp"
#include "plugins/simprec_plugin.h"

namespace simprec::cpu_reference {

using plugin_kit::find_tensor;
using plugin_kit::guarded;
using plugin_kit::KernelFailure;

// Throws KernelFailure(INVALID_ARGUMENT) when the tensor is missing.
const SimprecTensor& tensor(const SimprecRunArgs* args, const char* name);

int64_t dimension(const SimprecTensor& t, int axis);
int64_t element_count(const SimprecTensor& t);

// Values of a fp32 / bf16 / fp16 (/ fp64) tensor, exactly converted.
std::vector<float> read_floats(const SimprecTensor& t);
std::vector<double> read_doubles(const SimprecTensor& t);
// Writes into a fp32 (resp. fp64) output.
void write_floats(const SimprecTensor& t, const std::vector<float>& values);
void write_doubles(const SimprecTensor& t, const std::vector<double>& values);

const SimprecNamedValue* find_parameter(const SimprecRunArgs* args, const char* name);
bool bool_parameter(const SimprecRunArgs* args, const char* name, bool fallback);
double float64_parameter(const SimprecRunArgs* args, const char* name, double fallback);

}  // namespace simprec::cpu_reference
