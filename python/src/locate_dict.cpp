#include "python/src/locate_dict.hpp"

#include <pybind11/stl.h>

#include <string>

namespace py = pybind11;

namespace simprec::python {
namespace {

py::object optional_int(const std::optional<int64_t>& x) {
  return x ? py::object(py::int_(*x)) : py::object(py::none());
}

py::dict difference_dict(const validate::FirstDifference& d) {
  py::dict r;
  r["output"] = d.output;
  r["index"] = d.index;
  r["problem"] = d.problem;
  r["b"] = d.b;
  r["h"] = d.h;
  r["row"] = d.row;
  r["column"] = optional_int(d.column);
  r["kernel"] = d.kernel;
  r["emulation"] = d.emulation;
  r["kernel_bits"] = d.kernel_bits;
  r["emulation_bits"] = d.emulation_bits;
  r["ulp"] = optional_int(d.ulps);
  r["differing"] = d.differing;
  r["row_differing"] = d.row_differing;
  return r;
}

py::dict agreement_dict(const validate::Agreement& a) {
  py::dict r;
  r["row_agrees"] = a.row_agrees;
  r["rows_agreeing"] = a.agreeing;
  r["rows"] = a.rows;
  py::dict outputs;
  for (const auto& o : a.outputs) outputs[py::str(o.output)] = py::make_tuple(o.agreeing, o.rows);
  r["outputs"] = outputs;
  return r;
}

// (site, value rounded, result) per rounding.
py::list steps_list(const std::vector<attention::ProbedRounding>& steps) {
  py::list r;
  for (const auto& s : steps) {
    r.append(py::make_tuple(std::string(attention::site_name(s.site)), s.exact, s.value));
  }
  return r;
}

py::dict probe_dict(const attention::RowProbe& probe) {
  py::list blocks;
  for (const attention::ProbedBlock& b : probe.blocks) {
    py::dict d;
    d["tile"] = b.tile;
    d["split"] = b.split;
    d["first_key"] = b.first_key;
    d["keys"] = b.keys;
    d["m_old"] = b.m_old;
    d["m_block"] = b.m_block;
    d["m"] = b.m_new;
    d["shift"] = b.shift;
    d["rescaled"] = b.rescaled;
    d["alpha"] = b.alpha;
    d["alpha_steps"] = steps_list(b.alpha_steps);
    d["l"] = b.l;
    d["acc"] = b.acc;
    py::list keys;
    for (const attention::ProbedKey& k : b.key_values) {
      py::dict key;
      key["key"] = k.key;
      key["s"] = k.score;
      key["steps"] = steps_list(k.steps);
      key["p"] = k.p;
      key["p_cast"] = k.p_cast;
      keys.append(key);
    }
    d["key_values"] = keys;
    blocks.append(d);
  }
  py::dict r;
  r["blocks"] = blocks;
  r["l"] = probe.l;
  r["o_norm"] = probe.o_norm;
  r["o"] = probe.o;
  r["lse"] = probe.lse;
  r["lse_steps"] = steps_list(probe.lse_steps);
  return r;
}

}  // namespace

py::dict locate_dict(const validate::LocateReport& report) {
  py::dict r;
  py::list differences;
  for (const auto& d : report.differences) differences.append(difference_dict(d));
  r["differences"] = differences;
  r["row"] = py::none();
  r["probe"] = py::none();
  r["model"] = py::none();
  py::list alternatives;
  if (report.located) {
    py::dict row = difference_dict(*report.located);
    row["rows"] = report.key_row ? "key" : "query";
    r["row"] = row;
    if (report.probe) r["probe"] = probe_dict(*report.probe);
    r["model"] = agreement_dict(report.model);
    for (const auto& a : report.alternatives) {
      py::dict d = agreement_dict(a.agreement);
      d["option"] = a.option;
      d["kind"] = a.kind == validate::Alternative::Kind::kSlot        ? "slot"
                  : a.kind == validate::Alternative::Kind::kParameter ? "parameter"
                                                                      : "site";
      d["value"] = a.value;
      d["changes"] = a.changes;
      alternatives.append(d);
    }
  }
  r["alternatives"] = alternatives;
  r["refused"] = report.refused;
  r["stopped"] =
      report.stopped.empty() ? py::object(py::none()) : py::object(py::str(report.stopped));
  r["untried"] = report.untried;
  return r;
}

}  // namespace simprec::python
