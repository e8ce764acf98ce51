// A sample of an attention problem's query rows, to emulate long sequences at the cost of a few
// rows: without a causal mask a query row's output depends only on its own row of Q and on K
// and V (flash attention's online softmax and every P.V product are per row), so the sampled
// problem's rows are the full problem's rows.
#pragma once

#include <cstdint>

#include "lib/attention/tensors.hpp"
#include "lib/limits/memory_bound.hpp"

namespace simprec::inputs {

// The rows floor(r * Nq / count), r = 0 .. count - 1, of Q in every problem, with K and V
// unchanged: Nq becomes min(count, Nq). Forward only: throws std::invalid_argument when the
// inputs hold dO or a given forward pass, or count < 1.
attention::AttentionInputs select_query_rows(const attention::AttentionInputs& inputs,
                                             int64_t count);

// The shape select_query_rows gives.
attention::AttentionShape sampled_shape(attention::AttentionShape shape, int64_t count);

// What sampling holds beyond the sampled problem's own estimate: the full Q, K and V it is
// taken from (doubles) and the sample's copies of K and V. `full` passed check_shape.
limits::MemoryEstimate sampling_memory(const attention::AttentionShape& full);

}  // namespace simprec::inputs
