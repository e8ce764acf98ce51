// simprec.discover's core: the search of lib/discover on recorded cases (numpy arrays read as the
// CLI reads its .npy files) and on a Python kernel it calls on its probes, with the report of
// `simprec discover`. The search runs without the GIL; the kernel and the log take it back.
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <cstring>
#include <map>
#include <memory>
#include <optional>

#include "lib/discover/agreement.hpp"
#include "lib/discover/discovery.hpp"
#include "lib/discover/recorded_case.hpp"
#include "lib/validate/tensor_values.hpp"
#include "python/src/arguments.hpp"
#include "python/src/bindings.hpp"
#include "python/src/integer_arguments.hpp"
#include "python/src/interruptible.hpp"

namespace py = pybind11;

namespace simprec::python {
namespace {

constexpr const char* kArrayTypes = "float32, float64, uint16, uint8, int64 or int32";

// One recorded case from a dict with q, k, v, [do], outputs {O, LSE, dQ, dK, dV}, [rows],
// [key_rows], input_format, [output_format], [causal], [scale], [given], [label]. The arrays are
// copied as the CLI reads .npy files.
struct PythonCase {
  std::map<std::string, NpyArray> arrays;
  discover::RecordedArrays recorded;
};

std::unique_ptr<PythonCase> python_case(const py::dict& d, size_t index) {
  auto c = std::make_unique<PythonCase>();
  const auto array = [&](const char* key, const std::string& slot) -> const NpyArray* {
    if (!d.contains(key) || d[key].is_none()) return nullptr;
    const std::string name = "cases[" + std::to_string(index) + "]['" + key + "']";
    c->arrays[slot] = npy_copy(array_argument(d[key], name.c_str()), name.c_str(), kArrayTypes);
    return &c->arrays[slot];
  };
  discover::RecordedArrays& r = c->recorded;
  r.label = d.contains("label") ? py::str(d["label"]).cast<std::string>()
                                : "case " + std::to_string(index + 1);
  r.q = array("q", "q");
  r.k = array("k", "k");
  r.v = array("v", "v");
  r.d_out = array("do", "do");
  r.rows = array("rows", "rows");
  r.key_rows = array("key_rows", "key_rows");
  if (d.contains("outputs")) {
    for (const auto& [key, value] : d["outputs"].cast<py::dict>()) {
      const std::string name = py::str(key);
      const std::string label = "cases[" + std::to_string(index) + "]['outputs']['" + name + "']";
      c->arrays["out:" + name] =
          npy_copy(array_argument(value, label.c_str()), label.c_str(), kArrayTypes);
      r.outputs[name] = &c->arrays["out:" + name];
    }
  }
  if (!d.contains("input_format")) throw py::value_error("cases: each needs input_format");
  r.input_format = d["input_format"].cast<std::string>();
  if (d.contains("output_format") && !d["output_format"].is_none())
    r.output_format = d["output_format"].cast<std::string>();
  r.causal = d.contains("causal") && d["causal"].cast<bool>();
  if (d.contains("scale") && !d["scale"].is_none()) r.scale = d["scale"].cast<double>();
  if (d.contains("given")) r.given = d["given"].cast<std::vector<std::string>>();
  return c;
}

py::array encodings(const std::vector<double>& values, const Format& f,
                    const std::vector<int64_t>& shape) {
  plugins::HostTensor t = plugins::HostTensor::zeros("x", f.name(), shape);
  for (size_t i = 0; i < values.size(); ++i)
    validate::set_value(t, static_cast<int64_t>(i), values[i]);
  NpyArray a;
  a.shape = shape;
  a.data = std::move(t.bytes);
  const int width = f.width();
  a.type = width <= 8    ? NpyType::kUint8
           : width <= 16 ? NpyType::kUint16
           : width <= 32 ? NpyType::kFloat32
                         : NpyType::kFloat64;
  return numpy_of(std::move(a));
}

// A Python callable run(q, k, v, causal) -> {name: (array, format)} with q, k, v the encodings
// (uint16/uint8) or values (float32/float64) of the input format, shaped [B, H, S, D].
class PythonKernel final : public discover::CallableKernel {
 public:
  PythonKernel(py::object run, std::string name, std::string format, bool causal)
      : run_(std::make_shared<py::object>(std::move(run))),
        name_(std::move(name)),
        format_(std::move(format)),
        causal_(causal) {}
  ~PythonKernel() override {
    const py::gil_scoped_acquire gil;
    run_.reset();
  }

  std::string description() const override { return "python=" + name_; }
  std::string input_format() const override { return format_; }
  discover::ProbeLimits limits() const override {
    return {[](const std::string&, int64_t wanted) { return wanted; }, causal_};
  }

  discover::Case run(const discover::ProbeDesign& probe,
                     const attention::AttentionInputs& in) override {
    const py::gil_scoped_acquire gil;
    const attention::AttentionShape& s = in.shape;
    const Format f = parse_format(format_);
    discover::Case c;
    c.inputs = in;
    c.input_format = format_;
    c.causal = probe.causal;
    try {
      const py::dict out =
          (*run_)(encodings(in.q, f, {s.batch, s.heads, s.nq, s.d}),
                  encodings(in.k, f, {s.batch, s.heads, s.nk, s.d}),
                  encodings(in.v, f, {s.batch, s.heads, s.nk, s.dv}), probe.causal);
      for (const auto& [key, value] : out) {
        const std::string name = py::str(key);
        const auto pair = value.cast<py::tuple>();
        const std::string format = pair[1].cast<std::string>();
        const py::array a = array_argument(pair[0], ("kernel output " + name).c_str());
        std::vector<int64_t> shape = {s.batch, s.heads, s.nq};
        if (name != "LSE") shape.push_back(s.dv);
        plugins::HostTensor t = plugins::HostTensor::zeros(name, format, shape);
        if (static_cast<size_t>(a.nbytes()) != t.bytes.size()) {
          throw py::value_error("kernel output " + name + ": " + std::to_string(a.nbytes()) +
                                " bytes, expected " + std::to_string(t.bytes.size()) + " (" +
                                format + " " + plugins::shape_text(shape) + ")");
        }
        std::memcpy(t.bytes.data(), a.data(), t.bytes.size());
        c.outputs.push_back({std::move(t), {}});
      }
    } catch (py::error_already_set& e) {
      if (e.matches(PyExc_KeyboardInterrupt)) throw;
      throw discover::ProbeRefused(e.what());
    }
    return c;
  }

