#include "lib/discover/discovery.hpp"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>

#include "emulation/cancellation.hpp"
#include "lib/discover/search.hpp"

namespace simprec::discover {
namespace {

constexpr size_t kRowsReported = 40;   // remaining rows listed one per line
constexpr size_t kProbesScanned = 30;  // catalogue probes tried per confirmation round
constexpr size_t kProbesPerRound = 4;  // kernel calls per confirmation round
constexpr size_t kLargeProbes = 2;     // the largest probes, run once no probe tells a tie apart

class Report {
 public:
  Report(DiscoveryResult& result, const DiscoverOptions& options)
      : result_(result), options_(options) {}
  void operator()(const std::string& line) {
    result_.lines.push_back(line);
    if (options_.log) options_.log(line);
  }

 private:
  DiscoveryResult& result_;
  const DiscoverOptions& options_;
};

std::string outputs_text(const Case& c) {
  std::string text;
  for (const Observed& o : c.outputs) {
    text += (text.empty() ? "" : " ") + o.values.name + "[" + o.values.format;
    if (!o.rows.empty()) text += ", " + std::to_string(o.rows.size()) + " rows";
    text += "]";
  }
  return text;
}

std::string case_text(const Case& c) {
  const attention::AttentionShape& s = c.inputs.shape;
  char text[160];
  std::snprintf(text, sizeof text, "B=%lld H=%lld Sq=%lld Sk=%lld D=%lld%s", (long long)s.batch,
                (long long)s.heads, (long long)s.nq, (long long)s.nk, (long long)s.d,
                c.causal ? " causal" : "");
  std::string given;
  for (const std::string& g : c.given) given += " " + g;
  return c.label + ": " + text + given + " -> " + outputs_text(c);
}

// The outputs of `like` (names, formats, rows) for a probe's inputs, zero-filled: a case the
// search can run specs on before the kernel has.
Case unfilled_case(const ProbeDesign& p, const attention::AttentionInputs& in, const Case& like) {
  Case c;
  c.label = p.label();
  c.inputs = in;
  c.input_format = like.input_format;
  c.causal = p.causal;
  for (const Observed& o : like.outputs) {
    const bool keys = is_key_output(o.values.name);
    std::vector<int64_t> shape = {p.batch, p.heads, keys ? p.nk : p.nq};
    if (o.values.name != "LSE") shape.push_back(p.d);
    c.outputs.push_back({plugins::HostTensor::zeros(o.values.name, o.values.format, shape), {}});
  }
  return c;
}

// The start: the family at F with each output's site in that output's format.
Candidate start_candidate(const std::string& family, const std::string& format,
                          const std::vector<Case>& cases) {
  Candidate c = candidate_of(family, format);
  const attention::AttentionConfig config = case_config(c.spec(), cases.front());
  for (const auto& [output, site] :
       {std::pair{"O", attention::Site::kOOut}, std::pair{"dQ", attention::Site::kGradOut}}) {
    const Observed* o = cases.front().output(output);
    if (!o) continue;
    const std::string format_of_output = o->values.format == "tf32" ? "fp32" : o->values.format;
    c = apply_move(
        c, {{std::string(attention::site_name(site)),
             format_of_output + ":" + attention::rounding_name(config.site(site).rounding)}});
  }
  return canonical(c);
}

bool same_fingerprints(const Evaluated& a, const Evaluated& b) {
  for (size_t i = 0; i < a.cases.size(); ++i) {
    if (a.cases[i].fingerprint != b.cases[i].fingerprint) return false;
  }
  return true;
}

std::vector<RemainingRow> remaining_rows(const Evaluated& best,
                                         const std::vector<Evaluated>& neighbours) {
  // Row `index` of best's differing rows, numbered as row_effects numbers them.
  const RowEffects effects = row_effects(best, neighbours);
  std::vector<RemainingRow> out;
  size_t index = 0;
  for (size_t ci = 0; ci < best.cases.size(); ++ci) {
    for (const OutputAgreement& o : best.cases[ci].outputs) {
      for (const RowDiff& row : o.rows) {
        RemainingRow r{ci, o.name, row, {}};
        for (size_t m = 0; m < neighbours.size() && r.agrees_with.size() < 3; ++m) {
          if (effects[m] &&
              std::binary_search(effects[m]->fixed.begin(), effects[m]->fixed.end(), index))
            r.agrees_with.push_back(move_text(neighbours[m].move));
        }
        out.push_back(std::move(r));
        ++index;
      }
    }
  }
  return out;
}

std::string row_line(const RemainingRow& r, const std::vector<Case>& cases) {
  const Case& c = cases[r.case_index];
  const int64_t heads = c.inputs.shape.heads;
  const Observed* o = c.output(r.output);
  char text[256];
  std::snprintf(text, sizeof text,
                "remaining %s case %zu b=%lld h=%lld row=%lld: %lld of %lld values differ, max %s "
                "ulp",
                r.output.c_str(), r.case_index + 1, (long long)(r.diff.problem / heads),
                (long long)(r.diff.problem % heads), (long long)r.diff.row,
                (long long)r.diff.columns, (long long)(o ? o->columns() : 0),
                r.diff.max_ulps == INT64_MAX ? "NaN" : std::to_string(r.diff.max_ulps).c_str());
  std::string line = text;
  if (!r.agrees_with.empty()) {
    line += "; agrees with";
    for (size_t i = 0; i < r.agrees_with.size(); ++i) line += (i ? ", " : " ") + r.agrees_with[i];
  }
  return line;
}

}  // namespace

DiscoveryResult discover(std::vector<Case> cases, CallableKernel* kernel,
                         const DiscoverOptions& options) {
  const auto began = std::chrono::steady_clock::now();
  DiscoveryResult result;
  Report report(result, options);
  std::vector<std::string> families = options.families;
  if (families.empty()) families.assign(std::begin(kDefaultFamilies), std::end(kDefaultFamilies));

  // The time limit ends the search with its best spec; the caller's own token (Ctrl-C in
  // Python) still ends the call.
  const CancellationToken* outer = current_cancellation();
  std::unique_ptr<CancellationToken> deadline;
  std::optional<CancellationScope> scope;
  if (options.time_limit) {
    deadline = std::make_unique<CancellationToken>(
        "the time limit",
        began + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                    std::chrono::duration<double>(*options.time_limit)),
        outer);
    scope.emplace(deadline.get());
  }
  const auto interrupted = [outer] { return outer && outer->requested(); };

