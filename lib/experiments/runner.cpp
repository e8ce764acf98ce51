#include "lib/experiments/runner.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <exception>
#include <thread>

#include "emulation/parallel.hpp"
#include "lib/experiments/progress.hpp"
#include "lib/experiments/results_store.hpp"

namespace simprec::experiments {
namespace {

std::atomic<int> g_stop_requests{0};

extern "C" void on_stop_signal(int) {
  if (g_stop_requests.fetch_add(1) >= 1) {
    constexpr char kMessage[] =
        "\nsimprec run: abandoned the cases in flight; run again to resume\n";
    [[maybe_unused]] auto n = ::write(STDERR_FILENO, kMessage, sizeof kMessage - 1);
    ::_exit(130);
  }
}

// Installs the handlers for the duration of a run.
class StopSignals {
 public:
  StopSignals() {
    g_stop_requests = 0;
    struct sigaction action {};
    action.sa_handler = on_stop_signal;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &old_int_);
    sigaction(SIGTERM, &action, &old_term_);
  }
  ~StopSignals() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  bool requested() const { return g_stop_requests.load() > 0; }

 private:
  struct sigaction old_int_ {
  }, old_term_{};
};

// How many cases run at once in this process, and the threads each gets.
struct Concurrency {
  unsigned cases = 1, threads_per_case = 1;
};

Concurrency plan_concurrency(const RunOptions& options, size_t cases) {
  const unsigned cores = resolve_threads(options.threads);
  // No more cases at once than the memory bound allows (each case's estimate at most
  // options.case_memory_bytes).
  size_t concurrent = cores;
  if (options.case_memory_bytes > 0)
    concurrent = std::max<size_t>(1, options.memory_limit_bytes / options.case_memory_bytes);
  const unsigned workers =
      static_cast<unsigned>(std::min<size_t>({cores, concurrent, std::max<size_t>(1, cases)}));
  // Cores left over when there are fewer cases than cores go to each case's own threads.
  return {workers, std::max(1u, cores / workers)};
}

nlohmann::json run_one_case(const ExperimentSpec& spec, const Case& c, const CaseBackend& backend,
                            unsigned threads) {
  const auto start = std::chrono::steady_clock::now();
  nlohmann::json record = {{"case_id", c.id},
                           {"case_index", c.index},
                           {"label", c.label()},
                           {"experiment", spec.name},
                           {"simprec_version", SIMPREC_VERSION},
                           {"params", c.params}};
  try {
    record["results"] = backend.run_case(c.params, threads);
  } catch (const std::exception& e) {
    record["error"] = e.what();
  }
  record["elapsed_s"] =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return record;
}

// Runs the cases next_case() gives, concurrency.cases at a time, until none is left or a stop
// is requested, and hands each record to finished().
void run_cases(const ExperimentSpec& spec, const std::vector<Case>& cases,
               const CaseBackend& backend, Concurrency concurrency, const StopSignals& signals,
               const std::function<std::optional<size_t>()>& next_case,
               const std::function<void(const nlohmann::json&)>& finished) {
  parallel_for(concurrency.cases, concurrency.cases, [&](int64_t) {
    while (!signals.requested()) {
      const std::optional<size_t> i = next_case();
      if (!i) return;
      finished(run_one_case(spec, cases.at(*i), backend, concurrency.threads_per_case));
    }
  });
}

}  // namespace

RunSummary run_experiment(const ExperimentSpec& spec, const std::vector<Case>& cases,
                          const CaseBackend& backend, const RunOptions& options,
                          OtherProcesses* others) {
  ResultsStore store(options.out, spec, options.force);
  const std::string skipped = skipped_lines_text(options.out / "results.jsonl", store.skipped());
  std::vector<size_t> todo;
  for (size_t i = 0; i < cases.size(); ++i) {
    if (!store.finished().count(cases[i].id)) todo.push_back(i);
  }
  RunSummary summary;
  summary.total = cases.size();
  summary.skipped = cases.size() - todo.size();
  Progress progress(cases.size(), summary.skipped, options.quiet);
  // Reported even when quiet: records the run will not use.
  if (!skipped.empty()) {
    std::fprintf(stderr,
                 "simprec run: %s; those lines are moved to %s, and cases without a good record "
                 "run again\n",
                 skipped.c_str(), (options.out / "results.jsonl.damaged").string().c_str());
  }
  if (!store.previous_suffix().empty()) {
    std::fprintf(stderr,
                 "simprec run: --force: the earlier results are kept as %s and "
                 "experiment.json%s\n",
                 (options.out / ("results.jsonl" + store.previous_suffix())).string().c_str(),
                 store.previous_suffix().c_str());
  }
  if (summary.skipped > 0) {
    progress.message("resuming: " + std::to_string(summary.skipped) + " of " +
                     std::to_string(cases.size()) + " cases already in " +
                     (options.out / "results.jsonl").string());
  }

  StopSignals signals;
  std::atomic<size_t> next{0}, ran{0}, failed{0};
  const auto next_case = [&]() -> std::optional<size_t> {
    if (signals.requested()) return std::nullopt;  // cases not started stay for the next run
    const size_t k = next.fetch_add(1);
    if (k >= todo.size()) return std::nullopt;
    return todo[k];
  };
  const auto finished = [&](const nlohmann::json& record) {
    store.append(record);
    const bool ok = !record.contains("error");
    ++(ok ? ran : failed);
    const std::string label = record.value("label", "?");
    progress.case_finished(label, record.value("elapsed_s", 0.0), !ok);
    if (!ok) progress.message("case " + label + " failed: " + record.value("error", "?"));
  };
  // The other processes are served by a thread of their own: it only passes messages.
  std::exception_ptr serve_error;
  std::thread server;
  if (others) {
    server = std::thread([&] {
      try {
        others->serve(next_case, finished);
      } catch (...) {
        serve_error = std::current_exception();
      }
    });
  }
  try {
    run_cases(spec, cases, backend, plan_concurrency(options, todo.size()), signals, next_case,
              finished);
  } catch (...) {
    // The caller ends the shared run; the server must not outlive what it writes to.
    if (server.joinable()) {
      others->stop();
      server.join();
    }
    throw;
  }
  if (server.joinable()) server.join();
  if (serve_error) std::rethrow_exception(serve_error);
  progress.finish();
  summary.ran = ran;
  summary.failed = failed;
  summary.interrupted = signals.requested() && next.load() < todo.size();
  return summary;
}

size_t run_cases_for_others(const ExperimentSpec& spec, const std::vector<Case>& cases,
                            const CaseBackend& backend, const RunOptions& options,
                            const std::function<std::optional<size_t>()>& next_case,
                            const std::function<void(const nlohmann::json&)>& send) {
  StopSignals signals;
  std::atomic<size_t> ran{0};
  run_cases(spec, cases, backend, plan_concurrency(options, cases.size()), signals, next_case,
            [&](const nlohmann::json& record) {
              send(record);
              ++ran;
            });
  return ran;
}

}  // namespace simprec::experiments
