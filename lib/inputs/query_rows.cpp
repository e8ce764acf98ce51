#include "lib/inputs/query_rows.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace simprec::inputs {

attention::AttentionShape sampled_shape(attention::AttentionShape shape, int64_t count) {
  if (count < 1) {
    throw std::invalid_argument("query rows: expected a positive count, not " +
                                std::to_string(count));
  }
  shape.nq = std::min(count, shape.nq);
  return shape;
}

limits::MemoryEstimate sampling_memory(const attention::AttentionShape& full) {
  limits::MemoryEstimate m;
  const int64_t rows = full.problems() * full.nk;
  m.add(full.problems() * full.nq * full.d, sizeof(double));  // the full Q
  m.add(rows * (full.d + full.dv), 2 * sizeof(double));       // K and V, and their copies
  return m;
}

attention::AttentionInputs select_query_rows(const attention::AttentionInputs& inputs,
                                             int64_t count) {
  if (inputs.has_grad() || inputs.has_forward()) {
    throw std::invalid_argument(
        "query rows: a sample of query rows is a forward-pass study (dK and dV sum over every "
        "query row); run it without dO");
  }
  const attention::AttentionShape& full = inputs.shape;
  attention::AttentionInputs out;
  out.shape = sampled_shape(full, count);
  out.k = inputs.k;
  out.v = inputs.v;
  const int64_t nq = out.shape.nq, d = full.d;
  out.q.resize(static_cast<size_t>(full.problems() * nq * d));
  for (int64_t p = 0; p < full.problems(); ++p) {
    for (int64_t r = 0; r < nq; ++r) {
      // r * Nq fits: both are at most 2^31 (check_shape).
      const int64_t row = r * full.nq / nq;
      std::copy_n(inputs.q.begin() + (p * full.nq + row) * d, d, out.q.begin() + (p * nq + r) * d);
    }
  }
  return out;
}

}  // namespace simprec::inputs
