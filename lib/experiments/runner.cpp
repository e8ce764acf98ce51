#include "lib/experiments/runner.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <thread>

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

}  // namespace

RunSummary run_experiment(const ExperimentSpec& spec, const std::vector<Case>& cases,
                          const CaseBackend& backend, const RunOptions& options) {
  ResultsStore store(options.out, spec, options.force);
  const std::string skipped = skipped_lines_text(options.out / "results.jsonl", store.skipped());
  std::vector<const Case*> todo;
  for (const auto& c : cases) {
    if (!store.finished().count(c.id)) todo.push_back(&c);
  }
  RunSummary summary;
  summary.total = cases.size();
  summary.skipped = cases.size() - todo.size();
  Progress progress(cases.size(), summary.skipped, options.quiet);
  // Reported even when quiet: records the run will not use.
  if (!skipped.empty())
    std::fprintf(stderr, "simprec run: %s; cases without a good record run again\n",
                 skipped.c_str());
  if (summary.skipped > 0) {
    progress.message("resuming: " + std::to_string(summary.skipped) + " of " +
                     std::to_string(cases.size()) + " cases already in " +
                     (options.out / "results.jsonl").string());
  }
  const unsigned cores =
      options.threads ? options.threads : std::max(1u, std::thread::hardware_concurrency());
  // No more cases at once than the memory bound allows (each case's estimate at most
  // options.case_memory_bytes).
  size_t concurrent = cores;
  if (options.case_memory_bytes > 0)
    concurrent = std::max<size_t>(1, options.memory_limit_bytes / options.case_memory_bytes);
  const unsigned workers = static_cast<unsigned>(
      std::min<size_t>({cores, concurrent, std::max<size_t>(1, todo.size())}));
  // Cores left over when there are fewer cases than cores go to each case's own threads.
  const unsigned inner_threads = std::max(1u, cores / workers);

  StopSignals signals;
  std::atomic<size_t> next{0}, ran{0}, failed{0};
  const auto work = [&] {
    while (!signals.requested()) {
      const size_t i = next.fetch_add(1);
      if (i >= todo.size()) return;
      const Case& c = *todo[i];
      const auto start = std::chrono::steady_clock::now();
      nlohmann::json record = {
          {"case_id", c.id},         {"case_index", c.index},      {"label", c.label()},
          {"experiment", spec.name}, {"simprec_version", "0.1.0"}, {"params", c.params}};
      bool ok = true;
      try {
        record["results"] = backend.run_case(c.params, inner_threads);
      } catch (const std::exception& e) {
        record["error"] = e.what();
        ok = false;
      }
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      record["elapsed_s"] = seconds;
      store.append(record);
      ++(ok ? ran : failed);
      progress.case_finished(c.label(), seconds, !ok);
      if (!ok)
        progress.message("case " + c.label() + " failed: " + record["error"].get<std::string>());
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < workers; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  progress.finish();
  summary.ran = ran;
  summary.failed = failed;
  summary.interrupted = signals.requested() && next.load() < todo.size();
  return summary;
}

}  // namespace simprec::experiments
