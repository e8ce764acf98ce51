#include "python/src/integer_arguments.hpp"

#include <optional>
#include <string>

#include "emulation/parallel.hpp"
#include "lib/limits/strict_parse.hpp"

namespace py = pybind11;

namespace simprec::python {
namespace {

// `argument=VALUE`, the value as Python writes it, cut short if long.
std::string quoted(py::handle object, const char* argument) {
  std::string text;
  try {
    text = py::repr(object).cast<std::string>();
  } catch (const py::error_already_set&) {
    text = "<unprintable>";
  }
  return std::string(argument) + "=" + limits::excerpt(text);
}

// The object as a Python int (through __index__), or TypeError naming `expected`.
py::int_ integer(py::handle object, const char* argument, const std::string& expected) {
  if (PyBool_Check(object.ptr()) || !PyIndex_Check(object.ptr())) {
    throw py::type_error(quoted(object, argument) + ": expected " + expected + ", got " +
                         py::type::of(object).attr("__name__").cast<std::string>());
  }
  return py::reinterpret_steal<py::int_>(PyNumber_Index(object.ptr()));
}

// The int's value when it lies in [0, max]; nullopt otherwise.
std::optional<uint64_t> in_range(const py::int_& value, uint64_t max) {
  int overflow = 0;
  const long long signed_value = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
  if (overflow < 0 || (overflow == 0 && signed_value < 0)) return std::nullopt;
  const unsigned long long unsigned_value = PyLong_AsUnsignedLongLong(value.ptr());
  if (PyErr_Occurred()) {
    PyErr_Clear();  // above 2^64 - 1
    return std::nullopt;
  }
  if (unsigned_value > max) return std::nullopt;
  return unsigned_value;
}

}  // namespace

ThreadCount thread_count_argument(py::handle object, const char* argument) {
  if (!argument) argument = "threads";
  const std::string expected =
      "an integer from 0 (every core) to " + std::to_string(kMaxThreads) + " threads";
  const auto value = in_range(integer(object, argument, expected), kMaxThreads);
  if (!value) throw py::value_error(quoted(object, argument) + ": expected " + expected);
  return {static_cast<unsigned>(*value)};
}

Seed seed_argument(py::handle object, const char* argument) {
  if (!argument) argument = "seed";
  const std::string expected = "an integer from 0 to 2**64 - 1";
  const auto value = in_range(integer(object, argument, expected), UINT64_MAX);
  if (!value) throw py::value_error(quoted(object, argument) + ": expected " + expected);
  return {*value};
}

}  // namespace simprec::python
