#include "lib/discover/search.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <stdexcept>
#include <tuple>

#include "emulation/cancellation.hpp"
#include "emulation/parallel.hpp"
#include "lib/attention/numerics_spec.hpp"
#include "lib/discover/search_space.hpp"

namespace simprec::discover {
namespace {

constexpr double kTolerance = 1e-12;
constexpr size_t kRepairsPerMove = 8;  // combinations kept for each refused move
// Moves paired where no single move helps (C(10, 2) = 45 specs), and taken three at a time where
// no pair helps either (C(10, 3) = 120): items of a kernel that each change a few rows but bring
// them nearer only together (glibc's exp with the rescale from rounded maxima and the float
// scale). Each spec costs about one run of every case.
constexpr size_t kPairCandidates = 10;
constexpr size_t kTripleCandidates = 10;
// Pairs of moves that together make the most rows where the spec differs agree (the rest of the
// kernel's items may each fix only some rows, and break others, alone).
constexpr size_t kCoveringPairs = 20;
constexpr size_t kCoveringFixers = 64;  // the moves whose pairs are ranked so
// A move that changes no output alone (glibc's expf where every argument it misrounds is absent)
// may change them beside others: the closest single moves and pairs are each tried with every
// such move.
constexpr size_t kNearWithTies = 4;
// A quiet move changes whether at most kQuietRows rows agree (the key blocks walked last to first
// where one block holds every key): the kQuietMoves closest are each paired with every move.
constexpr size_t kQuietRows = 2;
constexpr size_t kQuietMoves = 4;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void log_line(const SearchOptions& o, const std::string& line) {
  if (o.log) o.log(line);
}

// Whether `text` names `key` as a word of its own (not inside a longer key).
bool mentions(const std::string& text, const std::string& key) {
  const auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + 1)) {
    const size_t end = at + key.size();
    if ((at == 0 || !word(text[at - 1])) && (end == text.size() || !word(text[end]))) return true;
  }
  return false;
}

}  // namespace

bool better(const Score& a, const Score& b) {
  // The share that differs plus their mean distance first: an fp32 output in which nearly every
  // value differs still tells a move that brings its values nearer, several of which may be
  // needed before any value agrees.
  const double ta = a.mismatch + a.distance, tb = b.mismatch + b.distance;
  if (ta < tb - kTolerance) return true;
  if (ta > tb + kTolerance) return false;
  if (a.mismatch < b.mismatch - kTolerance) return true;
  if (a.mismatch > b.mismatch + kTolerance) return false;
  if (a.distance < b.distance - kTolerance) return true;
  if (a.distance > b.distance + kTolerance) return false;
  return a.items < b.items;
}

Score score_of(const std::vector<CaseAgreement>& cases, size_t items) {
  std::map<std::string, std::array<double, 3>> pooled;  // values, differing, distance
  for (const CaseAgreement& c : cases) {
    for (const OutputAgreement& o : c.outputs) {
      auto& p = pooled[o.name];
      p[0] += static_cast<double>(o.values);
      p[1] += static_cast<double>(o.values - o.equal);
      p[2] += o.distance;
    }
  }
  Score s;
  s.items = items;
  for (const auto& [name, p] : pooled) {
    if (p[0] == 0) continue;
    s.mismatch += p[1] / p[0];
    s.distance += p[2] / p[0];
  }
  return s;
}

std::string agreement_text(const std::vector<CaseAgreement>& cases) {
  std::string text;
  for (const char* name : kOutputNames) {
    int64_t values = 0, equal = 0;
    bool seen = false;
    for (const CaseAgreement& c : cases) {
      for (const OutputAgreement& o : c.outputs) {
        if (o.name != name) continue;
        seen = true;
        values += o.values;
        equal += o.equal;
      }
    }
    if (!seen) continue;
    char buffer[96];
    std::snprintf(buffer, sizeof buffer, "%s%s %" PRId64 "/%" PRId64, text.empty() ? "" : " ", name,
                  equal, values);
    text += buffer;
  }
  return text;
}

Searcher::Searcher(const std::vector<Case>& evidence, SearchOptions options)
    : evidence_(evidence), options_(std::move(options)) {
  if (evidence_.empty()) throw std::invalid_argument("discover: no case to search against");
  for (const Case& c : evidence_) gradients_ = gradients_ || c.has_gradients();
}

