// Not a test: the device_math strategies' functions over every fp32 argument, as digests
// (tests/device_function_digests.hpp), against the functions measured on the GPU and its CPU.
//
//   device_function_digests check [DATA_FILE [MEASURED ...]]
//       every chunk the data file (default tests/data/device_math/h200_function_digests.txt)
//       lists, for each measured function (or those named: cu_exp, np_log, ...): the model's
//       digests summed and compared with the measured sum. One line per function; exit 1 if any
//       differs. Minutes per function on two cores.
//   device_function_digests model STRATEGY FUNCTION OUT [STEP]
//       the model's digest of every STEP-th chunk (default every chunk; 65,536 chunks, 256 for
//       div) into OUT: the little-endian uint64 digests, then one byte per chunk, 1 where the
//       model has a value for every argument, 0 where it lacks one, 2 for a chunk not computed
//       (scripts/device_functions/digest_table.py compares them with measure.py's).
//   device_function_digests misrounded STRATEGY FUNCTION [FIRST LAST]
//       how many fp32 arguments with bit patterns in [FIRST, LAST] (hex; default all) the
//       strategy's exp, exp2, log or log2 differs at from the correctly rounded fp32 value
//       (emulation/elementary.hpp; any NaN equal to any NaN), and how many it has no value for.
#include <algorithm>
#include <atomic>
#include <bit>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <thread>

#include "emulation/elementary.hpp"
#include "emulation/format.hpp"
#include "tests/device_function_digests.hpp"

using namespace simprec;

namespace {

// f(chunk) for every chunk in `chunks`, on every core.
void for_chunks(const std::vector<uint32_t>& chunks, const std::function<void(size_t)>& f) {
  std::atomic<size_t> next{0};
  const auto work = [&] {
    for (size_t i = next++; i < chunks.size(); i = next++) f(i);
  };
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < std::max(1u, std::thread::hardware_concurrency()); ++t)
    threads.emplace_back(work);
  for (auto& t : threads) t.join();
}

int model(const std::string& strategy, const std::string& function, const std::string& path,
          uint32_t step) {
  const uint32_t count = function == "div" ? 256 : 65536;
  std::vector<uint32_t> chunks;
  for (uint32_t c = 0; c < count; c += step) chunks.push_back(c);
  std::vector<uint64_t> digests(count);
  std::vector<uint8_t> modelled(count, 2);
  const testing::Model m = testing::make_model(strategy, function);
  for_chunks(chunks, [&](size_t i) {
    const std::optional<uint64_t> d = testing::chunk_digest(m, function == "div", chunks[i]);
    digests[chunks[i]] = d.value_or(0);
    modelled[chunks[i]] = d.has_value();
  });
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(digests.data()), digests.size() * sizeof(uint64_t));
  out.write(reinterpret_cast<const char*>(modelled.data()), modelled.size());
  if (!out) {
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
    return 2;
  }
  return 0;
}

// The correctly rounded fp32 `function` of x (exp, exp2, log, log2; fast_log is log).
float correctly_rounded(const std::string& function, float x) {
  if (function == "exp") return exp_fp32(x);
  if (function == "exp2") return exp2_fp32(x);
  RoundingContext ctx(formats::fp32);
  const uint64_t bits = function == "log2" ? log2_of(ctx, x) : log_of(ctx, x);
  return std::bit_cast<float>(static_cast<uint32_t>(bits));
}

