// The extension module behind the `simprec` Python package (python/simprec/__init__.py wraps it).
// C++ exceptions become Python ones: std::invalid_argument -> ValueError, other
// std::exception -> RuntimeError (pybind11's translation).
#include "python/src/bindings.hpp"

PYBIND11_MODULE(_simprec, m) {
  m.doc() = "simprec: bit-exact emulation of low-precision floating-point arithmetic";
  simprec::python::bind_formats(m);
  simprec::python::bind_rounding(m);
  simprec::python::bind_arithmetic(m);
  simprec::python::bind_matmul(m);
  simprec::python::bind_attention(m);
  simprec::python::bind_experiments(m);
  simprec::python::bind_validation(m);
  simprec::python::bind_quantize(m);
  simprec::python::bind_numerics(m);
  simprec::python::bind_device_functions(m);
}
