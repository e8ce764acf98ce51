#include "python/src/device_functions.hpp"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include "lib/attention/device_math_values.hpp"
#include "python/src/bindings.hpp"

namespace py = pybind11;

namespace simprec::python {
namespace {

// Shared, so that copies of a function made on threads without the GIL (the emulation runs on
// one, python/src/interruptible.hpp) never touch the object's reference count.
std::shared_ptr<py::object> held(const py::object& f) {
  return std::shared_ptr<py::object>(new py::object(f), [](py::object* o) {
    const py::gil_scoped_acquire gil;
    delete o;
  });
}

py::object float32_view(const std::vector<uint32_t>& bits) {
  py::array_t<uint32_t> a(static_cast<py::ssize_t>(bits.size()));
  std::copy(bits.begin(), bits.end(), a.mutable_data());
  return a.attr("view")("float32");
}

std::vector<uint32_t> result_bits(const py::object& result, size_t count, const std::string& name) {
  const py::array values =
      py::module_::import("numpy").attr("ascontiguousarray")(result, "float32");
  if (values.size() != static_cast<py::ssize_t>(count)) {
    throw py::value_error("device function " + name + ": returned " +
                          std::to_string(values.size()) + " values for " + std::to_string(count) +
                          " arguments");
  }
  std::vector<uint32_t> out(count);
  std::memcpy(out.data(), values.data(), count * sizeof(uint32_t));
  return out;
}

attention::DeviceFunction unary(const py::object& f, const std::string& name) {
  const std::shared_ptr<py::object> function = held(f);
  return [function, name](const std::vector<uint32_t>& x) {
    const py::gil_scoped_acquire gil;
    return result_bits((*function)(float32_view(x)), x.size(), name);
  };
}

attention::DeviceDivision binary(const py::object& f) {
  const std::shared_ptr<py::object> function = held(f);
  return [function](const std::vector<uint32_t>& x, const std::vector<uint32_t>& y) {
    const py::gil_scoped_acquire gil;
    return result_bits((*function)(float32_view(x), float32_view(y)), x.size(), "div");
  };
}

// A device_math strategy's function on float32 values: (values, modelled), the values NaN where
// the strategy has none (modelled False there).
py::tuple evaluate_strategy(const std::string& strategy, const std::string& function,
                            const py::array_t<float, py::array::c_style | py::array::forcecast>& x,
                            const py::object& y) {
  const auto& math = attention::find_strategy<attention::DeviceMath>(strategy);
  (void)attention::device_math_value(math, function, 1.0f);  // an unknown name is refused here
  py::array_t<float, py::array::c_style | py::array::forcecast> divisor;
  if (function == "div") {
    if (y.is_none()) throw py::value_error("device function div needs y (the divisor)");
    divisor = py::array_t<float, py::array::c_style | py::array::forcecast>(y);
    if (divisor.size() != x.size()) throw py::value_error("x and y differ in size");
  } else if (!y.is_none()) {
    throw py::value_error("y is the divisor of div only");
  }
  py::array_t<float> values(x.request().shape);
  py::array_t<bool> modelled(x.request().shape);
  const float* in = x.data();
  float* out = values.mutable_data();
  bool* has = modelled.mutable_data();
  for (py::ssize_t i = 0; i < x.size(); ++i) {
    const std::optional<float> v = attention::device_math_value(
        math, function, in[i], function == "div" ? divisor.data()[i] : 1.0f);
    has[i] = v.has_value();
    out[i] = v.value_or(std::numeric_limits<float>::quiet_NaN());
  }
  return py::make_tuple(values, modelled);
}

}  // namespace

attention::DeviceFunctions device_functions_argument(const py::object& functions) {
  attention::DeviceFunctions out;
  if (functions.is_none()) return out;
  if (!py::isinstance<py::dict>(functions))
    throw py::type_error("device_functions: expected a dict of name -> callable");
  for (const auto& [key, value] : py::reinterpret_borrow<py::dict>(functions)) {
    const std::string name = py::str(key);
    const attention::DeviceFn fn = attention::parse_device_fn(name);
    const py::object f = py::reinterpret_borrow<py::object>(value);
    if (!PyCallable_Check(f.ptr()))
      throw py::type_error("device_functions['" + name + "']: expected a callable");
    switch (fn) {
      case attention::DeviceFn::kExp2:
        out.exp2 = unary(f, name);
        break;
      case attention::DeviceFn::kExp:
        out.exp = unary(f, name);
        break;
      case attention::DeviceFn::kLog:
        out.log = unary(f, name);
        break;
      case attention::DeviceFn::kLog2:
        out.log2 = unary(f, name);
        break;
      case attention::DeviceFn::kRcp:
        out.rcp = unary(f, name);
        break;
      case attention::DeviceFn::kDiv:
        out.div = binary(f);
        break;
    }
  }
  return out;
}

void bind_device_functions(py::module_& m) {
  m.def("device_function", &evaluate_strategy, py::arg("strategy"), py::arg("function"),
        py::arg("x"), py::arg("y") = py::none());
}

}  // namespace simprec::python
