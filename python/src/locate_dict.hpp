// simprec.validate(..., locate=True)'s structured report: lib/validate/locate.hpp's LocateReport
// as Python dicts and lists (python/simprec/validation.py documents the keys).
#pragma once

#include <pybind11/pybind11.h>

#include "lib/validate/locate.hpp"

namespace simprec::python {

pybind11::dict locate_dict(const validate::LocateReport& report);

}  // namespace simprec::python
