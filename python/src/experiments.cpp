// Running an experiment file as `simprec run` does: the same validation, the same resumable
// results folder, report and verdict.
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include "lib/config/toml_reader.hpp"
#include "lib/experiments/attention_backend.hpp"
#include "lib/experiments/memory_plan.hpp"
#include "lib/experiments/results_store.hpp"
#include "lib/experiments/runner.hpp"
#include "lib/limits/output_folder.hpp"
#include "lib/reports/report.hpp"
#include "python/src/arguments.hpp"
#include "python/src/bindings.hpp"
#include "python/src/integer_arguments.hpp"

namespace py = pybind11;

namespace simprec::python {
namespace {

py::dict run_experiment_file(const std::string& file, const std::optional<std::string>& out,
                             bool force, bool quiet, ThreadCount threads, int64_t max_cases,
                             bool check, const py::object& max_memory) {
  if (out) {
    try {
      limits::check_output_path("out", *out);
    } catch (const std::invalid_argument& e) {
      throw py::value_error(e.what());
    }
  }
  const experiments::AttentionBackend backend;
  experiments::ExperimentSpec spec;
  std::vector<experiments::Case> cases;
  try {
    spec = experiments::load_experiment(file, backend);
    if (max_cases > 0) spec.max_cases = max_cases;
    cases = experiments::expand_cases(spec, backend);
  } catch (const config::ConfigError& e) {
    throw py::value_error(e.what());
  }
  // The memory bound, checked for every case before any runs (and by check=True).
  experiments::RunOptions options;
  const limits::MemoryLimit limit = memory_limit_argument(max_memory);
  try {
    experiments::plan_case_memory(cases, backend, limit, options);
  } catch (const std::invalid_argument& e) {
    raise_memory_error(file + ": " + e.what());
  }
  py::dict r;
  r["cases"] = cases.size();
  if (check) return r;
  options.out = out ? std::filesystem::path(*out) : std::filesystem::path(spec.name);
  options.force = force;
  options.quiet = quiet;
  options.threads = threads.value;
  experiments::RunSummary summary;
  reports::ReportFiles files;
  std::vector<std::string> verdict;
  {
    py::gil_scoped_release release;
    summary = experiments::run_experiment(spec, cases, backend, options);
    if (!summary.interrupted) {
      files = reports::write_report(options.out);
      verdict = reports::verdict(experiments::read_results(options.out));
    }
  }
  if (summary.interrupted) {
    PyErr_SetString(PyExc_KeyboardInterrupt,
                    "simprec run interrupted; run the same call again to resume");
    throw py::error_already_set();
  }
  r["out"] = options.out;
  r["total"] = summary.total;
  r["skipped"] = summary.skipped;
  r["ran"] = summary.ran;
  r["failed"] = summary.failed;
  r["report"] = files.markdown;
  r["summary"] = files.csv;
  r["plots"] = files.plots;
  r["verdict"] = verdict;
  return r;
}

}  // namespace

void bind_experiments(py::module_& m) {
  m.def("run_experiment", &run_experiment_file, py::arg("file"), py::kw_only(),
        py::arg("out") = py::none(), py::arg("force") = false, py::arg("quiet") = true,
        py::arg("threads") = 0, py::arg("max_cases") = 0, py::arg("check") = false,
        py::arg("max_memory") = py::none(),
        "Runs an experiment file as `simprec run` does; returns the counts, the report's files "
        "and the verdict.");
}

}  // namespace simprec::python
