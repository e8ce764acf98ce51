#include "lib/discover/recorded_case.hpp"

#include <cmath>
#include <stdexcept>

#include "lib/attention/site.hpp"
#include "lib/inputs/generators.hpp"
#include "lib/limits/checked_arithmetic.hpp"
#include "lib/validate/tensor_values.hpp"

namespace simprec::discover {
namespace {

bool is_encoding(NpyType t) {
  return t == NpyType::kUint8 || t == NpyType::kUint16;
}

std::vector<int64_t> row_indices(const NpyArray* a, const std::string& what) {
  if (!a) return {};
  if (a->type != NpyType::kInt64 && a->type != NpyType::kInt32) {
    throw std::invalid_argument(what + ": expected int64 or int32 row indices, not " +
                                npy_type_name(a->type));
  }
  std::vector<int64_t> out;
  for (double r : a->to_doubles()) out.push_back(static_cast<int64_t>(r));
  return out;
}

// Every input value must be one of the input format's: the kernel saw nothing else.
void check_representable(const std::vector<double>& values, const Format& f, const char* name) {
  const attention::SiteRounder round(attention::SiteSpec{f, {}, "sequential"}, 0,
                                     attention::Site::kInput);
  for (size_t i = 0; i < values.size(); ++i) {
    if (round(values[i]) != values[i]) {
      throw std::invalid_argument(std::string(name) + " holds a value " + f.name() +
                                  " does not (flat index " + std::to_string(i) +
                                  "): give the values the kernel was called with");
    }
  }
}

Observed observed(const std::string& name, const NpyArray& a, const std::string& format,
                  const std::vector<int64_t>& shape) {
  std::string storage;
  if (a.type == NpyType::kFloat32) {
    storage = "fp32";
  } else if (a.type == NpyType::kFloat64) {
    storage = "fp64";
  } else if (is_encoding(a.type)) {
    storage = format;
    const int width = parse_format(format).width();
    if ((a.type == NpyType::kUint16) != (width > 8 && width <= 16)) {
      throw std::invalid_argument("output " + name + ": " + npy_type_name(a.type) +
                                  " encodings do not hold " + format + " (give its format)");
    }
  } else {
    throw std::invalid_argument("output " + name +
                                ": expected float32, float64, uint16 or uint8, "
                                "not " +
                                npy_type_name(a.type));
  }
  const int64_t count = limits::checked_product<int64_t>(shape, "output " + name);
  if (a.size() != count || (name != "LSE" && a.shape.back() != shape.back())) {
    throw std::invalid_argument("output " + name + " has shape " + plugins::shape_text(a.shape) +
                                "; expected " + plugins::shape_text(shape) +
                                " (or the same with other leading dimensions)");
  }
  plugins::HostTensor t = plugins::HostTensor::zeros(name, storage, shape);
  const std::vector<double> raw = a.to_doubles();
  for (int64_t i = 0; i < count; ++i) {
    if (is_encoding(a.type)) {
      t.set_bits_at(i, static_cast<uint64_t>(raw[static_cast<size_t>(i)]));
    } else {
      validate::set_value(t, i, raw[static_cast<size_t>(i)]);
    }
  }
  return {std::move(t), {}};
}

}  // namespace

Case recorded_case(const RecordedArrays& r) {
  if (!r.q || !r.k || !r.v) throw std::invalid_argument("a recorded case needs Q, K and V");
  const Format f = parse_format(r.input_format);
  const std::optional<Format> bits =
      is_encoding(r.q->type) ? std::optional<Format>(f) : std::nullopt;
  Case c;
  c.label = r.label;
  c.input_format = r.input_format;
  c.causal = r.causal;
  c.scale = r.scale;
  c.given = r.given;
  c.inputs = inputs::inputs_from_arrays(
      {r.q, "Q"}, {r.k, "K"}, {r.v, "V"},
      r.d_out ? std::optional<inputs::LabelledArray>({r.d_out, "dO"}) : std::nullopt, bits);
  check_representable(c.inputs.q, f, "Q");
  check_representable(c.inputs.k, f, "K");
  check_representable(c.inputs.v, f, "V");
  check_representable(c.inputs.d_out, f, "dO");
  const std::vector<int64_t> rows = row_indices(r.rows, "rows");
  const std::vector<int64_t> key_rows = row_indices(r.key_rows, "key rows");
  const attention::AttentionShape& s = c.inputs.shape;
  const std::string out_format = r.output_format.empty() ? r.input_format : r.output_format;
  for (const char* name : kOutputNames) {
    const auto it = r.outputs.find(name);
    if (it == r.outputs.end() || !it->second) continue;
    const bool keys = is_key_output(name);
    const std::vector<int64_t>& kept = keys ? key_rows : rows;
    const int64_t length = keys ? s.nk : s.nq;
    // An output holds every row, or the rows given (the LSE of a recording often every row).
    int64_t count = length;
    const int64_t columns = output_columns(name, s);
    if (!kept.empty() &&
        it->second->size() == limits::checked_product<int64_t>(
                                  {s.problems(), static_cast<int64_t>(kept.size()), columns}, name))
      count = static_cast<int64_t>(kept.size());
    std::vector<int64_t> shape = {s.batch, s.heads, count};
    if (std::string(name) != "LSE") shape.push_back(columns);
    Observed o = observed(name, *it->second, out_format, shape);
    if (count != length) o.rows = kept;
    c.outputs.push_back(std::move(o));
  }
  for (const auto& [name, array] : r.outputs) {
    if (!is_output_name(name))
      throw std::invalid_argument("unknown output '" + name + "' (O, LSE, dQ, dK or dV)");
  }
  if (c.has_gradients() != c.inputs.has_grad()) {
    throw std::invalid_argument(c.inputs.has_grad() ? "dO given without dQ, dK or dV"
                                                    : "dQ, dK or dV given without dO");
  }
  check_case(c);
  return c;
}

}  // namespace simprec::discover
