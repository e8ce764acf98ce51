// Elementwise add, sub, mul, div, fma and sqrt in a format and mode (emulation/arithmetic.hpp):
// each result correctly rounded once. Operands are encodings (the format's unsigned dtype) or
// values (float32/float64) that the format represents exactly; results come back as the
// operands came. Element i takes random index i of stream 0 under the seed.
#include <pybind11/stl.h>

#include <cmath>
#include <functional>

#include "emulation/arithmetic.hpp"
#include "python/src/arguments.hpp"
#include "python/src/bindings.hpp"
#include "python/src/integer_arguments.hpp"

namespace py = pybind11;

namespace simprec::python {
namespace {

// An operand as encodings, and how to give results back in its kind.
struct Operands {
  std::vector<std::vector<uint64_t>> bits;  // one per operand
  py::dtype dtype;                          // of the operands and the result
  bool values = false;                      // float32/float64 values, not encodings
  std::vector<int64_t> shape;
};

template <class T>
void read_encodings(const py::array& a, std::vector<uint64_t>& out) {
  const T* p = static_cast<const T*>(a.data());
  out.assign(p, p + a.size());
}

template <class T>
void read_values(const py::array& a, const Format& f, const char* name,
                 std::vector<uint64_t>& out) {
  const T* p = static_cast<const T*>(a.data());
  out.resize(static_cast<size_t>(a.size()));
  for (size_t i = 0; i < out.size(); ++i) {
    const double x = p[i];
    const uint64_t b = round_to_format(f, unrounded_from_double(x), Rounding{});
    const double back = decode(f, b);
    const bool same =
        std::isnan(x) ? std::isnan(back) : back == x && std::signbit(back) == std::signbit(x);
    if (!same) {
      throw py::value_error(std::string(name) + "[" + std::to_string(i) +
                            "] = " + py::repr(py::float_(x)).cast<std::string>() +
                            " is not representable in " + f.name() +
                            " (round it first, or pass encodings)");
    }
    out[i] = b;
  }
}

Operands read_operands(const std::vector<std::pair<const char*, py::object>>& args,
                       const Format& f) {
  Operands ops;
  const py::dtype encoding = encoding_dtype(f);
  for (size_t k = 0; k < args.size(); ++k) {
    const char* name = args[k].first;
    const py::array a = array_argument(args[k].second, name);
    if (k == 0) {
      ops.dtype = a.dtype();
      ops.shape = shape_of(a);
      ops.values = !a.dtype().equal(encoding);
    } else if (!a.dtype().equal(ops.dtype)) {
      throw py::type_error(std::string(name) + ": dtype " + dtype_name(a) + ", expected " +
                           dtype_text(ops.dtype) + " like " + args[0].first);
    } else if (shape_of(a) != ops.shape) {
      throw py::value_error(std::string(name) + ": shape " + shape_text(a) + ", expected " +
                            shape_text(py::reinterpret_borrow<py::array>(args[0].second)) +
                            " like " + args[0].first);
    }
    std::vector<uint64_t> bits;
    if (!ops.values) {
      if (f.width() <= 8)
        read_encodings<uint8_t>(a, bits);
      else if (f.width() <= 16)
        read_encodings<uint16_t>(a, bits);
      else if (f.width() <= 32)
        read_encodings<uint32_t>(a, bits);
      else
        read_encodings<uint64_t>(a, bits);
      const uint64_t limit = f.width() >= 64 ? ~uint64_t{0} : (uint64_t{1} << f.width()) - 1;
      for (size_t i = 0; i < bits.size(); ++i) {
        if (bits[i] > limit) {
          throw py::value_error(std::string(name) + "[" + std::to_string(i) + "] = " +
                                std::to_string(bits[i]) + " is not an encoding of " + f.name());
        }
      }
    } else if (a.dtype().equal(py::dtype::of<float>())) {
      read_values<float>(a, f, name, bits);
    } else if (a.dtype().equal(py::dtype::of<double>())) {
      read_values<double>(a, f, name, bits);
    } else {
      throw py::type_error(std::string(name) + ": dtype " + dtype_name(a) + " is not accepted (" +
                           f.name() + " encodings as " + dtype_text(encoding) +
                           ", or float32/float64 values)");
    }
    ops.bits.push_back(std::move(bits));
  }
  return ops;
}

template <class T>
void write_results(const std::vector<uint64_t>& bits, const Format& f, bool values,
                   py::array& out) {
  T* p = static_cast<T*>(out.mutable_data());
  for (size_t i = 0; i < bits.size(); ++i)
    p[i] = values ? static_cast<T>(decode(f, bits[i])) : static_cast<T>(bits[i]);
}

using Operation = std::function<uint64_t(RoundingContext&, const uint64_t*)>;

py::array elementwise(const std::vector<std::pair<const char*, py::object>>& args,
                      const Operation& op, const std::string& format, const std::string& rounding,
                      int sr_bits, uint64_t seed, const std::optional<std::string>& overflow,
                      bool subnormals) {
  const Format f = format_argument(format, overflow, subnormals);
  const Rounding r = rounding_argument(rounding, sr_bits);
  Operands ops = read_operands(args, f);
  if (ops.values && ops.dtype.equal(py::dtype::of<float>()) &&
      (f.precision() > 24 || f.emax() > 127 || f.emin() - f.mantissa_bits < -149)) {
    throw py::value_error("format " + f.name() +
                          ": its results do not all fit in float32; pass float64 values or "
                          "encodings");
  }
  const size_t n = ops.bits.front().size();
  std::vector<uint64_t> result(n);
  {
    py::gil_scoped_release release;
    RoundingContext ctx(f, r, RandomStream{seed, 0}, 0);
    uint64_t operands[3];
    for (size_t i = 0; i < n; ++i) {
      for (size_t k = 0; k < ops.bits.size(); ++k) operands[k] = ops.bits[k][i];
      ctx.set_next_index(i);
      result[i] = op(ctx, operands);
    }
  }
  py::array out(ops.dtype, std::vector<py::ssize_t>(ops.shape.begin(), ops.shape.end()));
  if (!ops.values) {
    if (f.width() <= 8)
      write_results<uint8_t>(result, f, false, out);
    else if (f.width() <= 16)
      write_results<uint16_t>(result, f, false, out);
    else if (f.width() <= 32)
      write_results<uint32_t>(result, f, false, out);
    else
      write_results<uint64_t>(result, f, false, out);
  } else if (ops.dtype.equal(py::dtype::of<float>())) {
    write_results<float>(result, f, true, out);
  } else {
    write_results<double>(result, f, true, out);
  }
  return out;
}

#define SIMPREC_MODE_ARGS                                                                 \
  py::arg("format"), py::arg("rounding") = "rne", py::kw_only(), py::arg("sr_bits") = 32, \
                     py::arg("seed") = 0, py::arg("overflow") = py::none(),               \
                     py::arg("subnormals") = true

template <uint64_t (*Op)(RoundingContext&, uint64_t, uint64_t)>
void def_binary(py::module_& m, const char* name, const char* doc) {
  m.def(
      name,
      [](const py::object& a, const py::object& b, const std::string& format,
         const std::string& rounding, int sr_bits, Seed seed,
         const std::optional<std::string>& overflow, bool subnormals) {
        return elementwise(
            {{"a", a}, {"b", b}},
            [](RoundingContext& ctx, const uint64_t* x) { return Op(ctx, x[0], x[1]); }, format,
            rounding, sr_bits, seed.value, overflow, subnormals);
      },
      py::arg("a"), py::arg("b"), SIMPREC_MODE_ARGS, doc);
}

}  // namespace

void bind_arithmetic(py::module_& m) {
  def_binary<&simprec::add>(m, "add", "a + b, correctly rounded in the format and mode.");
  def_binary<&simprec::sub>(m, "sub", "a - b, correctly rounded in the format and mode.");
  def_binary<&simprec::mul>(m, "mul", "a * b, correctly rounded in the format and mode.");
  def_binary<&simprec::div>(m, "div", "a / b, correctly rounded in the format and mode.");
  m.def(
      "fma",
      [](const py::object& a, const py::object& b, const py::object& c, const std::string& format,
         const std::string& rounding, int sr_bits, Seed seed,
         const std::optional<std::string>& overflow, bool subnormals) {
        return elementwise(
            {{"a", a}, {"b", b}, {"c", c}},
            [](RoundingContext& ctx, const uint64_t* x) {
              return simprec::fma(ctx, x[0], x[1], x[2]);
            },
            format, rounding, sr_bits, seed.value, overflow, subnormals);
      },
      py::arg("a"), py::arg("b"), py::arg("c"), SIMPREC_MODE_ARGS,
      "a * b + c with one rounding, in the format and mode.");
  m.def(
      "sqrt",
      [](const py::object& a, const std::string& format, const std::string& rounding, int sr_bits,
         Seed seed, const std::optional<std::string>& overflow, bool subnormals) {
        return elementwise(
            {{"a", a}},
            [](RoundingContext& ctx, const uint64_t* x) { return simprec::sqrt(ctx, x[0]); },
            format, rounding, sr_bits, seed.value, overflow, subnormals);
      },
      py::arg("a"), SIMPREC_MODE_ARGS, "sqrt(a), correctly rounded in the format and mode.");
}

}  // namespace simprec::python
