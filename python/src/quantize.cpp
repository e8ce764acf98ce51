// simprec.quantize: a numpy array into a block-scaled format (MX or NVFP4), the same computation
// and outputs as `simprec quantize` (lib/quantize/quantize_tensor.hpp), without files.
#include <pybind11/stl.h>

#include <optional>

#include "lib/quantize/quantize_tensor.hpp"
#include "python/src/arguments.hpp"
#include "python/src/bindings.hpp"
#include "python/src/integer_arguments.hpp"

namespace py = pybind11;

namespace simprec::python {

void bind_quantize(py::module_& m) {
  m.def(
      "quantize",
      [](const py::object& x, const std::string& scheme, const std::string& rounding, int sr_bits,
         Seed seed, const std::optional<int64_t>& block_size) {
        const py::array array = array_argument(x, "x");
        NpyArray input = npy_copy(array, "x", "float32 or float64");
        const bool float32 = input.type == NpyType::kFloat32;
        if (!float32 && (input.type != NpyType::kFloat64 || scheme == "nvfp4")) {
          throw py::type_error(
              "x: dtype " + dtype_name(array) + ", expected " +
              (scheme == "nvfp4" ? "float32 (NVFP4 computes in fp32)" : "float32 or float64"));
        }
        if (block_size && (*block_size < 1 || *block_size > quantize::kMaxBlockSize)) {
          throw py::value_error("block_size=" + std::to_string(*block_size) +
                                ": expected 1..2^30, or None for the scheme's own");
        }
        const quantize::QuantizeOptions options{scheme, rounding_argument(rounding, sr_bits),
                                                seed.value, block_size.value_or(0)};
        quantize::QuantizedTensor q;
        {
          py::gil_scoped_release release;
          q = quantize::quantize_tensor(input, options);
        }
        py::dict out;
        out["elements"] = numpy_of(make_npy<uint8_t>(q.shape, q.blocks.elements));
        out["scales"] = numpy_of(make_npy<uint8_t>(q.scale_shape, q.blocks.scales));
        out["dequantized"] = numpy_of(std::move(q.dequantized), q.shape);
        out["tensor_scale"] = q.nvfp4 ? py::object(py::float_(q.blocks.tensor_scale)) : py::none();
        return out;
      },
      py::arg("x"), py::arg("scheme"), py::arg("rounding"), py::arg("sr_bits"), py::arg("seed"),
      py::arg("block_size"));
}

}  // namespace simprec::python
