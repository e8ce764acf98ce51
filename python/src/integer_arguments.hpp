// The integer arguments whose range is not the C++ type's: `threads` (0 for every core, up to
// kMaxThreads) and `seed` (0 to 2^64 - 1). pybind11 would refuse -1, 2**70 or "x" with its
// generic dump of the whole signature; these types refuse them with a message that names the
// argument, quotes the value and says what was expected (ValueError for an integer out of range,
// TypeError for anything that is not an integer). Any object with __index__ (numpy integers)
// is an integer; bool is not.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>

namespace simprec::python {

struct ThreadCount {
  unsigned value = 0;
};

struct Seed {
  uint64_t value = 0;
};

// The argument as an integer; the exceptions above otherwise. `argument` names it in messages
// (nullptr: "threads", "seed").
ThreadCount thread_count_argument(pybind11::handle object, const char* argument);
Seed seed_argument(pybind11::handle object, const char* argument);

}  // namespace simprec::python

namespace pybind11::detail {

// Throws rather than returning false from load(), so that the message is ours, not pybind11's
// signature dump.
template <class Checked, Checked (*convert)(handle, const char*)>
struct checked_integer_caster {
  PYBIND11_TYPE_CASTER(Checked, const_name("int"));
  bool load(handle source, bool) {
    value = convert(source, nullptr);
    return true;
  }
  static handle cast(Checked source, return_value_policy, handle) {
    return PyLong_FromUnsignedLongLong(source.value);
  }
};

template <>
struct type_caster<simprec::python::ThreadCount>
    : checked_integer_caster<simprec::python::ThreadCount, simprec::python::thread_count_argument> {
};

template <>
struct type_caster<simprec::python::Seed>
    : checked_integer_caster<simprec::python::Seed, simprec::python::seed_argument> {};

}  // namespace pybind11::detail
