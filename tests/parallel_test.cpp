// parallel_for, the one way simprec uses several cores: every item runs once, errors reach the
// caller, nested loops run; and what runs on it (attention, the tensor-core GEMM, bulk
// rounding) gives the same bits on 1, 2, 3 and 7 threads. The experiment runner's invariance is
// tested through the CLI (experiment_cli_test).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "emulation/bulk.hpp"
#include "emulation/cancellation.hpp"
#include "emulation/parallel.hpp"
#include "emulation/tensor_core.hpp"
#include "lib/attention/attention.hpp"
#include "lib/attention/preset.hpp"
#include "lib/inputs/generators.hpp"

namespace simprec {
namespace {

constexpr unsigned kThreadCounts[] = {1, 2, 3, 7};

TEST(ParallelFor, RunsEveryItemOnce) {
  for (const unsigned threads : {0u, 1u, 2u, 3u, 7u}) {
    for (const int64_t count : {0, 1, 5, 1000}) {
      std::vector<std::atomic<int>> runs(static_cast<size_t>(count));
      parallel_for(count, threads, [&](int64_t i) { ++runs[static_cast<size_t>(i)]; });
      for (int64_t i = 0; i < count; ++i)
        ASSERT_EQ(runs[static_cast<size_t>(i)].load(), 1)
            << "threads=" << threads << " count=" << count << " i=" << i;
    }
  }
}

// ctest runs this again with OMP_NUM_THREADS=3 (parallel_test@OMP_NUM_THREADS=3): the default
// then follows it; and with OMP_NUM_THREADS=100000, which is clamped to the bound.
TEST(ParallelFor, ResolvesThreadCounts) {
  EXPECT_EQ(resolve_threads(5), 5u);
  EXPECT_EQ(resolve_threads(1024), 1024u);
  EXPECT_GE(resolve_threads(0), 1u);
  EXPECT_LE(resolve_threads(0), 1024u);
  if (const char* env = std::getenv("OMP_NUM_THREADS")) {
    EXPECT_EQ(resolve_threads(0), std::min(static_cast<unsigned>(std::atoi(env)), 1024u));
  }
}

// Asked for 100000 threads, the OpenMP runtime ended the process; such a count never reaches it.
TEST(ParallelFor, RefusesThreadCountsBeyondTheBound) {
  EXPECT_EQ(kMaxThreads, 1024u);
  for (const unsigned threads : {1025u, 100000u, 4294967295u}) {
    try {
      resolve_threads(threads);
      ADD_FAILURE() << threads << " threads resolved";
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()),
                "a thread count of " + std::to_string(threads) + " is above the limit of 1024");
    }
    int runs = 0;
    EXPECT_THROW(parallel_for(10, threads, [&](int64_t) { ++runs; }), std::invalid_argument);
    EXPECT_EQ(runs, 0);
  }
  // The default follows OMP_NUM_THREADS (parallel_test@OMP_NUM_THREADS=100000 sets it so): on a
  // loop of more items than it, the team is at most the bound, where 100000 threads ended the
  // process (the machine's limit on threads is below that).
  std::atomic<int64_t> runs{0};
  parallel_for(200000, 0, [&](int64_t) { ++runs; });
  EXPECT_EQ(runs.load(), 200000);
}

// Items past the cancelling one wait (a bounded time) until the token is cancelled, so no
// scheduling of the threads lets them finish the loop first: without the wait a thread preempted
// between an item's start and its cancel() left the other threads free to run hundreds of items.
bool wait_until_cancelled(const CancellationToken& token) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!token.requested()) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::yield();
  }
  return true;
}

