// Formats with their limits (the columns of `simprec formats`) and the rounding modes.
#include <pybind11/stl.h>

#include "python/src/arguments.hpp"
#include "python/src/bindings.hpp"

namespace py = pybind11;

namespace simprec::python {
namespace {

py::dict format_dict(const std::string& name, const Format& f) {
  py::dict d;
  d["name"] = name;
  d["bits"] = f.width();
  d["exponent_bits"] = f.exponent_bits;
  d["mantissa_bits"] = f.mantissa_bits;
  d["bias"] = f.bias;
  d["max_finite"] = f.max_finite();
  d["min_normal"] = f.min_normal();
  d["min_subnormal"] = f.min_subnormal();
  d["epsilon"] = f.epsilon();
  d["overflow"] = std::string(overflow_name(f.overflow));
  d["nan_inf"] = std::string(special_encoding_name(f.special));
  d["subnormals"] = std::string(subnormals_name(f));
  d["has_infinity"] = f.has_infinity();
  d["nan_bits"] = f.nan_bits();
  d["max_finite_bits"] = f.max_finite_bits();
  return d;
}

}  // namespace

void bind_formats(py::module_& m) {
  m.def(
      "formats",
      [] {
        py::list out;
        for (auto* it = named_formats_begin(); it != named_formats_end(); ++it)
          out.append(format_dict(std::string(it->name), it->format));
        return out;
      },
      "The named formats and their limits, as `simprec formats` lists them.");
  m.def(
      "format_info",
      [](const std::string& format, const std::optional<std::string>& overflow, bool subnormals) {
        const Format f = format_argument(format, overflow, subnormals);
        return format_dict(f.name(), f);
      },
      py::arg("format"), py::kw_only(), py::arg("overflow") = py::none(),
      py::arg("subnormals") = true,
      "One format's limits (any eXmY[fn|fnuz] too), with the policies applied.");
  m.def(
      "rounding_modes",
      [] {
        py::list out;
        for (RoundingMode mode : kAllRoundingModes)
          out.append(py::make_tuple(std::string(short_name(mode)), std::string(long_name(mode))));
        return out;
      },
      "The rounding modes as (short name, long name).");
}

}  // namespace simprec::python
