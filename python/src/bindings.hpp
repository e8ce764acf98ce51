// The parts of the _simprec extension module, one concern per file; module.cpp calls each.
#pragma once

#include <pybind11/pybind11.h>

namespace simprec::python {

void bind_formats(pybind11::module_& m);      // formats, limits, rounding modes
void bind_rounding(pybind11::module_& m);     // round, decode
void bind_arithmetic(pybind11::module_& m);   // add sub mul div fma sqrt
void bind_matmul(pybind11::module_& m);       // tensor-core models
void bind_gemm(pybind11::module_& m);         // GEMM kernel models and their numerics specs
void bind_attention(pybind11::module_& m);    // attention forward/backward and its analysis
void bind_experiments(pybind11::module_& m);  // experiment files
void bind_validation(pybind11::module_& m);   // comparing a kernel's outputs with the emulation
void bind_quantize(pybind11::module_& m);     // block-scaled formats (MX, NVFP4)
void bind_numerics(pybind11::module_& m);     // the numerics registries and specs
void bind_discover(pybind11::module_& m);     // finding the numerics spec of a kernel
void bind_device_functions(pybind11::module_& m);  // device_math strategies' functions

}  // namespace simprec::python
