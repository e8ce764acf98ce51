// The lines of `validate --locate` (docs/plugins.md). Numbers are the shortest decimal that reads
// back as the same double, so that every value can be recomputed exactly.
#include <algorithm>
#include <charconv>
#include <cinttypes>
#include <cmath>
#include <string>

#include "lib/validate/locate.hpp"

namespace simprec::validate {
namespace {

std::string number(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x < 0 ? "-inf" : "inf";
  char buffer[64];
  const auto r = std::to_chars(buffer, buffer + sizeof buffer, x);
  return std::string(buffer, r.ptr);
}

std::string hex(uint64_t bits, int width) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "0x%0*" PRIx64, (width + 3) / 4, bits);
  return buffer;
}

// "SITE:VALUE,..." for a sequence of roundings.
std::string steps_text(const std::vector<attention::ProbedRounding>& steps) {
  std::string text;
  for (const auto& s : steps) {
    text += (text.empty() ? "" : ",") + std::string(attention::site_name(s.site)) + ":" +
            number(s.value);
  }
  return text;
}

std::string numbers(const std::vector<double>& values) {
  std::string text;
  for (const double v : values) text += (text.empty() ? "" : ",") + number(v);
  return text;
}

std::string fraction(int64_t agreeing, int64_t rows) {
  return std::to_string(agreeing) + "/" + std::to_string(rows);
}

std::string agreement_text(const Agreement& a) {
  std::string outputs;
  for (const OutputRows& o : a.outputs) {
    outputs += (outputs.empty() ? "" : ",") + o.output + ":" + fraction(o.agreeing, o.rows);
  }
  return "rows-agreeing=" + fraction(a.agreeing, a.rows) + " outputs=" + outputs;
}

std::string choice_text(const Alternative& a) {
  switch (a.kind) {
    case Alternative::Kind::kSlot:
      return "slot=" + a.option + " strategy=" + a.value;
    case Alternative::Kind::kParameter:
      return "parameter=" + a.option + " value=" + a.value;
    case Alternative::Kind::kSite:
      break;
  }
  return "site=" + a.option + " value=" + a.value;
}

// The value at the located column of a row's vector, as " NAME[c]=V"; empty without a column.
std::string at_column(const char* name, const std::vector<double>& values,
                      const std::optional<int64_t>& column) {
  if (!column || *column >= static_cast<int64_t>(values.size())) return "";
  return std::string(" ") + name + "[" + std::to_string(*column) + "]=" + number(values[*column]);
}

void print_probe(std::FILE* out, const attention::RowProbe& probe,
                 const std::optional<int64_t>& column) {
  for (size_t b = 0; b < probe.blocks.size(); ++b) {
    const attention::ProbedBlock& block = probe.blocks[b];
    std::string line = "locate block " + std::to_string(b) + " tile=" + std::to_string(block.tile) +
                       " split=" + std::to_string(block.split) +
                       " keys=" + std::to_string(block.first_key) + ".." +
                       std::to_string(block.first_key + block.keys - 1) +
                       " m-old=" + number(block.m_old) + " m-block=" + number(block.m_block) +
                       " m=" + number(block.m_new) + " shift=" + number(block.shift);
    line += block.rescaled
                ? " alpha=" + number(block.alpha) + " alpha-steps=" + steps_text(block.alpha_steps)
                : " alpha=none";
    line += " l=" + numbers(block.l) + at_column("acc", block.acc, column);
    std::fprintf(out, "%s\n", line.c_str());
    for (const attention::ProbedKey& key : block.key_values) {
      std::fprintf(out, "locate key block=%zu key=%" PRId64 " s=%s steps=%s p=%s p-cast=%s\n", b,
                   key.key, number(key.score).c_str(), steps_text(key.steps).c_str(),
                   number(key.p).c_str(), number(key.p_cast).c_str());
    }
  }
  std::string line = "locate row-final l=" + number(probe.l) +
                     at_column("o-norm", probe.o_norm, column) + at_column("o", probe.o, column) +
                     " lse=" + number(probe.lse);
  if (!probe.lse_steps.empty()) line += " lse-steps=" + steps_text(probe.lse_steps);
  std::fprintf(out, "%s\n", line.c_str());
}

}  // namespace

void print_locate(std::FILE* out, const LocateReport& r) {
  if (r.differences.empty()) {
    std::fprintf(out, "locate none every output agrees\n");
    return;
  }
  for (const FirstDifference& d : r.differences) {
    std::string where =
        "b=" + std::to_string(d.b) + " h=" + std::to_string(d.h) + " row=" + std::to_string(d.row);
    if (d.column) where += " col=" + std::to_string(*d.column);
    std::fprintf(out,
                 "locate %s %s kernel=%s emulation=%s kernel-bits=%s emulation-bits=%s ulp=%s "
                 "differing=%" PRId64 " row-differing=%" PRId64 "\n",
                 d.output.c_str(), where.c_str(), number(d.kernel).c_str(),
                 number(d.emulation).c_str(), hex(d.kernel_bits, d.width).c_str(),
                 hex(d.emulation_bits, d.width).c_str(),
                 d.ulps ? std::to_string(*d.ulps).c_str() : "nan", d.differing, d.row_differing);
  }
  const FirstDifference& at = *r.located;
  std::fprintf(out, "locate row b=%" PRId64 " h=%" PRId64 " row=%" PRId64 " rows=%s\n", at.b, at.h,
               at.row, r.key_row ? "key" : "query");
  if (r.probe) print_probe(out, *r.probe, at.column);
  std::fprintf(out, "locate model %s\n", agreement_text(r.model).c_str());
  // Only the alternatives that change an output of the problem are listed.
  int64_t row_agrees = 0, unchanged = 0, best = -1;
  for (const Alternative& a : r.alternatives) {
    if (!a.changes) {
      ++unchanged;
      continue;
    }
    std::fprintf(out, "locate alternative %s row-agrees=%s %s\n", choice_text(a).c_str(),
                 a.agreement.row_agrees ? "yes" : "no", agreement_text(a.agreement).c_str());
    if (a.agreement.row_agrees) {
      ++row_agrees;
      best = std::max(best, a.agreement.agreeing);
    }
  }
  if (!r.stopped.empty()) {
    std::fprintf(out, "locate stopped untried=%" PRId64 " %s\n", r.untried, r.stopped.c_str());
  }
  std::fprintf(out,
               "locate alternatives tried=%zu unchanged=%" PRId64 " refused=%" PRId64
               " row-agrees=%" PRId64 "\n",
               r.alternatives.size(), unchanged, r.refused, row_agrees);
  if (row_agrees == 0) {
    std::fprintf(out, "locate best none%s\n", r.stopped.empty() ? "" : " of those tried");
  }
  for (const Alternative& a : r.alternatives) {
    if (a.agreement.row_agrees && a.agreement.agreeing == best) {
      std::fprintf(out, "locate best %s rows-agreeing=%s\n", choice_text(a).c_str(),
                   fraction(a.agreement.agreeing, a.agreement.rows).c_str());
    }
  }
}

}  // namespace simprec::validate