  std::string format;
  if (kernel) {
    format = kernel->input_format();
  } else if (!cases.empty()) {
    format = cases.front().input_format;
  } else {
    throw std::invalid_argument(
        "discover: nothing to search against: give recorded cases or a "
        "kernel to call");
  }
  std::string head = "discover " + (kernel ? kernel->description() : "recordings") +
                     " input-format=" + format + " families=";
  for (size_t i = 0; i < families.size(); ++i) head += (i ? "," : "") + families[i];
  if (options.time_limit) {
    char limit[48];
    std::snprintf(limit, sizeof limit, " time-limit=%g", *options.time_limit);
    head += limit;
  }
  report(head);
  for (size_t i = 0; i < cases.size(); ++i) {
    check_case(cases[i]);
    if (cases[i].input_format != format) {
      throw std::invalid_argument("case '" + cases[i].label + "' has inputs in " +
                                  cases[i].input_format + ", the others in " + format);
    }
    report("case " + std::to_string(i + 1) + " " + case_text(cases[i]));
  }
  std::vector<ProbeDesign> catalogue;
  std::set<std::string> used;
  // A head dimension and mask the kernel refused once: probes like it are not asked again.
  std::set<std::pair<int64_t, bool>> refused_kinds;
  const auto call = [&](const ProbeDesign& p) {
    used.insert(p.label());
    Case c;
    try {
      c = kernel->run(p, probe_inputs(p, parse_format(format)));
    } catch (const ProbeRefused& e) {
      report("refused " + p.label() + ": " + e.what());
      refused_kinds.insert({p.d, p.causal});
      return false;
    }
    c.label = "probe " + p.label();
    check_case(c);
    cases.push_back(std::move(c));
    report("case " + std::to_string(cases.size()) + " " + case_text(cases.back()));
    return true;
  };
  if (kernel) {
    const ProbeLimits limits = kernel->limits();
    for (const ProbeDesign& p : first_probes(limits)) (void)call(p);
    catalogue = probe_catalogue(limits);
  }
  if (cases.empty()) throw std::invalid_argument("discover: the kernel accepts none of the probes");

