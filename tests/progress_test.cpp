// What long work reports of its progress (emulation/progress.hpp) and the line that shows it on a
// terminal (lib/progress/terminal_progress.hpp): only the outermost loop's items are counted,
// stages restart the count, and work under no meter counts nothing.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "emulation/parallel.hpp"
#include "emulation/progress.hpp"
#include "lib/progress/terminal_progress.hpp"

namespace {

using simprec::ProgressMeter;
using simprec::ProgressScope;

TEST(Progress, TheOutermostLoopCountsItsItemsAndInnerLoopsDoNot) {
  for (const unsigned threads : {1u, 4u}) {
    ProgressMeter meter;
    std::atomic<int> inner_items{0};
    {
      const ProgressScope counted(&meter);
      simprec::parallel_for(10, threads, [&](int64_t) {
        simprec::parallel_for(5, threads, [&](int64_t) { ++inner_items; });
      });
    }
    EXPECT_EQ(inner_items.load(), 50);
    const auto r = meter.read();
    EXPECT_EQ(r.total, 10) << threads << " threads";
    EXPECT_EQ(r.done, 10) << threads << " threads";
    EXPECT_EQ(r.stage, "");
  }
}

TEST(Progress, LoopsOfAStageAddUpAndANewStageStartsAtZero) {
  ProgressMeter meter;
  const ProgressScope counted(&meter);
  simprec::progress_stage("emulation");
  simprec::parallel_for(3, 1, [](int64_t) {});
  simprec::parallel_for(4, 1, [](int64_t) {});
  auto r = meter.read();
  EXPECT_EQ(r.stage, "emulation");
  EXPECT_EQ(r.done, 7);
  EXPECT_EQ(r.total, 7);
  simprec::progress_stage("fp64 reference");
  r = meter.read();
  EXPECT_EQ(r.stage, "fp64 reference");
  EXPECT_EQ(r.done, 0);
  EXPECT_EQ(r.total, 0);
}

TEST(Progress, WorkUnderNoMeterCountsNothing) {
  ProgressMeter meter;
  {
    const ProgressScope counted(&meter);
    const ProgressScope hidden(nullptr);
    simprec::progress_stage("ignored");
    simprec::parallel_for(6, 2, [](int64_t) {});
  }
  const auto r = meter.read();
  EXPECT_EQ(r.stage, "");
  EXPECT_EQ(r.total, 0);
  EXPECT_EQ(simprec::current_progress(), nullptr);
}

TEST(Progress, AnItemSeesNoMeterOnAnyThread) {
  ProgressMeter meter;
  const ProgressScope counted(&meter);
  std::atomic<int> with_meter{0};
  simprec::parallel_for(8, 4, [&](int64_t) {
    if (simprec::current_progress() != nullptr) ++with_meter;
  });
  EXPECT_EQ(with_meter.load(), 0);
  EXPECT_EQ(simprec::current_progress(), &meter);
}

TEST(TerminalProgressLine, ReadsAsStageCountAndSeconds) {
  using simprec::TerminalProgress;
  EXPECT_EQ(TerminalProgress::line("simprec attention", {"emulation", 3, 8}, 12.4),
            "simprec attention: emulation 3/8, 12 s");
  EXPECT_EQ(TerminalProgress::line("simprec", {"", 0, 0}, 2.6), "simprec: 3 s");
  EXPECT_EQ(TerminalProgress::line("simprec", {"kernel", 0, 0}, 5), "simprec: kernel, 5 s");
  // A stage restarted between the reads of done and total shows at most the total.
  EXPECT_EQ(TerminalProgress::line("simprec", {"baseline", 9, 4}, 7), "simprec: baseline 4/4, 7 s");
}

TEST(TerminalProgressLine, WorkShorterThanTheDelayLeavesNoThreadBehind) {
  // Whether or not stderr is a terminal here, a display destroyed at once returns at once.
  ProgressMeter meter;
  const auto start = std::chrono::steady_clock::now();
  { const simprec::TerminalProgress shown("simprec", meter, true); }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(500));
}

}  // namespace
