// round and decode over whole numpy arrays, through the bulk API (emulation/bulk.hpp): no copy
// of the input, the GIL released while rounding. Element i takes random index i of stream 0
// under the seed, as the n-th line does in `simprec round`.
#include <pybind11/stl.h>

#include "emulation/bulk.hpp"
#include "python/src/arguments.hpp"
#include "python/src/bindings.hpp"
#include "python/src/integer_arguments.hpp"

namespace py = pybind11;

namespace simprec::python {
namespace {

template <class T>
std::span<const T> input_span(const py::array& a) {
  return {static_cast<const T*>(a.data()), static_cast<size_t>(a.size())};
}
template <class T>
std::span<T> output_span(py::array& a) {
  return {static_cast<T*>(a.mutable_data()), static_cast<size_t>(a.size())};
}

// `out` when given (checked against what the result needs), else a new array.
py::array output_array(const py::object& out, const py::dtype& dtype, const py::array& like) {
  if (out.is_none())
    return py::array(dtype, std::vector<py::ssize_t>(like.shape(), like.shape() + like.ndim()));
  py::array a = array_argument(out, "out");
  if (!a.dtype().equal(dtype)) {
    throw py::type_error("out: dtype " + dtype_name(a) + ", expected " + dtype_text(dtype));
  }
  if (shape_of(a) != shape_of(like)) {
    throw py::value_error("out: shape " + shape_text(a) + ", expected " + shape_text(like));
  }
  if (!a.writeable()) throw py::value_error("out: the array is read-only");
  return a;
}

template <class In>
void round_into(const py::array& x, py::array& result, bool encode, const BulkRounding& spec) {
  const std::span<const In> in = input_span<In>(x);
  py::gil_scoped_release release;
  if (!encode) return round_to_values<In>(in, output_span<In>(result), spec);
  switch (spec.format.width() <= 8    ? 1
          : spec.format.width() <= 16 ? 2
          : spec.format.width() <= 32 ? 4
                                      : 8) {
    case 1:
      return round_to_bits<In, uint8_t>(in, output_span<uint8_t>(result), spec);
    case 2:
      return round_to_bits<In, uint16_t>(in, output_span<uint16_t>(result), spec);
    case 4:
      return round_to_bits<In, uint32_t>(in, output_span<uint32_t>(result), spec);
    default:
      return round_to_bits<In, uint64_t>(in, output_span<uint64_t>(result), spec);
  }
}

py::array round_array(const py::object& object, const std::string& format,
                      const std::string& rounding, int sr_bits, Seed seed,
                      const std::optional<std::string>& overflow, bool subnormals, bool encode,
                      const py::object& out, ThreadCount threads) {
  const py::array x = array_argument(object, "x");
  const NpyType type = npy_type_of(x, "x", "expected float32 or float64");
  if (type != NpyType::kFloat32 && type != NpyType::kFloat64) {
    throw py::type_error("x: dtype " + dtype_name(x) +
                         " is not accepted (expected float32 or float64; to convert encodings "
                         "use decode)");
  }
  const BulkRounding spec{format_argument(format, overflow, subnormals),
                          rounding_argument(rounding, sr_bits), RandomStream{seed.value, 0}, 0,
                          threads.value};
  if (!encode && type == NpyType::kFloat32 &&
      (spec.format.precision() > 24 || spec.format.emax() > 127 ||
       spec.format.emin() - spec.format.mantissa_bits < -149)) {
    throw py::value_error("format " + spec.format.name() +
                          ": its values do not all fit in float32 x; pass float64 values or "
                          "encode=True");
  }
  py::array result = output_array(out, encode ? encoding_dtype(spec.format) : x.dtype(), x);
  if (type == NpyType::kFloat32) {
    round_into<float>(x, result, encode, spec);
  } else {
    round_into<double>(x, result, encode, spec);
  }
  return result;
}

template <class Bits>
void decode_into(const Format& f, const py::array& bits, py::array& result, bool to_float) {
  const std::span<const Bits> in = input_span<Bits>(bits);
  py::gil_scoped_release release;
  if (to_float) return decode_bits<Bits, float>(f, in, output_span<float>(result));
  decode_bits<Bits, double>(f, in, output_span<double>(result));
}

py::array decode_array(const py::object& object, const std::string& format,
                       const std::optional<std::string>& overflow, bool subnormals,
                       const std::string& dtype, const py::object& out) {
  const py::array bits = array_argument(object, "bits");
  const Format f = format_argument(format, overflow, subnormals);
  const py::dtype expected = encoding_dtype(f);
  if (!bits.dtype().equal(expected)) {
    throw py::type_error("bits: dtype " + dtype_name(bits) + " is not accepted for " + f.name() +
                         " (expected " + dtype_text(expected) + " encodings)");
  }
  if (dtype != "float32" && dtype != "float64")
    throw py::value_error("dtype='" + dtype + "': expected 'float32' or 'float64'");
  const bool to_float = dtype == "float32";
  if (to_float && (f.precision() > 24 || f.emax() > 127 || f.emin() - f.mantissa_bits < -149)) {
    throw py::value_error("dtype='float32': " + f.name() +
                          " values do not all fit in float32 (use float64)");
  }
  // Encodings beyond the format's width are not encodings of it.
  const uint64_t limit = f.width() >= 64 ? ~uint64_t{0} : (uint64_t{1} << f.width()) - 1;
  py::array result =
      output_array(out, to_float ? py::dtype::of<float>() : py::dtype::of<double>(), bits);
  const auto check = [&](auto tag) {
    using Bits = decltype(tag);
    const std::span<const Bits> in = input_span<Bits>(bits);
    for (size_t i = 0; i < in.size(); ++i) {
      if (static_cast<uint64_t>(in[i]) > limit) {
        throw py::value_error("bits[" + std::to_string(i) + "] = " + std::to_string(in[i]) +
                              " is not an encoding of " + f.name() + " (at most " +
                              std::to_string(f.width()) + " bits)");
      }
    }
    decode_into<Bits>(f, bits, result, to_float);
  };
  if (f.width() <= 8) {
    check(uint8_t{});
  } else if (f.width() <= 16) {
    check(uint16_t{});
  } else if (f.width() <= 32) {
    check(uint32_t{});
  } else {
    check(uint64_t{});
  }
  return result;
}

}  // namespace

void bind_rounding(py::module_& m) {
  m.def("round", &round_array, py::arg("x"), py::arg("format"), py::arg("rounding") = "rne",
        py::kw_only(), py::arg("sr_bits") = 32, py::arg("seed") = 0,
        py::arg("overflow") = py::none(), py::arg("subnormals") = true, py::arg("encode") = false,
        py::arg("out") = py::none(), py::arg("threads") = 0);
  m.def("decode", &decode_array, py::arg("bits"), py::arg("format"), py::kw_only(),
        py::arg("overflow") = py::none(), py::arg("subnormals") = true,
        py::arg("dtype") = "float64", py::arg("out") = py::none());
}

}  // namespace simprec::python