  SearchOptions search_options{options.threads, 6, [&](const std::string& l) { report(l); }};
  std::optional<Evaluated> best;
  std::vector<Evaluated> neighbours;
  int64_t runs = 0;
  size_t probes_left = options.max_probes;
  bool confirmed_large = false;
  std::vector<std::string> untold;  // the ties when the larger inputs were asked for
  std::unique_ptr<Searcher> searcher;
  try {
    searcher = std::make_unique<Searcher>(cases, search_options);
    std::vector<std::pair<std::string, Evaluated>> starts;
    for (const std::string& family : families) {
      Evaluated e = searcher->evaluate(start_candidate(family, format, cases));
      report("start " + family + ": " + agreement_text(e.cases));
      starts.emplace_back(family, std::move(e));
    }
    // Every family is climbed, the closest start first: the start that agrees best can lead to a
    // spec that agrees worse than another start's climb (a kernel whose O is fa2's and LSE is
    // not).
    std::stable_sort(starts.begin(), starts.end(), [](const auto& a, const auto& b) {
      return better(a.second.score, b.second.score);
    });
    bool first_round = true;
    while (true) {
      SearchResult climbed;
      if (first_round) {
        first_round = false;
        for (const auto& [family, start] : starts) {
          SearchResult c = searcher->climb(start);
          report("climbed from " + family + ": " + agreement_text(c.best.cases));
          if (!best || better(c.best.score, climbed.best.score)) {
            climbed = std::move(c);
            best = climbed.best;
          } else {
            climbed.stopped = c.stopped;
          }
          if (climbed.stopped || climbed.best.score.exact()) break;
        }
      } else {
        climbed = searcher->climb(*best);
      }
      best = climbed.best;
      neighbours = std::move(climbed.neighbours);
      result.stopped = climbed.stopped;
      if (interrupted()) throw Cancelled(outer->reason());
      if (climbed.stopped || !kernel || !best->score.exact() || probes_left == 0) break;
      // Every move that agrees as well on everything so far: find probes on which it and the
      // spec differ, and ask the kernel.
      // The larger inputs agree as well: the spec is confirmed, and the ties are those no probe
      // told apart before them (a sweep on the larger inputs would cost more than the search).
      if (confirmed_large) {
        result.ties = untold;
        break;
      }
      if (neighbours.empty()) neighbours = searcher->sweep(*best);
      std::vector<const Evaluated*> ties;
      for (const Evaluated& n : neighbours) {
        if (same_fingerprints(n, *best)) ties.push_back(&n);
      }
      std::vector<std::pair<ProbeDesign, std::string>> chosen;
      std::vector<char> separated(ties.size(), 0);
      size_t scanned = 0;
      for (const ProbeDesign& p : catalogue) {
        if (chosen.size() >= std::min(kProbesPerRound, probes_left) || scanned >= kProbesScanned)
          break;
        if (used.count(p.label()) || refused_kinds.count({p.d, p.causal})) continue;
        ++scanned;
        const Case trial = unfilled_case(p, probe_inputs(p, parse_format(format)), cases.front());
        const uint64_t mine = evaluate_case(best->candidate.spec(), trial).fingerprint;
        std::string moves;
        for (size_t t = 0; t < ties.size(); ++t) {
          if (separated[t]) continue;
          uint64_t theirs = 0;
          try {
            theirs = evaluate_case(ties[t]->candidate.spec(), trial).fingerprint;
          } catch (const Cancelled&) {
            throw;
          } catch (const std::exception&) {
            continue;  // refused on this shape
          }
          if (theirs != mine) {
            separated[t] = 1;
            moves += (moves.empty() ? "" : ", ") + move_text(ties[t]->move);
          }
        }
        if (!moves.empty()) chosen.emplace_back(p, moves);
      }
      // Once no probe tells a tie apart: the largest probes, to confirm on larger inputs.
      if (chosen.empty() && !confirmed_large) {
        confirmed_large = true;
        for (const Evaluated* t : ties) untold.push_back(move_text(t->move));
        for (auto p = catalogue.rbegin();
             p != catalogue.rend() && chosen.size() < std::min(kLargeProbes, probes_left); ++p) {
          if (!used.count(p->label()) && !refused_kinds.count({p->d, p->causal}))
            chosen.emplace_back(*p, "");
        }
      }
      if (chosen.empty()) {
        for (const Evaluated* t : ties) result.ties.push_back(move_text(t->move));
        break;
      }
      for (const auto& [p, moves] : chosen) {
        report("confirm " + p.label() +
               (moves.empty() ? " (a larger input)" : " tells the spec from " + moves));
        (void)call(p);
        --probes_left;
      }
      runs += searcher->evaluations();
      searcher = std::make_unique<Searcher>(cases, search_options);
      best = searcher->evaluate(best->candidate);
      report("recheck " + best->candidate.spec() + ": " + agreement_text(best->cases));
    }
  } catch (const Cancelled&) {
    if (interrupted()) throw;
    result.stopped = true;
  }
  if (searcher) runs += searcher->evaluations();

