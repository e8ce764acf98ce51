// Emulated attention, forward and backward: standard ("baseline") attention and
// FlashAttention-2 (query tiles Br x key/value tiles Bc, online softmax), rounding at the named
// sites of an AttentionConfig; and the double-precision reference computed on the same inputs.
#pragma once

#include <cstdint>
#include <optional>

#include "lib/attention/config.hpp"
#include "lib/attention/tensors.hpp"

namespace simprec::attention {

// The inputs as rounded at the `input` site (what both the emulation and the reference see).
AttentionInputs round_inputs(const AttentionInputs& inputs, const AttentionConfig& config);
// The same for the fp64 reference, which needs finite values: throws std::invalid_argument naming
// the input site's rounding where it takes a finite input out of its format's range. (The
// emulation itself takes such an infinity through every site, as a kernel would.)
AttentionInputs round_inputs_for_reference(const AttentionInputs& inputs,
                                           const AttentionConfig& config);

// How run_attention may compute: kAllowed takes the float fast path (float_flash.hpp) for the
// configurations it computes bit-identically (the fp32 preset); kSiteBySite rounds site by site
// everywhere, for tests of that fast path.
enum class FastPath : uint8_t { kAllowed, kSiteBySite };

struct RowProbe;

// How run_attention runs, beyond the configuration.
struct RunOptions {
  FastPath fast_path = FastPath::kAllowed;
  // Only this problem (batch x heads index) is computed, with the random indices and input
  // scales of the whole run; the other problems' outputs stay 0. None: every problem.
  std::optional<int64_t> only_problem;
  // A query row whose forward pass is recorded (row_probe.hpp); its problem is computed site by
  // site. nullptr: none.
  RowProbe* probe = nullptr;
};

// Runs the configured algorithm on `inputs` (rounded at the input site first). Parallel over
// batch x heads with config.threads threads; bit-identical for any thread count, and for any
// options (a probe or one problem changes no value computed).
AttentionOutputs run_attention(const AttentionInputs& inputs, const AttentionConfig& config,
                               const RunOptions& options);
inline AttentionOutputs run_attention(const AttentionInputs& inputs, const AttentionConfig& config,
                                      FastPath fast_path = FastPath::kAllowed) {
  RunOptions options;
  options.fast_path = fast_path;
  return run_attention(inputs, config, options);
}

// run_attention with the functions the caller supplies (device_function.hpp): runs, evaluates the
// arguments each function's table lacked in one call of that function, adds them to a copy of
// its table in config.device_tables (or a new one) and runs again until a run misses nothing (a
// forward pass needs 2 runs; a backward pass that recomputes the LSE 3, and more where one
// function's arguments depend on another's values). Each run takes `options`. Throws
// std::runtime_error when a function answers with the wrong count or after max_runs runs that
// still miss arguments.
AttentionOutputs run_attention_with_device_functions(const AttentionInputs& inputs,
                                                     const AttentionConfig& config,
                                                     const DeviceFunctions& functions,
                                                     int max_runs = 8,
                                                     const RunOptions& options = {});

// Standard attention in double: scores and products by compensated dot products (twice the
// working precision, Ogita-Rump-Oishi Dot2), exp, log and tanh from libm, the masking's score
// modifications and the group sums of grouped-query attention in double. Its relative error is
// ~1e-16, far below any emulated format. `inputs` are used as given (round them first).
AttentionOutputs reference_attention(const AttentionInputs& inputs, double scale, bool causal,
                                     unsigned threads = 0, const Masking& masking = {});

}  // namespace simprec::attention
