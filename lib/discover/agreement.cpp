#include "lib/discover/agreement.hpp"

#include <cmath>
#include <cstdint>
#include <stdexcept>

#include "emulation/round.hpp"
#include "lib/attention/attention.hpp"
#include "lib/attention/dispatch.hpp"
#include "lib/attention/numerics_spec.hpp"
#include "lib/attention/options.hpp"
#include "lib/validate/output_comparison.hpp"
#include "lib/validate/tensor_values.hpp"

namespace simprec::discover {
namespace {

// The key of a KEY=VALUE item.
std::string key_of(const std::string& item) {
  return item.substr(0, item.find('='));
}

bool spec_sets(const std::string& spec, const std::string& key) {
  size_t start = 0;
  while (start <= spec.size()) {
    const size_t end = std::min(spec.find(',', start), spec.size());
    if (key_of(spec.substr(start, end - start)) == key) return true;
    start = end + 1;
  }
  return false;
}

const std::vector<double>& emulated(const attention::AttentionOutputs& out,
                                    const std::string& name) {
  if (name == "O") return out.o;
  if (name == "LSE") return out.lse;
  if (name == "dQ") return out.dq;
  if (name == "dK") return out.dk;
  return out.dv;
}

uint64_t mix(uint64_t h, uint64_t bits) {
  // FNV-1a over the 8 bytes of an encoding.
  for (int i = 0; i < 8; ++i) {
    h ^= (bits >> (8 * i)) & 0xff;
    h *= 0x100000001b3ULL;
  }
  return h;
}

bool is_nan_bits(const Format& f, uint64_t bits) {
  return std::isnan(decode(f, bits));
}

OutputAgreement compare(const Observed& o, const std::vector<double>& values,
                        const attention::AttentionShape& s, uint64_t& fingerprint) {
  OutputAgreement a;
  a.name = o.values.name;
  const bool keys = is_key_output(a.name);
  const int64_t length = keys ? s.nk : s.nq;
  const int64_t columns = o.columns();
  const int64_t rows = o.row_count();
  if (values.size() != static_cast<size_t>(s.problems() * length * columns)) {
    throw std::invalid_argument("the emulation gave no " + a.name + " for this case");
  }
  const Format storage = validate::storage_format(o.values);
  RoundingContext encode(storage);
  const int width = storage.width();
  for (int64_t p = 0; p < s.problems(); ++p) {
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t row = o.rows.empty() ? r : o.rows[static_cast<size_t>(r)];
      RowDiff diff{p, row, 0, 0};
      for (int64_t c = 0; c < columns; ++c) {
        const uint64_t mine =
            encode.round(values[static_cast<size_t>((p * length + row) * columns + c)]);
        const uint64_t theirs = o.values.bits_at((p * rows + r) * columns + c);
        fingerprint = mix(fingerprint, mine);
        ++a.values;
        const bool nan_mine = is_nan_bits(storage, mine), nan_theirs = is_nan_bits(storage, theirs);
        if (mine == theirs || (nan_mine && nan_theirs)) {
          ++a.equal;
          continue;
        }
        int64_t ulps = INT64_MAX;
        if (!nan_mine && !nan_theirs)
          ulps = std::llabs(validate::ulp_distance(theirs, mine, width));
        a.distance += ulps == INT64_MAX ? 64.0 : std::log2(1.0 + static_cast<double>(ulps));
        ++diff.columns;
        diff.max_ulps = std::max(diff.max_ulps, ulps);
      }
      if (diff.columns > 0) a.rows.push_back(diff);
    }
  }
  return a;
}

}  // namespace

bool CaseAgreement::exact() const {
  for (const OutputAgreement& o : outputs) {
    if (!o.exact()) return false;
  }
  return true;
}

attention::AttentionConfig case_config(const std::string& spec, const Case& c) {
  attention::AttentionConfig config = attention::parse_numerics(spec, parse_format(c.input_format));
  for (const std::string& item : c.given) {
    if (spec_sets(spec, key_of(item))) continue;
    attention::AttentionConfig trial = config;
    try {
      attention::apply_override(trial, item);
      attention::check_requirements(trial);
    } catch (const std::invalid_argument&) {
      continue;  // a fact about the call that this spec has no use for
    }
    config = std::move(trial);
  }
  config.causal = c.causal;
  config.scale = c.scale;
  config.threads = 1;
  return config;
}

void check_runnable(const std::string& spec, const Case& c) {
  const attention::AttentionConfig config =
      attention::resolve_for_shape(case_config(spec, c), c.inputs.shape);
  attention::check_run_requirements(config);
}

CaseAgreement evaluate_case(const std::string& spec, const Case& c) {
  const attention::AttentionConfig config = case_config(spec, c);
  const attention::AttentionOutputs out = attention::run_attention(c.inputs, config);
  CaseAgreement result;
  result.fingerprint = 0xcbf29ce484222325ULL;
  for (const Observed& o : c.outputs) {
    result.outputs.push_back(
        compare(o, emulated(out, o.values.name), c.inputs.shape, result.fingerprint));
  }
  return result;
}

}  // namespace simprec::discover