  result.cases = cases;
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  result.runs = runs;
  if (!best) {
    // Stopped before the first spec ran: the first family, unchecked.
    result.spec = start_candidate(families.front(), format, cases).spec();
    report("result stopped at the time limit before any spec was checked");
    report("spec " + result.spec);
    return result;
  }
  result.spec = best->candidate.spec();
  result.agreement = best->cases;
  result.bit_exact = best->score.exact() && best->cases.size() == cases.size();
  result.remaining = remaining_rows(*best, neighbours);
  for (size_t i = 0; i < best->cases.size(); ++i) {
    report("agreement case " + std::to_string(i + 1) + ": " + agreement_text({best->cases[i]}));
  }
  report("agreement all: " + agreement_text(best->cases));
  for (size_t i = 0; i < result.remaining.size() && i < kRowsReported; ++i) {
    report(row_line(result.remaining[i], cases));
  }
  if (result.remaining.size() > kRowsReported) {
    report("remaining " + std::to_string(result.remaining.size() - kRowsReported) +
           " more rows differ");
  }
  // One line per key: "tie flex_compile=dynamic|static".
  std::vector<std::pair<std::string, std::string>> grouped;
  for (const std::string& t : result.ties) {
    const std::string key = t.substr(0, t.find('=')), value = t.substr(t.find('=') + 1);
    auto it = std::find_if(grouped.begin(), grouped.end(), [&](const auto& g) {
      return g.first == key && t.find(',') == std::string::npos;
    });
    if (it == grouped.end() || t.find(',') != std::string::npos) {
      grouped.emplace_back(key, value);
    } else {
      it->second += "|" + value;
    }
  }
  for (const auto& [key, values] : grouped)
    report("tie " + key + "=" + values + ": agrees with the kernel wherever the spec does");
  char timing[96];
  std::snprintf(timing, sizeof timing, "time %.1f s, %" PRId64 " runs", result.seconds,
                result.runs);
  report(timing);
  if (result.bit_exact) {
    report("result bit-exact");
  } else if (result.stopped) {
    report("result stopped at the time limit: the closest spec so far");
  } else {
    report("result closest: no move agrees better");
  }
  report("spec " + result.spec);
  return result;
}

}  // namespace simprec::discover