// A cancelled token stops a loop before its next item, on any thread count, with the token's
// reason; nested loops and serial checks inside items answer to the token of the outer loop.
TEST(Cancellation, StopsALoopBetweenItems) {
  for (const unsigned threads : kThreadCounts) {
    CancellationToken token("stopped on purpose");
    const CancellationScope scope(&token);
    std::atomic<int> runs{0};
    std::atomic<int> waits_timed_out{0};
    try {
      parallel_for(1000, threads, [&](int64_t i) {
        ++runs;
        if (i == 10) token.cancel();
        if (i > 10 && !wait_until_cancelled(token)) ++waits_timed_out;
      });
      ADD_FAILURE() << "threads=" << threads << ": the loop ran to its end";
    } catch (const Cancelled& e) {
      EXPECT_EQ(std::string(e.what()), "stopped on purpose");
    }
    EXPECT_EQ(waits_timed_out.load(), 0) << "threads=" << threads;
    // An item past 10 runs only if its thread took it before the cancel (one per other thread at
    // most). Items below 10 taken before the cancel may still see it and stop.
    EXPECT_LE(runs.load(), 11 + static_cast<int>(threads) - 1) << "threads=" << threads;
  }
}

TEST(Cancellation, ReachesNestedLoopsAndSerialChecks) {
  CancellationToken token("stopped inside");
  const CancellationScope scope(&token);
  std::atomic<int> inner_runs{0};
  EXPECT_THROW(parallel_for(4, 2,
                            [&](int64_t) {
                              parallel_for(100, 2, [&](int64_t j) {
                                ++inner_runs;
                                if (j == 5) token.cancel();
                                if (j > 5) wait_until_cancelled(token);
                                throw_if_cancelled();
                              });
                            }),
               Cancelled);
  // Two outer items at a time, each stopped by its seventh inner item at the latest (the sixth
  // cancels, the seventh waits for it): outer items 3 and 4 never start.
  EXPECT_LE(inner_runs.load(), 2 * (6 + 1));
  // Without a token nothing is ever cancelled.
  const CancellationScope none(nullptr);
  EXPECT_NO_THROW(throw_if_cancelled());
  std::atomic<int> runs{0};
  parallel_for(100, 3, [&](int64_t) { ++runs; });
  EXPECT_EQ(runs.load(), 100);
}