int misrounded(const std::string& strategy, const std::string& function, uint32_t first,
               uint32_t last) {
  if (function != "exp" && function != "exp2" && function != "log" && function != "log2" &&
      function != "fast_log") {
    std::fprintf(stderr, "misrounded: exp, exp2, log, fast_log or log2, not %s\n",
                 function.c_str());
    return 2;
  }
  const testing::Model m = testing::make_model(strategy, function);
  std::vector<uint32_t> blocks;  // of 2^16 arguments, the last one partial
  for (uint64_t b = first; b <= last; b += 65536) blocks.push_back(static_cast<uint32_t>(b));
  std::atomic<uint64_t> differ{0}, unmodelled{0}, first_differ{UINT64_MAX};
  for_chunks(blocks, [&](size_t i) {
    const uint64_t end = std::min<uint64_t>(uint64_t{blocks[i]} + 65536, uint64_t{last} + 1);
    uint64_t d = 0, u = 0, f = UINT64_MAX;
    for (uint64_t b = blocks[i]; b < end; ++b) {
      const float x = std::bit_cast<float>(static_cast<uint32_t>(b));
      if (std::isnan(x)) continue;
      const std::optional<float> y = m(x, 1.0f);
      if (!y) {
        ++u;
        continue;
      }
      const float want = correctly_rounded(function, x);
      const bool same = std::bit_cast<uint32_t>(*y) == std::bit_cast<uint32_t>(want) ||
                        (std::isnan(*y) && std::isnan(want));
      if (!same) {
        ++d;
        f = std::min(f, b);
      }
    }
    differ += d;
    unmodelled += u;
    uint64_t seen = first_differ.load();
    while (f < seen && !first_differ.compare_exchange_weak(seen, f)) {
    }
  });
  std::printf("%s %s on [0x%08x, 0x%08x] (%" PRIu64 " arguments, NaN skipped): %" PRIu64
              " differ from the correctly rounded fp32, %" PRIu64 " unmodelled",
              strategy.c_str(), function.c_str(), first, last, uint64_t{last} - first + 1,
              differ.load(), unmodelled.load());
  if (differ.load()) std::printf(", first at 0x%08" PRIx64, first_differ.load());
  std::printf("\n");
  return 0;
}

int check(const std::string& path, const std::vector<std::string>& only) {
  bool all_equal = true;
  for (const testing::MeasuredFunction& f : testing::read_measured_functions(path)) {
    if (!only.empty() && std::find(only.begin(), only.end(), f.measured) == only.end()) continue;
    std::vector<uint32_t> chunks;
    for (const testing::ChunkRange& r : f.chunks) {
      for (uint64_t c = r.first; c <= r.last; c += r.step)
        chunks.push_back(static_cast<uint32_t>(c));
    }
    std::atomic<uint64_t> total{0};
    std::atomic<bool> unmodelled{false};
    const testing::Model m = testing::make_model(f.strategy, f.function);
    for_chunks(chunks, [&](size_t i) {
      const auto d = testing::chunk_digest(m, f.function == "div", chunks[i]);
      if (!d) unmodelled = true;
      total += d.value_or(0);
    });
    const bool equal = !unmodelled && total == f.total;
    all_equal = all_equal && equal;
    std::printf("%-12s %s %s: %zu chunks of 2^16 %s: %s\n", f.measured.c_str(), f.strategy.c_str(),
                f.function.c_str(), chunks.size(), f.function == "div" ? "pairs" : "arguments",
                unmodelled ? "UNMODELLED ARGUMENTS"
                : equal    ? "equal"
                           : "DIFFERENT");
    std::fflush(stdout);
  }
  return all_equal ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  try {
    if ((args.size() == 4 || args.size() == 5) && args[0] == "model") {
      const uint32_t step = args.size() == 5 ? std::stoul(args[4]) : 1;
      if (step < 1 || step > 65536) throw std::invalid_argument("STEP must be in [1, 65536]");
      return model(args[1], args[2], args[3], step);
    }
    if ((args.size() == 3 || args.size() == 5) && args[0] == "misrounded") {
      const uint32_t first = args.size() == 5 ? std::stoul(args[3], nullptr, 16) : 0;
      const uint32_t last = args.size() == 5 ? std::stoul(args[4], nullptr, 16) : UINT32_MAX;
      return misrounded(args[1], args[2], first, last);
    }
    if (!args.empty() && args[0] == "check") {
      const std::string path = args.size() > 1
                                   ? args[1]
                                   : std::string(SIMPREC_SOURCE_DIR) +
                                         "/tests/data/device_math/h200_function_digests.txt";
      return check(path, std::vector<std::string>(args.begin() + std::min<size_t>(2, args.size()),
                                                  args.end()));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "device_function_digests: %s\n", e.what());
    return 2;
  }
  std::fprintf(stderr,
               "usage: device_function_digests check [DATA_FILE [MEASURED ...]]\n"
               "       device_function_digests model STRATEGY FUNCTION OUT [STEP]\n"
               "       device_function_digests misrounded STRATEGY FUNCTION [FIRST LAST]\n");
  return 2;
}
