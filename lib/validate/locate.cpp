#include "lib/validate/locate.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <tuple>

#include "emulation/cancellation.hpp"
#include "emulation/round.hpp"
#include "lib/attention/dispatch.hpp"
#include "lib/attention/options.hpp"
#include "lib/validate/output_comparison.hpp"
#include "lib/validate/tensor_values.hpp"

namespace simprec::validate {
namespace {

using attention::AttentionConfig;
using attention::AttentionOutputs;
using attention::AttentionShape;
using plugins::HostTensor;

constexpr RoundingMode kDeterministicModes[] = {
    RoundingMode::kNearestEven, RoundingMode::kNearestAway, RoundingMode::kTowardZero,
    RoundingMode::kUp,          RoundingMode::kDown,        RoundingMode::kOdd};

// An attention output: where the emulation's outputs hold it, and whether its rows are key rows
// (the gradients of K and V) and it has columns (all but the LSE).
struct OutputKind {
  const char* name;
  std::vector<double> AttentionOutputs::*values;
  bool key_rows;
  bool columns;
};

constexpr OutputKind kOutputKinds[] = {{"O", &AttentionOutputs::o, false, true},
                                       {"LSE", &AttentionOutputs::lse, false, false},
                                       {"dQ", &AttentionOutputs::dq, false, true},
                                       {"dK", &AttentionOutputs::dk, true, true},
                                       {"dV", &AttentionOutputs::dv, true, true}};

// An output's kind and its layout [problem][row][column].
struct Layout {
  const OutputKind* kind;
  int64_t rows, columns;
  int64_t index(int64_t problem, int64_t row, int64_t column) const {
    return (problem * rows + row) * columns + column;
  }
};

const OutputKind& kind_of(const std::string& name) {
  const auto it = std::find_if(std::begin(kOutputKinds), std::end(kOutputKinds),
                               [&](const OutputKind& k) { return name == k.name; });
  if (it == std::end(kOutputKinds)) {
    throw std::invalid_argument("locating differences of output '" + name +
                                "': attention outputs are O, LSE, dQ, dK and dV");
  }
  return *it;
}

Layout layout_of(const AttentionShape& shape, const HostTensor& t) {
  const OutputKind* it = &kind_of(t.name);
  const int64_t rows = it->key_rows ? shape.nk : shape.nq;
  const int64_t per_problem = t.element_count() / std::max<int64_t>(1, shape.problems());
  const int64_t columns = it->columns ? per_problem / std::max<int64_t>(1, rows) : 1;
  if (shape.problems() * rows * columns != t.element_count()) {
    throw std::invalid_argument(
        "locating differences of output " + t.name + " " + plugins::shape_text(t.shape) + ": not " +
        std::to_string(shape.problems()) + " problems of " + std::to_string(rows) + " rows");
  }
  return {it, rows, columns};
}

// Bitwise equal, or NaN in both (the comparison's rule, output_comparison.hpp).
bool agree(const HostTensor& kernel, const HostTensor& other, int64_t i) {
  const uint64_t kb = kernel.bits_at(i), ob = other.bits_at(i);
  if (kb == ob) return true;
  const Format f = storage_format(kernel);
  return std::isnan(decode(f, kb)) && std::isnan(decode(f, ob));
}

// How `candidate` (tensors in the order of `kernel`) agrees with the kernel on problem p, row
// `row` of the kind of rows given by key_rows.
Agreement agreement_of(const AttentionShape& shape, const std::vector<HostTensor>& kernel,
                       const std::vector<HostTensor>& candidate, int64_t p, int64_t row,
                       bool key_rows) {
  Agreement a;
  a.rows = key_rows ? shape.nk : shape.nq;
  std::vector<bool> row_agrees(a.rows, true);
  for (size_t t = 0; t < kernel.size(); ++t) {
    const Layout layout = layout_of(shape, kernel[t]);
    OutputRows rows{kernel[t].name, 0, layout.rows};
    for (int64_t r = 0; r < layout.rows; ++r) {
      bool all = true;
      for (int64_t c = 0; c < layout.columns && all; ++c) {
        all = agree(kernel[t], candidate[t], layout.index(p, r, c));
      }
      rows.agreeing += all;
      if (layout.kind->key_rows == key_rows && !all) row_agrees[r] = false;
    }
    a.outputs.push_back(rows);
  }
  a.agreeing = std::count(row_agrees.begin(), row_agrees.end(), true);
  a.row_agrees = row_agrees[row];
  return a;
}

// The emulated tensors with problem p's values from `out`.
std::vector<HostTensor> with_problem(const AttentionShape& shape,
                                     const std::vector<HostTensor>& emulated,
                                     const AttentionOutputs& out, int64_t p) {
  std::vector<HostTensor> tensors = emulated;
  for (HostTensor& t : tensors) {
    const Layout layout = layout_of(shape, t);
    const std::vector<double>& values = out.*(layout.kind->values);
    const int64_t n = layout.rows * layout.columns;
    for (int64_t x = p * n; x < (p + 1) * n; ++x) set_value(t, x, values[x]);
  }
  return tensors;
}

// Whether some bit of problem p differs between two sets of the same outputs.
bool changes_problem(const AttentionShape& shape, const std::vector<HostTensor>& a,
                     const std::vector<HostTensor>& b, int64_t p) {
  for (size_t t = 0; t < a.size(); ++t) {
    const Layout layout = layout_of(shape, a[t]);
    const int64_t n = layout.rows * layout.columns;
    for (int64_t x = p * n; x < (p + 1) * n; ++x) {
      if (a[t].bits_at(x) != b[t].bits_at(x)) return true;
    }
  }
  return false;
}

// The configurations to try instead of `config`: every other strategy of every slot the run reads
// and every other value of a parameter with fixed choices, then key blocks of 16, 32, 64 and 128
// with the run's query block, then every other deterministic rounding (rne, rna, rtz, rup, rdn,
// rto) at each site of a format narrower than fp64 (rounding a double to fp64 changes nothing).
// Those whose requirements the configuration does not meet are counted in `refused`.
std::vector<std::pair<Alternative, AttentionConfig>> candidates(const AttentionConfig& config,
                                                                const AttentionShape& shape,
                                                                int64_t& refused) {
  std::vector<std::pair<Alternative, AttentionConfig>> out;
  const auto add = [&](const attention::StructuralOption& option, const std::string& value) {
    AttentionConfig c = config;
    try {
      option.set(c, value);
      attention::check_requirements(c);
    } catch (const std::invalid_argument&) {
      ++refused;
      return;
    }
    const auto kind = option.slot ? Alternative::Kind::kSlot : Alternative::Kind::kParameter;
    out.push_back({Alternative{std::string(option.key), kind, value, {}}, c});
  };
  for (const attention::StructuralOption& option : attention::structural_options()) {
    if (option.choices.empty()) continue;
    if (option.slot && option.slot->scope == attention::SlotScope::kFlash && !config.flash()) {
      continue;
    }
    const std::string current = option.get(config);
    for (const std::string_view choice : option.choices) {
      if (choice != current) add(option, std::string(choice));
    }
  }
  if (config.flash()) {
    const AttentionConfig resolved = attention::resolve_for_shape(config, shape);
    for (const int cols : {16, 32, 64, 128}) {
      if (cols == resolved.block_cols) continue;
      add(*attention::find_structural_option("tile"),
          std::to_string(resolved.block_rows) + "x" + std::to_string(cols));
    }
  }
  for (int i = 0; i < attention::kSiteCount; ++i) {
    const attention::Site site = static_cast<attention::Site>(i);
    const attention::SiteSpec& given = config.site(site);
    if (given.format.width() >= 64) continue;
    for (const RoundingMode mode : kDeterministicModes) {
      if (mode == given.rounding.mode) continue;
      // As a spec writes it: the accumulation only where the site accumulates.
      std::string value = given.format.name() + ":" + std::string(short_name(mode));
      if (attention::site_accumulates(site)) value += ":" + given.accumulation;
      AttentionConfig c = config;
      try {
        attention::apply_override(c, std::string(attention::site_name(site)) + "=" + value);
        attention::check_requirements(c);
      } catch (const std::invalid_argument&) {
        ++refused;
        continue;
      }
      out.push_back(
          {Alternative{
               std::string(attention::site_name(site)), Alternative::Kind::kSite, value, {}},
           c});
    }
  }
  return out;
}

}  // namespace

std::vector<FirstDifference> first_differences(const AttentionShape& shape,
                                               const std::vector<HostTensor>& kernel,
                                               const std::vector<HostTensor>& emulated) {
  if (kernel.size() != emulated.size()) {
    throw std::invalid_argument("locating differences: " + std::to_string(kernel.size()) +
                                " kernel outputs against " + std::to_string(emulated.size()));
  }
  std::vector<FirstDifference> out;
  for (size_t t = 0; t < kernel.size(); ++t) {
    const HostTensor &k = kernel[t], &e = emulated[t];
    if (k.name != e.name || k.format != e.format || k.shape != e.shape) {
      throw std::invalid_argument("locating differences: kernel output " + k.name +
                                  " against emulated " + e.name);
    }
    const Layout layout = layout_of(shape, k);
    std::optional<FirstDifference> first;
    for (int64_t i = 0; i < k.element_count(); ++i) {
      if (agree(k, e, i)) continue;
      if (first) {
        ++first->differing;
        first->row_differing += i / layout.columns == first->index / layout.columns;
        continue;
      }
      FirstDifference d;
      d.output = k.name;
      d.index = i;
      d.problem = i / (layout.rows * layout.columns);
      d.b = d.problem / std::max<int64_t>(1, shape.heads);
      d.h = d.problem % std::max<int64_t>(1, shape.heads);
      d.row = i / layout.columns % layout.rows;
      if (layout.kind->columns) d.column = i % layout.columns;
      d.kernel = value_at(k, i);
      d.emulation = value_at(e, i);
      d.kernel_bits = k.bits_at(i);
      d.emulation_bits = e.bits_at(i);
      d.width = storage_format(k).width();
      if (!std::isnan(d.kernel) && !std::isnan(d.emulation)) {
        d.ulps = ulp_distance(d.emulation_bits, d.kernel_bits, d.width);
      }
      d.differing = d.row_differing = 1;
      first = d;
    }
    if (first) out.push_back(*first);
  }
  return out;
}

LocateReport locate_attention(const AttentionShape& shape, const AttentionConfig& config,
                              const std::vector<HostTensor>& kernel,
                              const std::vector<HostTensor>& emulated, const AttentionRunner& run,
                              bool stop_when_cancelled) {
  LocateReport report;
  report.differences = first_differences(shape, kernel, emulated);
  if (report.differences.empty()) return report;
  const auto key_rows = [](const FirstDifference& d) { return kind_of(d.output).key_rows; };
  report.key_row = key_rows(report.differences.front());
  for (const FirstDifference& d : report.differences) {
    if (key_rows(d) != report.key_row) continue;
    if (!report.located ||
        std::tie(d.problem, d.row) < std::tie(report.located->problem, report.located->row)) {
      report.located = d;
    }
  }
  const int64_t p = report.located->problem, row = report.located->row;
  report.model = agreement_of(shape, kernel, emulated, p, row, report.key_row);

  const bool forward = std::any_of(kernel.begin(), kernel.end(), [](const HostTensor& t) {
    return t.name == "O" || t.name == "LSE";
  });
  auto tries = candidates(config, shape, report.refused);
  report.untried = static_cast<int64_t>(tries.size());
  // Runs `step`; false where it was stopped and the report keeps what it has so far.
  const auto stopping = [&](const auto& step) {
    try {
      step();
      return true;
    } catch (const Cancelled& e) {
      if (!stop_when_cancelled) throw;
      report.stopped = e.what();
      return false;
    }
  };
  if (forward && !report.key_row) {
    attention::RowProbe probe;
    probe.problem = p;
    probe.row = row;
    attention::RunOptions probed;
    probed.only_problem = p;
    probed.probe = &probe;
    if (!stopping([&] { (void)run(config, probed); })) return report;
    if (probe.recorded) report.probe = std::move(probe);
  }
  attention::RunOptions one_problem;
  one_problem.only_problem = p;

  for (auto& [alternative, config] : tries) {
    AttentionOutputs out;
    // A named reference: clang before 16 cannot capture a structured binding.
    const auto& c = config;
    try {
      if (!stopping([&] { out = run(c, one_problem); })) break;
    } catch (const std::invalid_argument&) {
      --report.untried;
      ++report.refused;  // a condition the run checks once its tiles are known
      continue;
    }
    --report.untried;
    const std::vector<HostTensor> tensors = with_problem(shape, emulated, out, p);
    alternative.agreement = agreement_of(shape, kernel, tensors, p, row, report.key_row);
    alternative.changes = changes_problem(shape, emulated, tensors, p);
    report.alternatives.push_back(std::move(alternative));
  }
  return report;
}

}  // namespace simprec::validate
