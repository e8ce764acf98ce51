// A case from arrays a kernel was run on and returned (the CLI's .npy files, Python's numpy
// arrays): both read the arrays the same way, so that `simprec discover` and simprec.discover
// search the same case.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lib/discover/evidence.hpp"
#include "lib/npy/npy.hpp"

namespace simprec::discover {

struct RecordedArrays {
  std::string label;
  // [..., S, D]: float32/float64 values of input_format, or uint16/uint8 encodings of it; the
  // leading dimensions are batch and heads as lib/inputs reads them.
  const NpyArray* q = nullptr;
  const NpyArray* k = nullptr;
  const NpyArray* v = nullptr;
  const NpyArray* d_out = nullptr;
  // O, LSE, dQ, dK, dV: float32/float64 values (fp32, fp64), or uint16/uint8 encodings of
  // output_format (default: the input format); one row per query (key for dK, dV), or one per
  // entry of rows (key_rows).
  std::map<std::string, const NpyArray*> outputs;
  const NpyArray* rows = nullptr;      // int64/int32 query rows O, LSE and dQ hold
  const NpyArray* key_rows = nullptr;  // the key rows dK and dV hold
  std::string input_format;
  std::string output_format;  // empty: the input format
  bool causal = false;
  std::optional<double> scale;
  std::vector<std::string> given;
};

// Throws std::invalid_argument naming the array and what does not fit.
Case recorded_case(const RecordedArrays& arrays);

}  // namespace simprec::discover
