// Attention inputs: synthetic generators (each batch entry an independent draw) and .npy loading.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "emulation/format.hpp"
#include "lib/attention/attention.hpp"
#include "lib/npy/npy.hpp"

namespace simprec::inputs {

// normal:       Q, K, V, dO ~ N(0, 1).
// peaky:        as normal, with Q scaled by `peak` (scores `peak` times larger).
// repeated-max: keys are copies of `prototypes` random directions (32: about two copies of each
//               in every 64-key block), so every score row holds its max several times exactly; Q_i
//               = c_i * (its prototype, norm sqrt(d)) + small noise, c_i uniform in concentration *
//               [0.5, 1.5], so attention concentrates on those copies; V ~ N(-1, 0.25) (a common
//               sign); dO ~ N(1, 0.5).
// low-rank:     Q and K share a dominant direction u (Q = 2u + N(0, 0.5), K = 2u + N(0, 0.5)), V
//               ~ N(1, 0.25), dO ~ N(0, 1).
// sinks:        as normal, with key 0 aligned to a direction every query shares (an attention
//               sink holding most of the weight) and V_0 small.
// outliers:     as normal, with K's channels shifted by a bias N(0, 4) shared by every key, the
//               last head of each draw (when H > 1) an outlier head (K times `peak`, Q divided
//               by it: the same scores) and V of the 64 keys from Nk/2 on times `peak`: inputs
//               for quantisation scales (docs/fp8_attention.md).
struct GeneratorParams {
  double peak = 4.0;
  int prototypes = 32;
  double concentration = 3.0;
};

std::vector<std::string> generator_kinds();

// Parameters by name, as the command line (--gen-param) and experiment files ([inputs.X.options])
// give them: peak and concentration finite and positive, prototypes an integer in
// [1, kMaxPrototypes]. Throws std::invalid_argument naming the parameter and its value.
inline constexpr int kMaxPrototypes = 1 << 20;
GeneratorParams generator_params(const std::map<std::string, double>& values);

// Shape (batch, heads, nq, nk, d) with dv = d. with_grad: also dO. Each tensor has its own
// random stream: the values of one do not depend on the other's length.
attention::AttentionInputs generate(std::string_view kind, const attention::AttentionShape& shape,
                                    uint64_t seed, bool with_grad,
                                    const GeneratorParams& params = {});

// Loads Q, K, V (and dO) from .npy files of shape (..., N, d): float32/float64 values, or with
// `bits_format` (bf16/fp16/...) uint16/uint8 bit patterns of that format. Leading dimensions
// become batch (all but the last of them) and heads (the last); shapes must agree.
// Throws std::runtime_error / std::invalid_argument with the file and what is wrong.
attention::AttentionInputs load_inputs(const std::filesystem::path& q,
                                       const std::filesystem::path& k,
                                       const std::filesystem::path& v,
                                       const std::optional<std::filesystem::path>& d_out,
                                       const std::optional<Format>& bits_format);

// An array and the name its errors give it (a file name, an argument name).
struct LabelledArray {
  const NpyArray* array;
  std::string label;
};
// What loading does with a NaN or an infinite value: the CLI refuses them (its inputs are files
// meant to hold finite data); the Python package lets them through, as SDPA does, for the
// emulation to propagate as its arithmetic does.
enum class NonFiniteInputs { kRefuse, kAllow };
// load_inputs on arrays already in memory.
attention::AttentionInputs inputs_from_arrays(
    const LabelledArray& q, const LabelledArray& k, const LabelledArray& v,
    const std::optional<LabelledArray>& d_out, const std::optional<Format>& bits_format,
    NonFiniteInputs non_finite = NonFiniteInputs::kRefuse);

}  // namespace simprec::inputs
