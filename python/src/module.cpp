// The extension module behind the `simprec` Python package (python/simprec/__init__.py wraps it).
// C++ exceptions become Python ones as pybind11 translates them (std::invalid_argument ->
// ValueError, std::bad_alloc -> MemoryError, other std::exception -> RuntimeError), with their
// messages bounded as the command-line tool bounds them (emulation/excerpt.hpp), so that no error
// quotes a user's text whole.
#include <exception>
#include <new>
#include <stdexcept>

#include "emulation/excerpt.hpp"
#include "python/src/bindings.hpp"
#include "python/src/interruptible.hpp"

namespace {

void translate_with_bounded_messages(std::exception_ptr p) {
  try {
    std::rethrow_exception(p);
  } catch (const pybind11::builtin_exception&) {
    throw;  // raised as a Python exception on purpose, with its own message
  } catch (const pybind11::error_already_set&) {
    throw;
  } catch (const std::invalid_argument& e) {
    PyErr_SetString(PyExc_ValueError, simprec::bounded_message(e.what()).c_str());
  } catch (const std::domain_error& e) {
    PyErr_SetString(PyExc_ValueError, simprec::bounded_message(e.what()).c_str());
  } catch (const std::length_error& e) {
    PyErr_SetString(PyExc_ValueError, simprec::bounded_message(e.what()).c_str());
  } catch (const std::range_error& e) {
    PyErr_SetString(PyExc_ValueError, simprec::bounded_message(e.what()).c_str());
  } catch (const std::overflow_error& e) {
    PyErr_SetString(PyExc_OverflowError, simprec::bounded_message(e.what()).c_str());
  } catch (const std::out_of_range& e) {
    PyErr_SetString(PyExc_IndexError, simprec::bounded_message(e.what()).c_str());
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, simprec::bounded_message(e.what()).c_str());
  }
}

}  // namespace

PYBIND11_MODULE(_simprec, m) {
  m.doc() = "simprec: bit-exact emulation of low-precision floating-point arithmetic";
  pybind11::register_exception_translator(&translate_with_bounded_messages);
  simprec::python::bind_formats(m);
  simprec::python::bind_rounding(m);
  simprec::python::bind_arithmetic(m);
  simprec::python::bind_matmul(m);
  simprec::python::bind_gemm(m);
  simprec::python::bind_attention(m);
  simprec::python::bind_experiments(m);
  simprec::python::bind_validation(m);
  simprec::python::bind_quantize(m);
  simprec::python::bind_numerics(m);
  simprec::python::bind_discover(m);
  simprec::python::bind_device_functions(m);
  m.def("set_progress", &simprec::python::set_progress_shown, pybind11::arg("shown"),
        "Whether calls longer than 2 s show a progress line on stderr where it is a terminal "
        "(on at import).");
}