 private:
  std::shared_ptr<py::object> run_;
  std::string name_, format_;
  bool causal_;
};

py::dict result_dict(const discover::DiscoveryResult& r) {
  py::dict d;
  d["spec"] = r.spec;
  d["bit_exact"] = r.bit_exact;
  d["stopped"] = r.stopped;
  d["seconds"] = r.seconds;
  d["runs"] = r.runs;
  d["lines"] = r.lines;
  d["ties"] = r.ties;
  py::list cases;
  for (size_t i = 0; i < r.cases.size(); ++i) {
    py::dict c;
    c["label"] = r.cases[i].label;
    py::dict outputs;
    if (i < r.agreement.size()) {
      for (const discover::OutputAgreement& o : r.agreement[i].outputs)
        outputs[py::str(o.name)] = py::make_tuple(o.equal, o.values);
    }
    c["agreement"] = outputs;
    cases.append(c);
  }
  d["cases"] = cases;
  py::list remaining;
  for (const discover::RemainingRow& row : r.remaining) {
    const int64_t heads = r.cases[row.case_index].inputs.shape.heads;
    py::dict x;
    x["case"] = row.case_index;
    x["output"] = row.output;
    x["b"] = row.diff.problem / heads;
    x["h"] = row.diff.problem % heads;
    x["row"] = row.diff.row;
    x["values_differing"] = row.diff.columns;
    x["max_ulps"] = row.diff.max_ulps;
    x["agrees_with"] = row.agrees_with;
    remaining.append(x);
  }
  d["remaining"] = remaining;
  return d;
}

}  // namespace

void bind_discover(py::module_& m) {
  // A spec checked on cases it was not searched on: per case {output: (equal, values)} and the
  // rows that differ.
  m.def(
      "discover_agreement",
      [](const py::list& cases, const std::string& spec) {
        py::list out;
        for (size_t i = 0; i < cases.size(); ++i) {
          const auto held = python_case(cases[i].cast<py::dict>(), i);
          const discover::Case c = discover::recorded_case(held->recorded);
          const discover::CaseAgreement a =
              interruptible([&] { return discover::evaluate_case(spec, c); });
          py::dict outputs, rows;
          for (const discover::OutputAgreement& o : a.outputs) {
            outputs[py::str(o.name)] = py::make_tuple(o.equal, o.values);
            py::list differing;
            for (const discover::RowDiff& r : o.rows) {
              differing.append(py::make_tuple(r.problem / c.inputs.shape.heads,
                                              r.problem % c.inputs.shape.heads, r.row, r.columns,
                                              r.max_ulps));
            }
            rows[py::str(o.name)] = differing;
          }
          py::dict d;
          d["label"] = c.label;
          d["agreement"] = outputs;
          d["rows"] = rows;
          out.append(d);
        }
        return out;
      },
      py::arg("cases"), py::arg("spec"));
  m.def(
      "discover",
      [](const py::list& cases, const py::object& kernel, const std::string& kernel_name,
         const std::optional<std::string>& input_format, bool causal,
         const std::vector<std::string>& families, const std::optional<double>& time_limit,
         ThreadCount threads, size_t max_probes, const py::object& log) {
        std::vector<std::unique_ptr<PythonCase>> held;
        std::vector<discover::Case> evidence;
        for (size_t i = 0; i < cases.size(); ++i) {
          held.push_back(python_case(cases[i].cast<py::dict>(), i));
          evidence.push_back(discover::recorded_case(held.back()->recorded));
        }
        std::unique_ptr<PythonKernel> callable;
        if (!kernel.is_none()) {
          if (!input_format) throw py::value_error("discover: a kernel to call needs input_format");
          callable = std::make_unique<PythonKernel>(kernel, kernel_name, *input_format, causal);
        }
        discover::DiscoverOptions options;
        options.families = families;
        options.time_limit = time_limit;
        options.threads = threads.value;
        options.max_probes = max_probes;
        std::shared_ptr<py::object> logger;
        if (!log.is_none()) {
          logger.reset(new py::object(log), [](py::object* f) {
            const py::gil_scoped_acquire gil;
            delete f;
          });
          options.log = [logger](const std::string& line) {
            const py::gil_scoped_acquire gil;
            (*logger)(line);
          };
        }
        // Its log prints a line per step: sign enough of life, and the progress line would run
        // into it.
        const discover::DiscoveryResult r = interruptible(
            [&] { return discover::discover(std::move(evidence), callable.get(), options); },
            log.is_none());
        return result_dict(r);
      },
      py::arg("cases"), py::arg("kernel") = py::none(), py::kw_only(),
      py::arg("kernel_name") = "kernel", py::arg("input_format") = py::none(),
      py::arg("causal") = false, py::arg("families") = std::vector<std::string>{},
      py::arg("time_limit") = py::none(), py::arg("threads") = 0, py::arg("max_probes") = 32,
      py::arg("log") = py::none());
}

}  // namespace simprec::python
