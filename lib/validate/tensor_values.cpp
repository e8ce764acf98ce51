#include "lib/validate/tensor_values.hpp"

#include "emulation/round.hpp"

namespace simprec::validate {

Format storage_format(const plugins::HostTensor& tensor) {
  const auto storage = plugins::storage_for_format(tensor.format);
  if (storage.dtype.code == kDLFloat)
    return storage.dtype.bits == 64 ? formats::fp64 : formats::fp32;
  return parse_format(tensor.format);
}

double value_at(const plugins::HostTensor& tensor, int64_t index) {
  return decode(storage_format(tensor), tensor.bits_at(index));
}

std::vector<double> values_of(const plugins::HostTensor& tensor) {
  const Format format = storage_format(tensor);
  std::vector<double> values(static_cast<size_t>(tensor.element_count()));
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = decode(format, tensor.bits_at(static_cast<int64_t>(i)));
  return values;
}

void set_value(plugins::HostTensor& tensor, int64_t index, double value) {
  RoundingContext storage(storage_format(tensor));
  tensor.set_bits_at(index, storage.round(value));
}

}  // namespace simprec::validate
