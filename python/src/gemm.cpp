// GEMM kernel models for Python (lib/gemm): simprec.gemm.gemm calls gemm() here, as
// `simprec gemm` does, so both run the one C++ engine; simprec.discover_gemm calls
// discover_gemm(), the search of `simprec discover --gemm`.
#include <pybind11/stl.h>

#include "lib/discover/gemm_discovery.hpp"
#include "lib/gemm/gemm_arrays.hpp"
#include "lib/gemm/gemm_numerics.hpp"
#include "lib/gemm/split_k.hpp"
#include "python/src/arguments.hpp"
#include "python/src/bindings.hpp"
#include "python/src/integer_arguments.hpp"
#include "python/src/interruptible.hpp"

namespace py = pybind11;

namespace simprec::python {
namespace {

std::optional<NpyArray> optional_floats(const py::object& x, const char* name) {
  if (x.is_none()) return std::nullopt;
  return npy_copy(array_argument(x, name), name, "expected float32 values");
}

std::optional<NpyArray> optional_block_scales(const py::object& x, const char* name) {
  if (x.is_none()) return std::nullopt;
  return npy_copy(array_argument(x, name), name,
                  "expected uint8 encodings of the block scale format or float32 values");
}

py::dict reference() {
  py::list presets, keys, split_k;
  for (const gemm::GemmPreset& p : gemm::gemm_presets()) {
    presets.append(py::dict(
        py::arg("name") = std::string(p.name), py::arg("doc") = std::string(p.doc),
        py::arg("numerics") = gemm::canonical_gemm_numerics(gemm::make_gemm_preset(p.name)),
        py::arg("assignments") = std::string(p.assignments)));
  }
  const gemm::GemmNumerics defaults = gemm::make_gemm_preset("chain");
  for (const gemm::GemmKey& k : gemm::gemm_keys()) {
    keys.append(py::dict(py::arg("key") = std::string(k.key), py::arg("doc") = std::string(k.doc),
                         py::arg("values") = std::string(k.syntax),
                         py::arg("default") = k.get(defaults)));
  }
  for (const gemm::SplitKStrategy* s : gemm::split_k_strategies()) {
    split_k.append(py::dict(py::arg("name") = std::string(s->name()),
                            py::arg("syntax") = std::string(s->syntax()),
                            py::arg("doc") = std::string(s->doc())));
  }
  return py::dict(py::arg("presets") = presets, py::arg("keys") = keys,
                  py::arg("split_k") = split_k);
}

}  // namespace

void bind_gemm(py::module_& m) {
  m.def(
      "gemm",
      [](const py::object& a, const py::object& b, const std::string& numerics,
         const py::object& scale_a, const py::object& scale_b, const py::object& bias,
         const py::object& block_scale_a, const py::object& block_scale_b, ThreadCount threads) {
        const gemm::GemmNumerics g = gemm::parse_gemm_numerics(numerics);
        const auto operand_types = [](const Format& f) {
          return "expected " + f.name() + " encodings (uint16/uint8) or float32 values";
        };
        const NpyArray an =
            npy_copy(array_argument(a, "a"), "a", operand_types(g.instruction->input_a));
        const NpyArray bn =
            npy_copy(array_argument(b, "b"), "b", operand_types(g.instruction->input_b));
        const gemm::GemmArrayScales scales{
            optional_floats(scale_a, "scale_a"), optional_floats(scale_b, "scale_b"),
            optional_floats(bias, "bias"), optional_block_scales(block_scale_a, "block_scale_a"),
            optional_block_scales(block_scale_b, "block_scale_b")};
        return numpy_of(
            interruptible([&] { return gemm::gemm_arrays(g, an, bn, scales, threads.value); }));
      },
      py::arg("a"), py::arg("b"), py::kw_only(), py::arg("numerics"),
      py::arg("scale_a") = py::none(), py::arg("scale_b") = py::none(),
      py::arg("bias") = py::none(), py::arg("block_scale_a") = py::none(),
      py::arg("block_scale_b") = py::none(), py::arg("threads") = 0,
      "D = A*B as the GEMM numerics spec computes it (lib/gemm), float32 values of its output "
      "format.");
  m.def(
      "canonical_gemm_numerics",
      [](const std::string& spec) {
        return gemm::canonical_gemm_numerics(gemm::parse_gemm_numerics(spec));
      },
      py::arg("spec"), "The canonical form of a GEMM numerics spec; ValueError for a bad one.");
  m.def(
      "gemm_split_k_length",
      [](const std::string& spec, int m, int n, int k) {
        const gemm::GemmNumerics g = gemm::parse_gemm_numerics(spec);
        return g.split_k->piece_length(g, m, n, k);
      },
      py::arg("spec"), py::arg("m"), py::arg("n"), py::arg("k"),
      "The elements of K per split-K piece the spec gives an M x N x K GEMM (K or more: not "
      "split).");
  m.def(
      "discover_gemm",
      [](const py::object& a, const py::object& b, const py::object& d, const py::object& scale_a,
         const py::object& scale_b, const py::object& bias,
         const std::vector<std::string>& families, const std::optional<double>& time_limit,
         ThreadCount threads) {
        const char* operand = "expected uint8/uint16 encodings or float32 values";
        const NpyArray an = npy_copy(array_argument(a, "a"), "a", operand);
        const NpyArray bn = npy_copy(array_argument(b, "b"), "b", operand);
        const NpyArray dn = npy_copy(array_argument(d, "d"), "d", "expected float32 values");
        const std::optional<NpyArray> sa = optional_floats(scale_a, "scale_a"),
                                      sb = optional_floats(scale_b, "scale_b"),
                                      bi = optional_floats(bias, "bias");
        discover::GemmRecording r{
            &an, &bn, &dn, sa ? &*sa : nullptr, sb ? &*sb : nullptr, bi ? &*bi : nullptr};
        discover::GemmDiscoverOptions options;
        options.families = families;
        options.time_limit = time_limit;
        options.threads = threads.value;
        const discover::GemmDiscoveryResult res =
            interruptible([&] { return discover::discover_gemm(r, options); });
        py::object first = py::none();
        if (res.first_miss) {
          first = py::make_tuple(res.first_miss->row, res.first_miss->column,
                                 res.first_miss->recorded, res.first_miss->emulated);
        }
        return py::dict(py::arg("spec") = res.spec, py::arg("bit_exact") = res.bit_exact,
                        py::arg("stopped") = res.stopped, py::arg("outputs") = res.outputs,
                        py::arg("differing") = res.differing, py::arg("first_miss") = first,
                        py::arg("ties") = res.ties, py::arg("runs") = res.candidates,
                        py::arg("seconds") = res.seconds, py::arg("lines") = res.lines);
      },
      py::arg("a"), py::arg("b"), py::arg("d"), py::kw_only(), py::arg("scale_a") = py::none(),
      py::arg("scale_b") = py::none(), py::arg("bias") = py::none(),
      py::arg("families") = std::vector<std::string>{}, py::arg("time_limit") = py::none(),
      py::arg("threads") = 0,
      "The GEMM numerics spec that reproduces D = A*B bit for bit (`simprec discover --gemm`).");
  m.def("gemm_numerics_reference", &reference,
        "The GEMM presets, keys and split-K strategies, as `simprec gemm --list` prints them.");
}

}  // namespace simprec::python