std::vector<size_t> Searcher::all_cases() const {
  std::vector<size_t> all(evidence_.size());
  std::iota(all.begin(), all.end(), size_t{0});
  return all;
}

// The cheapest cases, up to a quarter of the evidence's work (at least one).
std::vector<size_t> Searcher::cheap_cases() const {
  std::vector<size_t> order = all_cases();
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return evidence_[a].cost() < evidence_[b].cost(); });
  double total = 0;
  for (const Case& c : evidence_) total += c.cost();
  std::vector<size_t> out;
  double sum = 0;
  for (size_t i : order) {
    if (!out.empty() && sum + evidence_[i].cost() > 0.25 * total) break;
    out.push_back(i);
    sum += evidence_[i].cost();
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string Searcher::refusal(Tried& t) const {
  try {
    t.candidate = canonical(t.candidate);
    t.key = t.candidate.spec();
    check_runnable(t.key, evidence_.front());
    return "";
  } catch (const std::invalid_argument& e) {
    return e.what();
  } catch (const std::logic_error& e) {
    return e.what();
  }
}

std::vector<Searcher::Tried> Searcher::neighbourhood(const Evaluated& base) {
  const attention::AttentionConfig config = case_config(base.candidate.spec(), evidence_.front());
  const std::vector<Move> singles = single_moves(config, {.gradients = gradients_});
  std::vector<Tried> tried(singles.size());
  std::vector<std::string> why(singles.size());
  parallel_for(static_cast<int64_t>(singles.size()), options_.threads, [&](int64_t i) {
    tried[i] = {apply_move(base.candidate, singles[i]), singles[i], ""};
    why[i] = refusal(tried[i]);
  });
  std::vector<Tried> out;
  std::set<std::string> seen = {base.candidate.spec()};
  for (size_t i = 0; i < tried.size(); ++i) {
    if (why[i].empty() && seen.insert(tried[i].key).second) out.push_back(tried[i]);
  }
  // A refused move, with each move of a key its refusal names (a strategy and the slot it
  // needs; a tile and the dispatch that fills it in).
  std::vector<size_t> refused;
  for (size_t i = 0; i < singles.size(); ++i) {
    if (!why[i].empty()) refused.push_back(i);
  }
  std::vector<std::vector<Tried>> repairs(refused.size());
  parallel_for(static_cast<int64_t>(refused.size()), options_.threads, [&](int64_t r) {
    const Move& first = singles[refused[r]];
    for (const Move& second : singles) {
      if (repairs[r].size() >= kRepairsPerMove) break;
      if (second.front().key == first.front().key ||
          !mentions(why[refused[r]], second.front().key)) {
        continue;
      }
      Move both = first;
      both.insert(both.end(), second.begin(), second.end());
      Tried t{apply_move(base.candidate, both), both, ""};
      if (refusal(t).empty()) repairs[r].push_back(std::move(t));
    }
  });
  for (auto& list : repairs) {
    for (Tried& t : list) {
      if (seen.insert(t.key).second) out.push_back(std::move(t));
    }
  }
  return out;
}

std::vector<Evaluated> Searcher::run(const std::vector<Tried>& tried,
                                     const std::vector<size_t>& subset) {
  const size_t n = tried.size(), m = subset.size();
  std::vector<std::optional<CaseAgreement>> results(n * m);
  std::vector<char> refused(n, 0);
  for (size_t i = 0; i < n; ++i) {
    const auto hit = cache_.find(tried[i].key);
    if (hit == cache_.end()) continue;
    for (size_t j = 0; j < m; ++j) {
      const auto found = hit->second.find(subset[j]);
      if (found != hit->second.end()) results[i * m + j] = found->second;
    }
  }
  std::vector<size_t> work;
  for (size_t k = 0; k < n * m; ++k) {
    if (!results[k]) work.push_back(k);
  }
  parallel_for(static_cast<int64_t>(work.size()), options_.threads, [&](int64_t w) {
    const size_t k = work[w], i = k / m;
    if (refused[i]) return;
    try {
      results[k] = evaluate_case(tried[i].key, evidence_[subset[k % m]]);
    } catch (const Cancelled&) {
      throw;
    } catch (const std::exception&) {
      refused[i] = 1;  // a spec the run refuses for this case's shape
    }
  });
  evaluations_ += static_cast<int64_t>(work.size());
  std::vector<Evaluated> out;
  for (size_t i = 0; i < n; ++i) {
    Evaluated e{tried[i].candidate, tried[i].move, {}, {}};
    bool complete = !refused[i];
    for (size_t j = 0; j < m && complete; ++j) {
      if (!results[i * m + j]) {
        complete = false;
        break;
      }
      cache_[tried[i].key].emplace(subset[j], *results[i * m + j]);
      e.cases.push_back(*results[i * m + j]);
    }
    if (!complete) continue;
    e.score = score_of(e.cases, e.candidate.items.size());
    out.push_back(std::move(e));
  }
  return out;
}

Evaluated Searcher::evaluate(const Candidate& candidate) {
  Tried t{candidate, {}, ""};
  t.candidate = canonical(candidate);
  t.key = t.candidate.spec();
  std::vector<Evaluated> e = run({t}, all_cases());
  if (e.empty()) {
    // Run it once more without catching, for the reason it was refused.
    for (const Case& c : evidence_) (void)evaluate_case(t.key, c);
    throw std::invalid_argument("the spec " + t.key + " is refused");
  }
  return e.front();
}

std::vector<Evaluated> Searcher::sweep(const Evaluated& base) {
  return run(neighbourhood(base), all_cases());
}

namespace {

bool changes_an_output(const Evaluated& base, const Evaluated& e) {
  for (size_t i = 0; i < e.cases.size() && i < base.cases.size(); ++i)
    if (e.cases[i].fingerprint != base.cases[i].fingerprint) return true;
  return false;
}

using RowKey = std::tuple<size_t, size_t, int64_t, int64_t>;  // case, output, problem, row

std::map<RowKey, size_t> rows_of(const Evaluated& base) {
  std::map<RowKey, size_t> index;
  for (size_t ci = 0; ci < base.cases.size(); ++ci)
    for (size_t oi = 0; oi < base.cases[ci].outputs.size(); ++oi)
      for (const RowDiff& d : base.cases[ci].outputs[oi].rows)
        index.emplace(RowKey{ci, oi, d.problem, d.row}, index.size());
  return index;
}

RowEffect row_effect(const std::map<RowKey, size_t>& base_rows, const Evaluated& e) {
  std::vector<bool> still(base_rows.size(), false);
  RowEffect effect;
  for (size_t ci = 0; ci < e.cases.size(); ++ci) {
    for (size_t oi = 0; oi < e.cases[ci].outputs.size(); ++oi) {
      for (const RowDiff& d : e.cases[ci].outputs[oi].rows) {
        const auto at = base_rows.find(RowKey{ci, oi, d.problem, d.row});
        if (at == base_rows.end()) {
          ++effect.broken;
        } else {
          still[at->second] = true;
        }
      }
    }
  }
  for (size_t r = 0; r < still.size(); ++r)
    if (!still[r]) effect.fixed.push_back(r);
  return effect;
}

size_t union_size(const std::vector<size_t>& a, const std::vector<size_t>& b) {
  size_t common = 0;
  for (size_t i = 0, j = 0; i < a.size() && j < b.size();) {
    if (a[i] == b[j]) {
      ++common, ++i, ++j;
    } else if (a[i] < b[j]) {
      ++i;
    } else {
      ++j;
    }
  }
  return a.size() + b.size() - common;
}

}  // namespace

RowEffects row_effects(const Evaluated& base, const std::vector<Evaluated>& moves) {
  const std::map<RowKey, size_t> base_rows = rows_of(base);
  RowEffects effects;
  for (const Evaluated& e : moves) {
    if (changes_an_output(base, e)) {
      effects.push_back(row_effect(base_rows, e));
    } else {
      effects.push_back(std::nullopt);
    }
  }
  return effects;
}

std::vector<Searcher::Tried> Searcher::tried_together(const Evaluated& base,
                                                      const std::vector<const Evaluated*>& moves,
                                                      std::set<std::string>& seen) {
  Move all;
  for (const Evaluated* e : moves) all.insert(all.end(), e->move.begin(), e->move.end());
  Tried t{apply_move(base.candidate, all), all, ""};
  std::vector<Tried> out;
  if (refusal(t).empty() && seen.insert(t.key).second) out.push_back(std::move(t));
  return out;
}

std::vector<Searcher::Tried> Searcher::combinations(const Evaluated& base,
                                                    const std::vector<Evaluated>& sorted,
                                                    size_t size, size_t candidates) {
  // A move that changes no output on any case (a tie) combines as itself: left out, so that the
  // closest moves that do change something are combined.
  std::vector<const Evaluated*> closest;
  for (const Evaluated& e : sorted)
    if (closest.size() < candidates && changes_an_output(base, e)) closest.push_back(&e);
  std::vector<Tried> out;
  std::set<std::string> seen = {base.candidate.spec()};
  const size_t n = closest.size();
  if (size == 0 || size > n) return out;
  // Every `size` of the n closest, in lexicographic order of their ranks.
  std::vector<size_t> pick(size);
  std::iota(pick.begin(), pick.end(), size_t{0});
  while (true) {
    std::vector<const Evaluated*> chosen;
    for (const size_t i : pick) chosen.push_back(closest[i]);
    for (Tried& t : tried_together(base, chosen, seen)) out.push_back(std::move(t));
    size_t at = size;
    while (at > 0 && pick[at - 1] == n - size + at - 1) --at;
    if (at == 0) break;
    ++pick[at - 1];
    for (size_t i = at; i < size; ++i) pick[i] = pick[i - 1] + 1;
  }
  return out;
}

std::vector<Searcher::Tried> Searcher::covering_pairs(const Evaluated& base,
                                                      const std::vector<Evaluated>& singles,
                                                      const RowEffects& effects) {
  std::vector<std::pair<const Evaluated*, const RowEffect*>> fixers;
  for (size_t m = 0; m < singles.size(); ++m)
    if (effects[m] && !effects[m]->fixed.empty()) fixers.emplace_back(&singles[m], &*effects[m]);
  // The pairs among the moves that fix the most rows alone: all pairs of every fixer would be
  // quadratic in the moves times the rows, and a pair's rows fixed are at most the sum of its
  // two moves'.
  std::stable_sort(fixers.begin(), fixers.end(), [](const auto& a, const auto& b) {
    return a.second->fixed.size() > b.second->fixed.size();
  });
  if (fixers.size() > kCoveringFixers) fixers.resize(kCoveringFixers);
  // (rows fixed together, rows broken together, i, j): most fixed, then fewest broken.
  std::vector<std::tuple<size_t, size_t, size_t, size_t>> ranked;
  for (size_t i = 0; i < fixers.size(); ++i) {
    for (size_t j = i + 1; j < fixers.size(); ++j) {
      ranked.emplace_back(union_size(fixers[i].second->fixed, fixers[j].second->fixed),
                          fixers[i].second->broken + fixers[j].second->broken, i, j);
    }
  }
  const size_t keep = std::min(ranked.size(), kCoveringPairs);
  std::partial_sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(keep),
                    ranked.end(), [](const auto& a, const auto& b) {
                      if (std::get<0>(a) != std::get<0>(b)) return std::get<0>(a) > std::get<0>(b);
                      if (std::get<1>(a) != std::get<1>(b)) return std::get<1>(a) < std::get<1>(b);
                      return std::tie(std::get<2>(a), std::get<3>(a)) <
                             std::tie(std::get<2>(b), std::get<3>(b));
                    });
  std::vector<Tried> out;
  std::set<std::string> seen = {base.candidate.spec()};
  for (size_t r = 0; r < keep; ++r) {
    const auto [fixed, broken, i, j] = ranked[r];
    for (Tried& t : tried_together(base, {fixers[i].first, fixers[j].first}, seen))
      out.push_back(std::move(t));
  }
  return out;
}