TEST(Cancellation, ADeadlineCancelsByItself) {
  const auto start = std::chrono::steady_clock::now();
  CancellationToken token("too late", start + std::chrono::milliseconds(50));
  const CancellationScope scope(&token);
  // 20 s of items without the deadline.
  EXPECT_THROW(
      parallel_for(2000, 2,
                   [](int64_t) { std::this_thread::sleep_for(std::chrono::milliseconds(10)); }),
      Cancelled);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

// Items 13, 40 and 41 fail: whatever the thread count, item 13's error is the one reported,
// and no item below it is skipped.
TEST(ParallelFor, ReportsTheLowestFailedItem) {
  for (const unsigned threads : kThreadCounts) {
    std::vector<std::atomic<int>> runs(100);
    try {
      parallel_for(100, threads, [&](int64_t i) {
        ++runs[static_cast<size_t>(i)];
        if (i == 13 || i == 40 || i == 41) throw std::runtime_error("item " + std::to_string(i));
      });
      ADD_FAILURE() << "no exception, threads=" << threads;
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(std::string(e.what()), "item 13") << "threads=" << threads;
    }
    for (int i = 0; i <= 13; ++i) EXPECT_EQ(runs[i].load(), 1) << "threads=" << threads;
  }
}

// A loop inside a loop (a sweep's cases, each with its problems) runs every inner item.
TEST(ParallelFor, NestedLoopsRunEveryItem) {
  std::vector<std::atomic<int>> runs(6 * 50);
  parallel_for(6, 3, [&](int64_t outer) {
    parallel_for(50, 2, [&](int64_t inner) { ++runs[static_cast<size_t>(outer * 50 + inner)]; });
  });
  for (const auto& r : runs) ASSERT_EQ(r.load(), 1);
}

// GCC's OpenMP runtime waits forever in a forked child's first parallel region once the
// parent's threads have started; parallel_for runs such a child's loops on one thread.
TEST(ParallelFor, RunsInAChildForkedAfterThreadsStarted) {
  std::atomic<int> parent_runs{0};
  parallel_for(8, 2, [&](int64_t) { ++parent_runs; });
  ASSERT_EQ(parent_runs.load(), 8);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::alarm(60);           // a hung child ends instead of hanging the test
    static int runs[100];  // no allocation after fork
    parallel_for(100, 3, [&](int64_t i) { ++runs[i]; });
    for (const int r : runs)
      if (r != 1) ::_exit(1);
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
}

// Stochastic rounding at several sites (the site-by-site engine), forward and backward, and
// the plain fa2 preset (the float fast path), on 9 problems.
TEST(ThreadCountInvariance, Attention) {
  const auto in = inputs::generate("normal", {3, 3, 33, 33, 8, 8}, 11, true);
  attention::AttentionConfig sr = attention::make_preset("fa2");
  attention::apply_mitigation(sr, "sr-p:12");
  attention::apply_override(sr, "dq_acc=fp32:sr:sequential");
  sr.block_rows = 16;
  sr.block_cols = 16;
  for (attention::AttentionConfig c : {sr, attention::make_preset("fa2")}) {
    c.threads = 1;
    const auto one = attention::run_attention(in, c);
    for (const unsigned threads : kThreadCounts) {
      c.threads = threads;
      const auto out = attention::run_attention(in, c);
      EXPECT_EQ(out.o, one.o) << "threads=" << threads;
      EXPECT_EQ(out.dq, one.dq) << "threads=" << threads;
      EXPECT_EQ(out.dk, one.dk) << "threads=" << threads;
      EXPECT_EQ(out.dv, one.dv) << "threads=" << threads;
    }
  }
}

// The vectorised fast path (bf16) and the integer reference (e4m3) over row counts that do not
// divide evenly among the threads.
TEST(ThreadCountInvariance, TensorCoreGemm) {
  std::mt19937_64 rng(21);
  for (const char* name : {"tc:sm90-mma-bf16", "tc:sm90-mma-e4m3"}) {
    const TensorCoreModel& model = tensor_core_model(name);
    const int m = 29, n = 23, k = 70;
    const uint64_t input_mask = (uint64_t{1} << model.input_a.width()) - 1;  // A's = B's here
    std::vector<uint16_t> a(m * k), b(k * n);
    for (auto& x : a) x = static_cast<uint16_t>(rng() & input_mask);
    for (auto& x : b) x = static_cast<uint16_t>(rng() & input_mask);
    std::vector<uint32_t> c(m * n, 0);
    const std::vector<uint32_t> one = tensor_core_gemm(model, a, b, c, m, n, k, 1);
    for (const unsigned threads : kThreadCounts)
      EXPECT_EQ(tensor_core_gemm(model, a, b, c, m, n, k, threads), one)
          << name << " threads=" << threads;
  }
}

// Long enough (8 x 64 Ki elements) that 7 threads get a chunk each; stochastic rounding, so
// each element's random index matters.
TEST(ThreadCountInvariance, BulkRounding) {
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<float> in(size_t{8} << 16);
  for (auto& x : in) x = normal(rng);
  for (const Format f : {formats::bf16, formats::e5m2}) {
    BulkRounding spec{f, Rounding{RoundingMode::kStochastic, 12}, RandomStream{9, 2}, 77, 1};
    std::vector<uint16_t> bits_one(in.size()), bits(in.size());
    std::vector<float> values_one(in.size()), values(in.size());
    round_to_bits<float, uint16_t>(in, bits_one, spec);
    round_to_values<float>(in, values_one, spec);
    for (const unsigned threads : kThreadCounts) {
      spec.threads = threads;
      round_to_bits<float, uint16_t>(in, bits, spec);
      round_to_values<float>(in, values, spec);
      EXPECT_EQ(bits, bits_one) << f.name() << " threads=" << threads;
      EXPECT_EQ(values, values_one) << f.name() << " threads=" << threads;
    }
  }
}

}  // namespace
}  // namespace simprec
