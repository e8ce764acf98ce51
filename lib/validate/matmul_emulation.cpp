#include "lib/validate/matmul_emulation.hpp"

#include <algorithm>
#include <stdexcept>

#include "emulation/accumulation.hpp"
#include "emulation/parallel.hpp"
#include "emulation/tensor_core.hpp"
#include "lib/validate/tensor_values.hpp"

namespace simprec::validate {

void emulate_matmul(const EmulationCall& call, std::vector<plugins::HostTensor>& outputs) {
  const plugins::HostTensor* a = find_input(call, "A");
  const plugins::HostTensor* b = find_input(call, "B");
  const plugins::HostTensor* c = find_input(call, "C");
  auto d =
      std::find_if(outputs.begin(), outputs.end(), [](const auto& t) { return t.name == "D"; });
  if (!a || !b || d == outputs.end())
    throw std::invalid_argument("matmul emulation needs inputs A, B and output D");
  const int64_t m = a->shape[0], k = a->shape[1], n = b->shape[1];

  const Format accumulator =
      parse_format(attribute_text(call.kernel, "accumulator_format", d->format));
  const Format output = parse_format(d->format);
  const bool convert = !(accumulator == output);

  // A tensor-core model straight on the encodings: going through doubles (as dot() does) would
  // re-encode a NaN as the canonical one and lose the hardware's NaN bits.
  if (call.model.rfind("tc:", 0) == 0 && !convert) {
    const TensorCoreModel& tc = tensor_core_model(call.model);
    if (tc.accumulator == output && parse_format(a->format) == tc.input_a &&
        parse_format(b->format) == tc.input_b) {
      const auto bits16 = [](const plugins::HostTensor& t) {
        std::vector<uint16_t> v(static_cast<size_t>(t.element_count()));
        for (size_t i = 0; i < v.size(); ++i)
          v[i] = static_cast<uint16_t>(t.bits_at(static_cast<int64_t>(i)));
        return v;
      };
      std::vector<uint32_t> c_bits(static_cast<size_t>(m * n), 0);
      if (c) {
        for (size_t i = 0; i < c_bits.size(); ++i)
          c_bits[i] = static_cast<uint32_t>(c->bits_at(static_cast<int64_t>(i)));
      }
      const std::vector<uint32_t> dbits =
          tensor_core_gemm(tc, bits16(*a), bits16(*b), c_bits, static_cast<int>(m),
                           static_cast<int>(n), static_cast<int>(k), 0);
      for (int64_t i = 0; i < m * n; ++i) d->set_bits_at(i, dbits[static_cast<size_t>(i)]);
      return;
    }
  }
  const std::unique_ptr<Accumulation> model = make_accumulation(call.model);

  const std::vector<double> av = values_of(*a);
  // B transposed, so that each column is contiguous for dot().
  std::vector<double> bt(static_cast<size_t>(k * n));
  for (int64_t p = 0; p < k; ++p) {
    for (int64_t j = 0; j < n; ++j) bt[static_cast<size_t>(j * k + p)] = value_at(*b, p * n + j);
  }
  const std::vector<double> cv =
      c ? values_of(*c) : std::vector<double>(static_cast<size_t>(m * n), 0.0);

  // Rows are independent and every rounding here is deterministic (nearest even), so rows run
  // in parallel, each with its own contexts.
  std::vector<double> result(static_cast<size_t>(m * n));
  parallel_for(m, 0, [&](int64_t i) {
    RoundingContext acc_ctx(accumulator);
    RoundingContext out_ctx(output);
    const std::span<const double> row(av.data() + i * k, static_cast<size_t>(k));
    for (int64_t j = 0; j < n; ++j) {
      const std::span<const double> column(bt.data() + j * k, static_cast<size_t>(k));
      const double v = model->dot(row, column, cv[static_cast<size_t>(i * n + j)], acc_ctx);
      result[static_cast<size_t>(i * n + j)] = convert ? out_ctx.round_value(v) : v;
    }
  });
  for (int64_t i = 0; i < m * n; ++i) set_value(*d, i, result[static_cast<size_t>(i)]);
}

}  // namespace simprec::validate
