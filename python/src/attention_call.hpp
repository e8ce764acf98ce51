// What the attention functions of the module share: the configuration a numerics description
// names and the inputs read from numpy arrays.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <optional>
#include <string>
#include <vector>

#include "lib/attention/attention.hpp"

namespace simprec::python {

// The configuration: `numerics` a numerics spec (lib/attention/numerics_spec.hpp: a preset such
// as "fa2", or "torch-math,p_cast=bf16:rne", or a .toml file) at the default low-precision
// `format`, then the tile, site overrides (`--set`) and mitigations and the call's options,
// exactly as `simprec attention` builds it.
struct ConfigChoices {
  std::string numerics = "fa2";
  std::string format = "bf16";
  std::vector<std::string> sets, mitigations;
  std::optional<std::pair<int, int>> tile;
  bool causal = false;
  std::optional<double> scale;
  uint64_t seed = 0;
  unsigned threads = 0;
  bool trace = false;
};
attention::AttentionConfig attention_config(const ConfigChoices& choices);

// Q, K, V (and dO) from numpy arrays of shape (..., N, d): float32/float64 values or, with
// `input_format`, its encodings (uint16/uint8); NaN and infinite values are taken. `leading`
// gets the leading dimensions.
attention::AttentionInputs attention_inputs(const pybind11::object& q, const pybind11::object& k,
                                            const pybind11::object& v,
                                            const pybind11::object& d_out,
                                            const std::optional<std::string>& input_format,
                                            std::vector<int64_t>& leading);

// Q, K, V and dO's NaN and infinite values: {"q": {"nan": n, "inf": m}, ...} (dO when given).
// They go through: the emulation propagates them as its arithmetic does.
pybind11::dict nonfinite_counts(const attention::AttentionInputs& inputs);

// A float32/float64 array of exactly that shape as doubles (argument named in errors); NaN and
// infinite values are taken.
std::vector<double> values_argument(const pybind11::object& object, const char* argument,
                                    const std::vector<int64_t>& shape);

}  // namespace simprec::python
