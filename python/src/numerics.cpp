// The numerics registries for Python: the kernel models, the slots with their strategies, the
// parameters and the mitigations (lib/attention/strategy.hpp, model.hpp, options.hpp), as plain
// data, from which simprec's docstrings and simprec.numerics_reference() are made.
#include <pybind11/stl.h>

#include "lib/attention/model.hpp"
#include "lib/attention/numerics_spec.hpp"
#include "lib/attention/options.hpp"
#include "python/src/bindings.hpp"

namespace simprec::python {
namespace py = pybind11;

namespace {

py::list requirements_of(const attention::Strategy& s) {
  py::list out;
  for (const attention::Requirement& r : s.info().needs) {
    py::list values;
    if (r.tag.empty()) {
      for (const auto& v : r.values) values.append(std::string(v));
    } else {
      for (const attention::Strategy* t : attention::strategy_registry().of_slot(r.key)) {
        if (t->has_tag(r.tag)) values.append(std::string(t->name()));
      }
    }
    out.append(py::dict(py::arg("key") = std::string(r.key), py::arg("values") = values));
  }
  return out;
}

py::dict reference() {
  py::list presets, slots, parameters, mitigations;
  for (const attention::KernelModel& m : attention::builtin_models()) {
    presets.append(py::dict(py::arg("name") = m.name, py::arg("path") = m.path,
                            py::arg("description") = m.description));
  }
  for (const attention::StructuralOption& o : attention::structural_options()) {
    if (!o.slot) {
      parameters.append(py::dict(py::arg("key") = std::string(o.key),
                                 py::arg("doc") = std::string(o.doc),
                                 py::arg("default") = attention::default_value(o)));
      continue;
    }
    py::list strategies;
    for (const attention::Strategy* s : attention::strategy_registry().of_slot(o.key)) {
      py::list draws;
      for (const attention::Draw& d : s->info().draws) {
        draws.append(py::dict(py::arg("site") = std::string(d.site),
                              py::arg("events") = std::string(d.events)));
      }
      strategies.append(py::dict(py::arg("name") = std::string(s->name()),
                                 py::arg("doc") = std::string(s->info().doc),
                                 py::arg("needs") = requirements_of(*s), py::arg("draws") = draws));
    }
    slots.append(py::dict(py::arg("key") = std::string(o.key), py::arg("doc") = std::string(o.doc),
                          py::arg("default") = attention::default_value(o),
                          py::arg("strategies") = strategies));
  }
  for (const attention::Mitigation& m : attention::mitigations()) {
    mitigations.append(
        py::dict(py::arg("name") = std::string(m.name), py::arg("doc") = std::string(m.doc)));
  }
  return py::dict(py::arg("presets") = presets, py::arg("slots") = slots,
                  py::arg("parameters") = parameters, py::arg("mitigations") = mitigations);
}

}  // namespace

void bind_numerics(py::module_& m) {
  m.def("numerics_reference", &reference,
        "The kernel models, the slots with their strategies (what each computes, needs and "
        "draws), the parameters and the mitigations a numerics spec can name: the registries "
        "`simprec numerics --list` prints.");
  m.def(
      "canonical_numerics",
      [](const std::string& spec, const std::string& format) {
        return attention::canonical_numerics(attention::parse_numerics(spec, parse_format(format)));
      },
      py::arg("spec"), py::arg("format") = "bf16",
      "The canonical form of a numerics spec, as `simprec numerics SPEC` prints it; raises "
      "ValueError for a spec a run would refuse.");
}

}  // namespace simprec::python
