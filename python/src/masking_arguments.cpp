#include "python/src/masking_arguments.hpp"

#include "lib/attention/score_mod.hpp"

#include <pybind11/numpy.h>

#include <stdexcept>
#include <vector>

namespace py = pybind11;

namespace simprec::python {
namespace {

// A (..., Sq, Sk) array as a BroadcastTensor over (batch, heads) (attention::broadcast_tensor).
std::shared_ptr<const attention::BroadcastTensor> broadcast_argument(
    const py::object& object, const char* name, const attention::AttentionShape& s,
    const std::vector<int64_t>& leading) {
  if (object.is_none()) return nullptr;
  const auto a = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(object);
  if (!a) throw py::value_error(std::string(name) + ": expected an array (numpy or convertible)");
  std::vector<int64_t> dims(a.shape(), a.shape() + a.ndim());
  try {
    return std::make_shared<const attention::BroadcastTensor>(attention::broadcast_tensor(
        dims, std::vector<double>(a.data(), a.data() + a.size()), s, leading, name));
  } catch (const std::invalid_argument& e) {
    throw py::value_error(e.what());
  }
}

// The arrays a score_mod reads, by name: booleans, integers, or floats that are fp32 values (the
// kernel loads them as fp32).
std::vector<attention::ScoreModTensor> score_tensors_argument(const py::object& object) {
  std::vector<attention::ScoreModTensor> out;
  if (object.is_none()) return out;
  if (!py::isinstance<py::dict>(object))
    throw py::value_error("score_tensors: expected a dict of name: array");
  for (const auto& [key, value] : object.cast<py::dict>()) {
    attention::ScoreModTensor t;
    t.name = py::str(key);
    const auto raw = py::array::ensure(value);
    if (!raw) throw py::value_error("score_tensors[" + t.name + "]: expected an array");
    const char kind = raw.dtype().kind();
    t.type = kind == 'b'                  ? attention::ScoreType::kBool
             : kind == 'i' || kind == 'u' ? attention::ScoreType::kInt
             : kind == 'f'                ? attention::ScoreType::kFloat
                                          : throw py::value_error("score_tensors[" + t.name +
                                                                  "]: expected booleans, integers or floats");
    const auto a = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(raw);
    t.dims.assign(a.shape(), a.shape() + a.ndim());
    t.values.assign(a.data(), a.data() + a.size());
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace

attention::Masking masking_argument(const MaskingArguments& a, const attention::AttentionShape& s,
                                    const std::vector<int64_t>& leading) {
  attention::Masking m;
  try {
    m.causal_align = attention::parse_causal_align(a.causal_align, "causal_align");
  } catch (const std::invalid_argument& e) {
    throw py::value_error(e.what());
  }
  if (a.window) {
    m.window_left = a.window->first;
    m.window_right = a.window->second;
  }
  m.mask = broadcast_argument(a.mask, "mask", s, leading);
  m.bias = broadcast_argument(a.bias, "bias", s, leading);
  if (!a.alibi_slopes.is_none()) {
    const auto slopes =
        py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(a.alibi_slopes);
    if (!slopes || slopes.ndim() != 1)
      throw py::value_error("alibi_slopes: expected a 1-D array of one slope per head");
    m.alibi_slopes.assign(slopes.data(), slopes.data() + slopes.size());
  }
  m.softcap = a.softcap;
  try {
    std::vector<attention::ScoreModTensor> tensors = score_tensors_argument(a.score_tensors);
    if (!a.score_tensors.is_none() && !a.score_mod && !a.mask_mod)
      throw std::invalid_argument("score_tensors without a score_mod or a mask_mod");
    if (a.mask_mod) m.mask_mod = std::make_shared<const attention::MaskMod>(*a.mask_mod, tensors);
    if (a.score_mod)
      m.score_mod = std::make_shared<const attention::ScoreMod>(*a.score_mod, std::move(tensors));
    m.check(s);
  } catch (const std::invalid_argument& e) {
    throw py::value_error(e.what());
  }
  return m;
}

}  // namespace simprec::python