std::vector<Searcher::Tried> Searcher::with_ties(const Evaluated& base,
                                                 const std::vector<Evaluated>& singles,
                                                 const RowEffects& effects,
                                                 const std::vector<Evaluated>& pairs) {
  std::vector<const Evaluated*> ties, quiet, changing;
  for (size_t m = 0; m < singles.size(); ++m) {
    const Evaluated* e = &singles[m];
    if (!effects[m]) {
      ties.push_back(e);
      continue;
    }
    changing.push_back(e);
    if (quiet.size() < kQuietMoves && effects[m]->fixed.size() + effects[m]->broken <= kQuietRows)
      quiet.push_back(e);
  }
  std::vector<const Evaluated*> near(
      changing.begin(),
      changing.begin() + static_cast<std::ptrdiff_t>(std::min(changing.size(), kNearWithTies)));
  for (size_t i = 0; i < pairs.size() && i < kNearWithTies; ++i) near.push_back(&pairs[i]);
  std::vector<Tried> out;
  std::set<std::string> seen = {base.candidate.spec()};
  for (const Evaluated* n : near)
    for (const Evaluated* tie : ties)
      for (Tried& t : tried_together(base, {n, tie}, seen)) out.push_back(std::move(t));
  for (const Evaluated* q : quiet)
    for (const Evaluated* c : changing)
      if (c != q)
        for (Tried& t : tried_together(base, {q, c}, seen)) out.push_back(std::move(t));
  return out;
}

