// simprec run EXPERIMENT.toml: validate the whole file, run its cases in parallel into a
// results folder (resumable), then write the summary, report and plots. Under mpirun (or srun)
// the cases are shared among the ranks (lib/distributed/ranks.hpp).
#include <cstdio>
#include <filesystem>
#include <optional>
#include <stdexcept>

#include "lib/cli/command.hpp"
#include "lib/cli/output_option.hpp"
#include "lib/cli/threads_option.hpp"
#include "lib/config/toml_reader.hpp"
#include "lib/distributed/ranks.hpp"
#include "lib/experiments/attention_backend.hpp"
#include "lib/experiments/memory_plan.hpp"
#include "lib/experiments/results_store.hpp"
#include "lib/experiments/runner.hpp"
#include "lib/limits/memory_bound.hpp"
#include "lib/limits/strict_parse.hpp"
#include "lib/reports/report.hpp"

namespace simprec::cli {
namespace {

struct RunArguments {
  std::string file, out, max_memory;
  bool force = false, quiet = false, validate_only = false;
  unsigned threads = 0;
  int64_t max_cases = 0;
};

int run(const RunArguments& args, distributed::Ranks& ranks) {
  const experiments::AttentionBackend backend;
  experiments::ExperimentSpec spec;
  std::vector<experiments::Case> cases;
  try {
    spec = experiments::load_experiment(args.file, backend);
    if (args.max_cases > 0) spec.max_cases = args.max_cases;
    cases = experiments::expand_cases(spec, backend);
  } catch (const config::ConfigError& e) {
    throw UsageError(e.what());
  }
  // The memory bound, checked for every case before any runs (and by --check).
  experiments::RunOptions options;
  try {
    experiments::plan_case_memory(cases, backend, limits::memory_limit(args.max_memory), options);
  } catch (const std::invalid_argument& e) {
    throw UsageError(args.file + ": " + e.what());
  }
  ranks.agree_on(spec.fingerprint(), "experiment");
  if (args.validate_only) {
    if (ranks.rank() > 0) return 0;
    std::printf("%s: valid, %zu cases\n", args.file.c_str(), cases.size());
    return 0;
  }
  if (args.out.empty()) {
    // The file's stem is the default name; a stem that cannot be a folder needs --out.
    if (const std::string problem = experiments::folder_name_problem(spec.name); !problem.empty()) {
      throw UsageError(args.file + ": the experiment's name '" + limits::excerpt(spec.name) +
                       "' cannot be the output folder (" + problem + "); give --out DIR");
    }
  }
  options.out =
      args.out.empty() ? std::filesystem::path(spec.name) : std::filesystem::path(args.out);
  options.force = args.force;
  options.quiet = args.quiet;
  options.threads = args.threads;
  if (ranks.rank() > 0) {
    experiments::run_cases_for_others(
        spec, cases, backend, options,
        [&]() -> std::optional<size_t> {
          const std::optional<size_t> i = ranks.ask_for_case();
          if (i && *i >= cases.size())
            throw std::runtime_error("MPI rank 0 handed out case " + std::to_string(*i) + " of " +
                                     std::to_string(cases.size()));
          return i;
        },
        [&](const nlohmann::json& record) { ranks.send_record(record); });
    ranks.finish();
    return 0;
  }
  const auto summary = experiments::run_experiment(spec, cases, backend, options,
                                                   ranks.size() > 1 ? &ranks.others() : nullptr);
  if (summary.interrupted) {
    std::fprintf(
        stderr,
        "simprec run: interrupted after %zu new cases; run the same command again to resume\n",
        summary.ran + summary.failed);
    return 130;
  }
  const auto files = reports::write_report(options.out);
  if (!args.quiet) {
    if (!files.skipped_note.empty()) std::printf("%s\n", files.skipped_note.c_str());
    std::printf("%zu cases (%zu already done, %zu run, %zu failed) in %s\n", summary.total,
                summary.skipped, summary.ran, summary.failed, options.out.string().c_str());
    std::printf("report: %s\nsummary: %s\n", files.markdown.string().c_str(),
                files.csv.string().c_str());
    for (const auto& p : files.plots) std::printf("plot: %s\n", p.string().c_str());
    if (!files.plot_note.empty()) std::printf("%s\n", files.plot_note.c_str());
    std::printf("\nverdict:\n");
    for (const auto& line : reports::verdict(experiments::read_results(options.out))) {
      std::printf("- %s\n", line.c_str());
    }
  }
  return summary.failed ? 1 : 0;
}

const RegisterCommand kRegistration([](CLI::App& app) {
  auto* command = app.add_subcommand(
      "run", "Run an experiment file: sweeps, resumable results, report and plots.");
  auto args = std::make_shared<RunArguments>();
  command->add_option("experiment", args->file, "the experiment file (TOML)")->required();
  command
      ->add_option("--out,-o", args->out,
                   "results folder (default: a folder named after the experiment)")
      ->check(output_path());
  command->add_flag("--force", args->force,
                    "start afresh in a folder of a different experiment's results, keeping them "
                    "as results.jsonl.previous[.N]");
  command->add_flag("--quiet,-q", args->quiet, "no progress and no summary");
  add_threads_option(*command, args->threads, "--threads,-j", "threads (default: all cores)");
  command->add_option("--max-cases", args->max_cases,
                      "refuse sweeps with more cases (default: the file's max_cases)");
  command->add_flag("--check", args->validate_only,
                    "only validate the file (and the memory bound) and count its cases");
  command->add_option("--max-memory", args->max_memory,
                      "refuse cases whose estimated memory exceeds SIZE (e.g. 4G; default: the "
                      "machine's physical memory); fewer cases run at once where the limit would "
                      "not hold them all");
  command->callback([args] {
    distributed::Ranks ranks;
    int code = 0;
    try {
      code = run(*args, ranks);
    } catch (const std::exception& e) {
      if (ranks.size() <= 1) throw;
      // The other ranks would wait for this one: the whole job ends.
      std::fprintf(stderr, "simprec: error: (MPI rank %d of %d) %s\n", ranks.rank(), ranks.size(),
                   e.what());
      ranks.abort(dynamic_cast<const UsageError*>(&e) ? 2 : 1);
    }
    if (code != 0) throw ExitStatus{code};
  });
});

}  // namespace
}  // namespace simprec::cli
