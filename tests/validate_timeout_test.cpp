// validate's time limit covers the host's side too: the emulation of a kernel that outlives it
// is stopped at its next cancellation point (an item of a parallel loop) with an error that says
// so, and the plugin's own steps keep their limit. A stand-in emulator, registered for matmul
// kernels in this test program only, takes at most 20 s without the limit, so that a
// regression fails rather than hangs.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "emulation/cancellation.hpp"
#include "emulation/parallel.hpp"
#include "lib/validate/kernel_emulation.hpp"
#include "lib/validate/validation.hpp"
#include "lib/validate/validation_inputs.hpp"
#include "plugins/host/plugin.hpp"

namespace simprec::validate {
namespace {

using Clock = std::chrono::steady_clock;

// 2000 items of 10 ms on one thread: 20 s.
void slow_emulation(const EmulationCall&, std::vector<plugins::HostTensor>&) {
  parallel_for(2000, 1,
               [](int64_t) { std::this_thread::sleep_for(std::chrono::milliseconds(10)); });
}

TEST(ValidateTimeout, CoversTheHostsEmulation) {
  register_kernel_emulator(plugins::KernelKind::kMatmul, slow_emulation);
  for (const auto isolation : {plugins::Isolation::kInProcess, plugins::Isolation::kOutOfProcess}) {
    plugins::OpenOptions options;
    options.isolation = isolation;
    options.runner = SIMPREC_TEST_RUNNER;
    options.timeout = std::chrono::milliseconds(300);
    const auto plugin = plugins::open_plugin(SIMPREC_TEST_PLUGIN_DIR "/cpu_reference.so", options);
    InputChoices choices;
    choices.dimensions = {{"M", 4}, {"N", 4}, {"K", 4}};
    const auto request = make_validation_request(plugin->info().kernel("gemm_f32"), choices);
    const auto start = Clock::now();
    try {
      ValidationOptions validation;
      validation.time_limit = options.timeout;
      validate_kernel(*plugin, request, validation);
      ADD_FAILURE() << "the emulation ran to its end";
    } catch (const Cancelled& e) {
      EXPECT_EQ(std::string(e.what()),
                "simprec's emulation of kernel 'gemm_f32' (model sequential) did not finish "
                "within 0.3 s and was stopped");
    }
    // Generous: it stops 10 ms after the limit.
    EXPECT_LT(Clock::now() - start, std::chrono::seconds(10));
  }
}

}  // namespace
}  // namespace simprec::validate
