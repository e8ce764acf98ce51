// matmul on the tensor-core models: D = A*B + C as `simprec mma` computes it (lib/mma).
#include <pybind11/stl.h>

#include "emulation/tensor_core.hpp"
#include "lib/mma/batched_mma.hpp"
#include "python/src/arguments.hpp"
#include "python/src/bindings.hpp"
#include "python/src/integer_arguments.hpp"
#include "python/src/interruptible.hpp"

namespace py = pybind11;

namespace simprec::python {

void bind_matmul(py::module_& m) {
  m.def(
      "matmul",
      [](const py::object& a, const py::object& b, const py::object& c, const std::string& model,
         ThreadCount threads) {
        const TensorCoreModel* tc;
        try {
          tc = &tensor_core_model(model);
        } catch (const std::invalid_argument& e) {
          throw py::value_error(std::string("model: ") + e.what());
        }
        const auto operand_types = [](const Format& f) {
          return "expected " + f.name() + " encodings (uint16/uint8) or float32 values";
        };
        const NpyArray an = npy_copy(array_argument(a, "a"), "a", operand_types(tc->input_a));
        const NpyArray bn = npy_copy(array_argument(b, "b"), "b", operand_types(tc->input_b));
        std::optional<NpyArray> cn;
        if (!c.is_none()) {
          cn = npy_copy(array_argument(c, "c"), "c",
                        "expected float32 values or fp16 encodings (uint16)");
        }
        return numpy_of(interruptible(
            [&] { return batched_mma(*tc, an, bn, cn ? &*cn : nullptr, threads.value); }));
      },
      py::arg("a"), py::arg("b"), py::arg("c") = py::none(), py::kw_only(),
      py::arg("model") = "tc:sm90-mma-bf16", py::arg("threads") = 0,
      "D = A*B + C the way a tensor-core instruction chain computes it.");
  m.def(
      "tensor_core_models",
      [] {
        py::list out;
        for (const TensorCoreModel& t : tensor_core_models()) {
          py::dict d;
          d["name"] = t.name;
          d["instruction"] = t.instruction;
          d["gpu"] = t.gpu;
          d["input"] = t.input_name();
          d["input_a"] = t.input_a.name();
          d["input_b"] = t.input_b.name();
          d["accumulator"] = t.accumulator.name();
          d["shape"] = py::make_tuple(t.m, t.n, t.k);
          d["verified"] = t.verified;
          out.append(d);
        }
        return out;
      },
      "The tensor-core models, as `simprec mma --list` lists them.");
}

}  // namespace simprec::python
