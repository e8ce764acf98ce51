#include "python/src/masking_arguments.hpp"

#include <pybind11/numpy.h>

#include <stdexcept>
#include <vector>

namespace py = pybind11;

namespace simprec::python {
namespace {

std::string shape_text(const py::array& a) {
  std::string t = "(";
  for (py::ssize_t i = 0; i < a.ndim(); ++i) t += (i ? ", " : "") + std::to_string(a.shape(i));
  return t + (a.ndim() == 1 ? ",)" : ")");
}

// A (..., Sq, Sk) array as a BroadcastTensor over (batch, heads): its dimensions before the last
// two, at most two, each 1 or the run's.
std::shared_ptr<const attention::BroadcastTensor> broadcast_argument(
    const py::object& object, const char* name, const attention::AttentionShape& s,
    const std::vector<int64_t>& leading) {
  if (object.is_none()) return nullptr;
  const auto a = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(object);
  if (!a) throw py::value_error(std::string(name) + ": expected an array (numpy or convertible)");
  const py::ssize_t rank = a.ndim();
  const auto fail = [&](const std::string& why) {
    throw py::value_error(std::string(name) + ": shape " + shape_text(a) + " " + why);
  };
  if (rank < 2 || rank > 2 + static_cast<py::ssize_t>(leading.size()))
    fail("does not broadcast over the queries' leading dimensions and (Sq, Sk)");
  if (a.shape(rank - 2) != s.nq || a.shape(rank - 1) != s.nk)
    fail("expected (..., " + std::to_string(s.nq) + ", " + std::to_string(s.nk) + ") (Sq, Sk)");
  // Aligned at the right with Q's leading dimensions (heads last); each 1 or Q's.
  int64_t batch = 1, heads = 1;
  const size_t lead = static_cast<size_t>(rank - 2);
  for (size_t i = 0; i < lead; ++i) {
    const int64_t size = a.shape(static_cast<py::ssize_t>(i));
    const int64_t run = leading[leading.size() - lead + i];
    if (size != 1 && size != run) fail("does not broadcast over the queries' leading dimensions");
    const bool is_heads = i + 1 == lead;
    if (size != 1 && is_heads) heads = size;
    if (size != 1 && !is_heads) batch *= size;
  }
  if (batch != 1 && batch != s.batch)
    fail("broadcasts over some batch dimensions only: give all of them or size 1 for each");
  auto t = std::make_shared<attention::BroadcastTensor>();
  t->batch = batch;
  t->heads = heads;
  t->nq = s.nq;
  t->nk = s.nk;
  t->values.assign(a.data(), a.data() + a.size());
  return t;
}

}  // namespace

attention::Masking masking_argument(const MaskingArguments& a, const attention::AttentionShape& s,
                                    const std::vector<int64_t>& leading) {
  attention::Masking m;
  if (a.causal_align == "bottom-right") {
    m.causal_align = attention::CausalAlign::kBottomRight;
  } else if (a.causal_align != "top-left") {
    throw py::value_error("causal_align='" + a.causal_align +
                          "': expected 'top-left' or 'bottom-right'");
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
    m.check(s);
  } catch (const std::invalid_argument& e) {
    throw py::value_error(e.what());
  }
  return m;
}

}  // namespace simprec::python
