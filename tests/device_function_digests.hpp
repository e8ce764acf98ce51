// Digests of fp32 functions over every argument, as scripts/device_functions/measure.py takes them
// on the GPU and its CPU (scripts/device_functions/README.md), and of the device_math strategy
// that stands for each: for the sampled test (device_math_measured_test.cpp) and the exhaustive
// tool (tools/device_function_digests.cpp). The measured digests live in
// tests/data/device_math/h200_function_digests.txt.
#pragma once

#include <bit>
#include <cstdint>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "emulation/device_math/sm90_mufu.hpp"
#include "lib/attention/device_math_values.hpp"

namespace simprec::testing {

// splitmix64's finaliser.
inline uint64_t mix64(uint64_t z) {
  z ^= z >> 30;
  z *= 0xbf58476d1ce4e5b9ULL;
  z ^= z >> 27;
  z *= 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// One argument (or pair index) and its result: mix64(key << 32 | y), any NaN as 0x7fc00000.
inline uint64_t argument_digest(uint32_t key, float y) {
  uint32_t v = std::bit_cast<uint32_t>(y);
  if ((v & 0x7fffffffu) > 0x7f800000u) v = 0x7fc00000u;
  return mix64((uint64_t{key} << 32) | v);
}

// Division pair i of measure.py: the halves of mix64(2^32 + i), and for odd i both exponents
// replaced by 97 + their low 6 bits (|x|, |y| in [2^-30, 2^34)).
inline std::pair<float, float> division_pair(uint32_t i) {
  const uint64_t z = mix64((uint64_t{1} << 32) + i);
  uint32_t x = static_cast<uint32_t>(z >> 32), y = static_cast<uint32_t>(z);
  if (i & 1) {
    for (uint32_t* v : {&x, &y}) *v = (*v & 0x807fffffu) | ((97 + ((*v >> 23) & 63)) << 23);
  }
  return {std::bit_cast<float>(x), std::bit_cast<float>(y)};
}

// What stands for a measured function: device_math strategy `strategy`'s `function` (x and, for
// div, the divisor y); for strategy "ieee" IEEE's fp32 1.0f / x and x / y (correctly rounded);
// for strategy "ptx" function "ex2.approx.f32" the instruction without .ftz
// (emulation/device_math/sm90_mufu.hpp). Throws std::invalid_argument for an unknown strategy or
// function.
using Model = std::function<std::optional<float>(float x, float y)>;
inline Model make_model(const std::string& strategy, const std::string& function) {
  if (strategy == "ptx") {
    if (function == "ex2.approx.f32")
      return [](float x, float) { return device_math::sm90_ex2_approx(x); };
    throw std::invalid_argument("strategy ptx has ex2.approx.f32 only, not " + function);
  }
  if (strategy == "ieee") {
    if (function == "rcp") return [](float x, float) { return 1.0f / x; };
    if (function == "div") return [](float x, float y) { return x / y; };
    throw std::invalid_argument("strategy ieee has rcp and div only, not " + function);
  }
  const auto& math = attention::find_strategy<attention::DeviceMath>(strategy);
  (void)attention::device_math_value(math, function, 1.0f);  // an unknown name throws
  using M = attention::DeviceMath;
  if (function == "div") return [&math](float x, float y) { return math.div(x, y); };
  std::optional<float> (M::*f)(float) const = function == "exp2"   ? &M::exp2
                                              : function == "exp"  ? &M::exp
                                              : function == "log"  ? &M::log
                                              : function == "log2" ? &M::log2
                                              : function == "rcp"  ? &M::rcp
                                              : function == "tanh" ? &M::tanh
                                                                   : &M::fast_log;
  return [&math, f](float x, float) { return (math.*f)(x); };
}

// The digest of chunk c: arguments c * 2^16 + i (for div: pairs c * 2^16 + i), i < 2^16; nullopt
// where the model has no value for one of them.
inline std::optional<uint64_t> chunk_digest(const Model& model, bool pairs, uint32_t chunk) {
  uint64_t sum = 0;
  for (uint32_t i = 0; i < 65536; ++i) {
    const uint32_t key = (chunk << 16) | i;
    const auto [x, y] = pairs ? division_pair(key) : std::pair{std::bit_cast<float>(key), 1.0f};
    const std::optional<float> v = model(x, y);
    if (!v) return std::nullopt;
    sum += argument_digest(key, *v);
  }
  return sum;
}

// Chunks first, first + step, ... up to last.
struct ChunkRange {
  uint32_t first, last, step;
};

// One measured function (a "function" line and its "sample" lines): the chunks compared (every
// one in them has a value for every argument in the model), the measured digests' sum over them,
// and some chunks' own digests.
struct MeasuredFunction {
  std::string measured, strategy, function;
  std::vector<ChunkRange> chunks;
  uint64_t total = 0;
  std::vector<std::pair<uint32_t, uint64_t>> samples;
};

// Reads the data file (format in its header); throws std::runtime_error naming the line.
inline std::vector<MeasuredFunction> read_measured_functions(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::vector<MeasuredFunction> out;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream s(line);
    std::string kind;
    s >> kind;
    try {
      if (kind == "function") {
        MeasuredFunction f;
        std::string ranges, total;
        s >> f.measured >> f.strategy >> f.function >> ranges >> total;
        f.total = std::stoull(total, nullptr, 16);
        std::istringstream r(ranges);
        std::string range;
        while (std::getline(r, range, ',')) {  // FIRST-LAST or FIRST-LAST/STEP
          const size_t dash = range.find('-'), slash = range.find('/');
          if (dash == std::string::npos) throw std::invalid_argument("chunk range without '-'");
          const ChunkRange c{static_cast<uint32_t>(std::stoul(range.substr(0, dash))),
                             static_cast<uint32_t>(std::stoul(range.substr(dash + 1))),
                             slash == std::string::npos
                                 ? 1u
                                 : static_cast<uint32_t>(std::stoul(range.substr(slash + 1)))};
          if (c.step == 0 || c.last < c.first || c.last > 65535)
            throw std::invalid_argument("bad chunk range '" + range + "'");
          f.chunks.push_back(c);
        }
        out.push_back(std::move(f));
      } else if (kind == "sample" && !out.empty()) {
        std::string chunk, digest;
        s >> chunk >> digest;
        out.back().samples.emplace_back(std::stoul(chunk), std::stoull(digest, nullptr, 16));
      } else {
        throw std::invalid_argument("expected 'function' or 'sample'");
      }
    } catch (const std::exception& e) {
      throw std::runtime_error(path + ":" + std::to_string(number) + ": " + e.what());
    }
  }
  return out;
}

}  // namespace simprec::testing