SearchResult Searcher::climb(const Evaluated& start) {
  SearchResult result;
  result.best = start;
  const auto by_score = [](const Evaluated& a, const Evaluated& b) {
    return better(a.score, b.score);
  };
  try {
    while (!result.best.score.exact()) {
      const auto began = std::chrono::steady_clock::now();
      const int64_t evaluations_before = evaluations_;
      const Evaluated& base = result.best;
      std::vector<Tried> moves = neighbourhood(base);
      const std::vector<size_t> cheap = cheap_cases(), all = all_cases();
      std::vector<Evaluated> full;
      bool swept = cheap.size() == all.size();
      if (swept) {
        full = run(moves, all);
      } else {
        std::vector<Evaluated> screened = run(moves, cheap);
        std::sort(screened.begin(), screened.end(), by_score);
        std::vector<Tried> promoted;
        for (size_t i = 0; i < screened.size() && i < options_.promote; ++i) {
          promoted.push_back(
              {screened[i].candidate, screened[i].move, screened[i].candidate.spec()});
        }
        full = run(promoted, all);
      }
      std::sort(full.begin(), full.end(), by_score);
      const char* how = "";
      if ((full.empty() || !better(full.front().score, base.score)) && !swept) {
        full = run(moves, all);  // every move on every case: one that only a costly case shows
        std::sort(full.begin(), full.end(), by_score);
        swept = true;
        how = " (every move on every case)";
      }
      if (full.empty() || !better(full.front().score, base.score)) {
        bool helped = false;
        const auto take_if_better = [&](std::vector<Evaluated> together, const char* text) {
          std::sort(together.begin(), together.end(), by_score);
          if (together.empty() || !better(together.front().score, base.score)) return false;
          full = std::move(together);
          how = text;
          return helped = true;
        };
        // The row effects of every single move, once for the stages that use them.
        const RowEffects effects = row_effects(base, full);
        std::vector<Tried> pairs = combinations(base, full, 2, kPairCandidates);
        for (Tried& t : covering_pairs(base, full, effects)) {
          const bool known = std::any_of(pairs.begin(), pairs.end(),
                                         [&](const Tried& p) { return p.key == t.key; });
          if (!known) pairs.push_back(std::move(t));
        }
        std::vector<Evaluated> paired = run(pairs, all);
        std::sort(paired.begin(), paired.end(), by_score);
        if (!take_if_better(paired, " (a pair of moves)") &&
            !take_if_better(run(with_ties(base, full, effects, paired), all),
                            " (moves with one that alone changes nothing)")) {
          take_if_better(run(combinations(base, full, 3, kTripleCandidates), all),
                         " (three moves together)");
        }
        if (!helped) {
          if (swept) result.neighbours = std::move(full);
          break;
        }
      }
      ++result.steps;
      result.best = full.front();
      char timing[96];
      std::snprintf(timing, sizeof timing, " (%" PRId64 " runs, %.1f s)",
                    evaluations_ - evaluations_before, seconds_since(began));
      log_line(options_, "step " + std::to_string(result.steps) + " " +
                             move_text(result.best.move) + ": " +
                             agreement_text(result.best.cases) + how + timing);
    }
    // The moves around a spec that still differs name what would make each row agree.
    if (result.neighbours.empty() && !result.best.score.exact())
      result.neighbours = sweep(result.best);
  } catch (const Cancelled&) {
    result.stopped = true;
  }
  return result;
}

}  // namespace simprec::discover
