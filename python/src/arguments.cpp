#include "python/src/arguments.hpp"
#include "emulation/excerpt.hpp"

#include <cstring>
#include <stdexcept>

namespace py = pybind11;

namespace simprec::python {

Format format_argument(const std::string& name, const std::optional<std::string>& overflow,
                       bool subnormals) {
  Format f;
  try {
    f = parse_format(name);
  } catch (const std::invalid_argument& e) {
    throw py::value_error(std::string("format: ") + e.what());
  }
  if (overflow) {
    if (*overflow == "inf") {
      f.overflow = OverflowPolicy::kInfinity;
    } else if (*overflow == "saturate") {
      f.overflow = OverflowPolicy::kSaturate;
    } else if (*overflow == "nan") {
      f.overflow = OverflowPolicy::kNan;
    } else {
      throw py::value_error("overflow='" + *overflow + "': expected 'inf', 'saturate' or 'nan'");
    }
  }
  if (!subnormals) f.subnormals = SubnormalPolicy::kFlush;
  if (const std::string problem = f.validate(); !problem.empty()) {
    throw py::value_error("format '" + excerpt(name) + "'" +
                          (overflow ? " with overflow='" + *overflow + "'" : std::string()) + ": " +
                          problem);
  }
  return f;
}

Rounding rounding_argument(const std::string& mode, int sr_bits) {
  Rounding r;
  try {
    r.mode = parse_rounding_mode(mode);
  } catch (const std::invalid_argument& e) {
    throw py::value_error(std::string("rounding: ") + e.what());
  }
  if (sr_bits < 1 || sr_bits > 32) {
    throw py::value_error("sr_bits=" + std::to_string(sr_bits) + ": expected 1..32");
  }
  r.sr_bits = sr_bits;
  return r;
}

std::string dtype_text(const py::dtype& d) {
  return py::str(static_cast<const py::handle&>(d)).cast<std::string>();
}

std::string dtype_name(const py::array& a) {
  return dtype_text(a.dtype());
}

std::string shape_text(const py::array& a) {
  std::string s = "(";
  for (py::ssize_t i = 0; i < a.ndim(); ++i) s += (i ? ", " : "") + std::to_string(a.shape(i));
  return s + (a.ndim() == 1 ? ",)" : ")");
}

py::array array_argument(const py::handle& object, const char* argument) {
  if (!py::isinstance<py::array>(object)) {
    throw py::type_error(std::string(argument) + ": expected a numpy array, got " +
                         py::str(py::type::of(object).attr("__name__")).cast<std::string>());
  }
  auto a = py::reinterpret_borrow<py::array>(object);
  if (!(a.flags() & py::array::c_style)) {
    throw py::value_error(std::string(argument) + ": expected a C-contiguous array, got one of " +
                          "shape " + shape_text(a) +
                          " with other strides (pass numpy.ascontiguousarray(...))");
  }
  return a;
}

std::vector<int64_t> shape_of(const py::array& a) {
  return std::vector<int64_t>(a.shape(), a.shape() + a.ndim());
}

NpyType npy_type_of(const py::array& a, const char* argument, const std::string& expected) {
  const py::dtype dt = a.dtype();
  if (dt.is(py::dtype::of<float>()) || dt.equal(py::dtype::of<float>())) return NpyType::kFloat32;
  if (dt.equal(py::dtype::of<double>())) return NpyType::kFloat64;
  if (dt.equal(py::dtype::of<uint8_t>())) return NpyType::kUint8;
  if (dt.equal(py::dtype::of<uint16_t>())) return NpyType::kUint16;
  if (dt.equal(py::dtype::of<uint32_t>())) return NpyType::kUint32;
  if (dt.equal(py::dtype::of<uint64_t>())) return NpyType::kUint64;
  if (dt.equal(py::dtype::of<int32_t>())) return NpyType::kInt32;
  if (dt.equal(py::dtype::of<int64_t>())) return NpyType::kInt64;
  throw py::type_error(std::string(argument) + ": dtype " + dtype_name(a) + " is not accepted (" +
                       expected + ")");
}

NpyArray npy_copy(const py::array& a, const char* argument, const std::string& expected) {
  NpyArray out;
  out.type = npy_type_of(a, argument, expected);
  out.shape = shape_of(a);
  out.data.resize(static_cast<size_t>(a.nbytes()));
  if (a.nbytes()) std::memcpy(out.data.data(), a.data(), out.data.size());
  return out;
}

namespace {

template <class T>
py::array owning_array(std::vector<T>&& values, const std::vector<int64_t>& shape) {
  auto* owned = new std::vector<T>(std::move(values));
  py::capsule free_when_done(owned, [](void* p) { delete static_cast<std::vector<T>*>(p); });
  return py::array_t<T>(std::vector<py::ssize_t>(shape.begin(), shape.end()), owned->data(),
                        free_when_done);
}

py::dtype dtype_of(NpyType type) {
  switch (type) {
    case NpyType::kFloat32:
      return py::dtype::of<float>();
    case NpyType::kFloat64:
      return py::dtype::of<double>();
    case NpyType::kUint8:
      return py::dtype::of<uint8_t>();
    case NpyType::kUint16:
      return py::dtype::of<uint16_t>();
    case NpyType::kUint32:
      return py::dtype::of<uint32_t>();
    case NpyType::kUint64:
      return py::dtype::of<uint64_t>();
    case NpyType::kInt32:
      return py::dtype::of<int32_t>();
    case NpyType::kInt64:
      return py::dtype::of<int64_t>();
  }
  throw std::logic_error("unknown npy type");
}

}  // namespace

py::array numpy_of(NpyArray&& array) {
  const py::dtype dtype = dtype_of(array.type);
  const std::vector<int64_t> shape = array.shape;
  auto* owned = new std::vector<uint8_t>(std::move(array.data));
  py::capsule free_when_done(owned, [](void* p) { delete static_cast<std::vector<uint8_t>*>(p); });
  return py::array(dtype, std::vector<py::ssize_t>(shape.begin(), shape.end()), {}, owned->data(),
                   free_when_done);
}

py::array numpy_of(std::vector<double>&& values, const std::vector<int64_t>& shape) {
  return owning_array(std::move(values), shape);
}

limits::MemoryLimit memory_limit_argument(const py::object& max_memory) {
  if (max_memory.is_none()) return limits::memory_limit("");
  const std::string text = py::str(max_memory).cast<std::string>();
  const std::string source = "max_memory=" + py::repr(max_memory).cast<std::string>();
  if (!py::isinstance<py::str>(max_memory) &&
      (!py::isinstance<py::int_>(max_memory) || py::isinstance<py::bool_>(max_memory))) {
    throw py::type_error(source + ": expected a size such as '4G' or a number of bytes");
  }
  try {
    return {limits::parse_memory_size(text, "max_memory"), source};
  } catch (const std::invalid_argument& e) {
    throw py::value_error(e.what());
  }
}

void check_memory_argument(const limits::MemoryEstimate& estimate, const limits::MemoryLimit& limit,
                           const std::string& what) {
  try {
    limits::check_memory(estimate, limit, what);
  } catch (const std::invalid_argument& e) {
    raise_memory_error(e.what());
  }
}

void raise_memory_error(const std::string& message) {
  PyErr_SetString(PyExc_MemoryError, (message + "; max_memory= sets the limit").c_str());
  throw py::error_already_set();
}

py::dtype encoding_dtype(const Format& format) {
  if (format.width() <= 8) return py::dtype::of<uint8_t>();
  if (format.width() <= 16) return py::dtype::of<uint16_t>();
  if (format.width() <= 32) return py::dtype::of<uint32_t>();
  return py::dtype::of<uint64_t>();
}

}  // namespace simprec::python
