#include "lib/discover/evidence.hpp"

#include <algorithm>
#include <stdexcept>

namespace simprec::discover {

bool is_output_name(const std::string& name) {
  return std::find(std::begin(kOutputNames), std::end(kOutputNames), name) !=
         std::end(kOutputNames);
}

bool is_key_output(const std::string& name) {
  return name == "dK" || name == "dV";
}

int64_t output_columns(const std::string& name, const attention::AttentionShape& s) {
  if (name == "LSE") return 1;
  return name == "O" || name == "dV" ? s.dv : s.d;
}

int64_t Observed::row_count() const {
  return values.shape.size() >= 3 ? values.shape[2] : 0;
}

int64_t Observed::columns() const {
  return values.shape.size() == 4 ? values.shape[3] : 1;
}

const Observed* Case::output(const std::string& name) const {
  for (const Observed& o : outputs) {
    if (o.values.name == name) return &o;
  }
  return nullptr;
}

bool Case::has_gradients() const {
  return output("dQ") != nullptr || output("dK") != nullptr || output("dV") != nullptr;
}

double Case::cost() const {
  const attention::AttentionShape& s = inputs.shape;
  const double forward = static_cast<double>(s.problems()) * static_cast<double>(s.nq) *
                         static_cast<double>(s.nk) * static_cast<double>(s.d + s.dv);
  return has_gradients() ? 3.5 * forward : forward;
}

void check_case(const Case& c) {
  const auto fail = [&](const std::string& what) {
    throw std::invalid_argument("case '" + c.label + "': " + what);
  };
  const attention::AttentionShape& s = c.inputs.shape;
  if (c.outputs.empty()) fail("no output of the kernel to compare with");
  if (c.has_gradients() && !c.inputs.has_grad()) fail("gradients given without dO");
  for (const Observed& o : c.outputs) {
    const std::string& name = o.values.name;
    if (!is_output_name(name)) fail("unknown output '" + name + "' (O, LSE, dQ, dK or dV)");
    const bool keys = is_key_output(name);
    const int64_t length = keys ? s.nk : s.nq;
    const int64_t columns = output_columns(name, s);
    const int64_t rows = o.rows.empty() ? length : static_cast<int64_t>(o.rows.size());
    std::vector<int64_t> expected = {s.batch, s.heads, rows};
    if (name != "LSE") expected.push_back(columns);
    if (o.values.shape != expected) {
      fail("output " + name + " has shape " + plugins::shape_text(o.values.shape) + "; expected " +
           plugins::shape_text(expected) + " for these inputs" +
           (o.rows.empty() ? "" : " and the rows given"));
    }
    for (size_t i = 0; i < o.rows.size(); ++i) {
      if (o.rows[i] < 0 || o.rows[i] >= length || (i > 0 && o.rows[i] <= o.rows[i - 1])) {
        fail("the rows of " + name + " must increase within [0, " + std::to_string(length) +
             "); row " + std::to_string(i) + " is " + std::to_string(o.rows[i]));
      }
    }
  }
}

}  // namespace simprec::discover
