#include "lib/discover/search.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <optional>
#include <set>
#include <stdexcept>

#include "emulation/cancellation.hpp"
#include "emulation/parallel.hpp"
#include "lib/attention/numerics_spec.hpp"
#include "lib/discover/search_space.hpp"

namespace simprec::discover {
namespace {

constexpr double kTolerance = 1e-12;
constexpr size_t kRepairsPerMove = 8;  // combinations kept for each refused move
constexpr size_t kPairCandidates = 8;  // the closest moves paired where no single move helps

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

std::vector<Searcher::Tried> Searcher::pairs(const Evaluated& base,
                                             const std::vector<Evaluated>& sorted) {
  // A move that changes no output on any case (a tie) pairs as itself: left out, so that the
  // closest moves that do change something are paired.
  std::vector<Evaluated> closest;
  for (const Evaluated& e : sorted) {
    bool changes = false;
    for (size_t i = 0; i < e.cases.size() && !changes; ++i)
      changes = e.cases[i].fingerprint != base.cases[i].fingerprint;
    if (changes) closest.push_back(e);
  }
  std::vector<Tried> out;
  std::set<std::string> seen = {base.candidate.spec()};
  const size_t n = std::min(closest.size(), kPairCandidates);
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = i + 1; j < n; ++j) {
      Move both = closest[i].move;
      both.insert(both.end(), closest[j].move.begin(), closest[j].move.end());
      Tried t{apply_move(base.candidate, both), both, ""};
      if (refusal(t).empty() && seen.insert(t.key).second) out.push_back(std::move(t));
    }
  }
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
        std::vector<Evaluated> both = run(pairs(base, full), all);
        std::sort(both.begin(), both.end(), by_score);
        if (!both.empty() && better(both.front().score, base.score)) {
          full = std::move(both);
          how = " (a pair of moves)";
        } else {
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
