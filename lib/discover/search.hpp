// The search: a steepest-ascent climb on agreement over the moves of search_space.hpp. Each step
// tries every move on the cheapest cases, the most promising on every case, and takes the best
// if it agrees with the kernel on more values (then on values nearer in ulps, then with fewer
// items); where no single move helps, every move on every case, then pairs of the closest and the
// pairs that together make the most differing rows agree, those and the closest moves with a
// move that alone changes nothing, then threes.
// A move a spec check refuses is tried again together with each move of a key its refusal names
// (a strategy that needs another slot's, a tile that needs a dispatch, a tensor-core product
// whose operand's cast is wider).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "lib/discover/agreement.hpp"
#include "lib/discover/candidate.hpp"
#include "lib/discover/evidence.hpp"

namespace simprec::discover {

// Agreement pooled per output over the cases: the sum over outputs of the share of values that
// differ and of the mean log2(1 + |ulps|), then the share alone, then the spec's item count.
struct Score {
  double mismatch = 0, distance = 0;
  size_t items = 0;
  bool exact() const { return mismatch == 0; }
};
bool better(const Score& a, const Score& b);  // strictly
Score score_of(const std::vector<CaseAgreement>& cases, size_t items);

// "O 4090/4096 LSE 64/64": equal values out of values, per output over the cases.
std::string agreement_text(const std::vector<CaseAgreement>& cases);

struct Evaluated {
  Candidate candidate;
  Move move;                         // how it was reached from the base it was tried against
  std::vector<CaseAgreement> cases;  // one per case of the evidence (or of the subset tried)
  Score score;
};

// What a move does to the rows where a base spec differs from the kernel: which of them it
// makes agree (indices into those rows, ascending) and how many agreeing rows it makes differ.
struct RowEffect {
  std::vector<size_t> fixed;
  size_t broken = 0;
};
// One per move of `moves` (each evaluated on the cases `base` was), none for a move that changes
// no output (a tie). The rows are numbered in order: case, output, then the output's rows.
using RowEffects = std::vector<std::optional<RowEffect>>;
RowEffects row_effects(const Evaluated& base, const std::vector<Evaluated>& moves);

struct SearchOptions {
  unsigned threads = 0;  // candidates tried at once (0: every core)
  size_t promote = 6;    // moves that go from the cheap cases on to every case
  std::function<void(const std::string& line)> log;
};

struct SearchResult {
  Evaluated best;
  // Where best still differs: every single move from it on every case (the last sweep); empty
  // where the time ran out.
  std::vector<Evaluated> neighbours;
  bool stopped = false;  // the time limit ended it
  int steps = 0;
};

class Searcher {
 public:
  Searcher(const std::vector<Case>& evidence, SearchOptions options);

  // The candidate on every case. Throws std::invalid_argument when it is refused.
  Evaluated evaluate(const Candidate& candidate);
  // Climbs from `start` (evaluated on every case) until no move agrees better, the kernel is
  // matched on every value, or the thread's cancellation token stops it (stopped: the best so
  // far).
  SearchResult climb(const Evaluated& start);
  // Every accepted single move from `base` (canonical, distinct, runnable), each evaluated on
  // every case. Throws Cancelled past the deadline.
  std::vector<Evaluated> sweep(const Evaluated& base);
  int64_t evaluations() const { return evaluations_; }

 private:
  struct Tried {
    Candidate candidate;
    Move move;
    std::string key;  // canonical spec
  };
  std::vector<Tried> neighbourhood(const Evaluated& base);
  // Every `size` moves of the `candidates` closest in `sorted` (those that change an output)
  // applied together, each spec once, refused ones left out.
  std::vector<Tried> combinations(const Evaluated& base, const std::vector<Evaluated>& sorted,
                                  size_t size, size_t candidates);
  // Pairs of single moves (of `singles`, with their `effects`) that together make the most rows
  // where the base differs agree, then break the fewest that agree.
  std::vector<Tried> covering_pairs(const Evaluated& base, const std::vector<Evaluated>& singles,
                                    const RowEffects& effects);
  // The moves applied together to the base, if that spec is runnable and not in `seen` (which
  // gains it).
  std::vector<Tried> tried_together(const Evaluated& base,
                                    const std::vector<const Evaluated*>& moves,
                                    std::set<std::string>& seen);
  // The closest single moves (of `singles`, sorted) and pairs (`pairs`, sorted), each with
  // every move of `singles` that changes no output alone; and the closest quiet moves (changing
  // whether a row agrees for very few rows) each with every move of `singles`.
  std::vector<Tried> with_ties(const Evaluated& base, const std::vector<Evaluated>& singles,
                               const RowEffects& effects, const std::vector<Evaluated>& pairs);
  // The candidates on the cases `subset` (indices), in parallel; refused ones are left out.
  std::vector<Evaluated> run(const std::vector<Tried>& tried, const std::vector<size_t>& subset);
  std::vector<size_t> cheap_cases() const;
  std::vector<size_t> all_cases() const;
  // Canonicalises t; the reason it is refused, or empty.
  std::string refusal(Tried& t) const;

  const std::vector<Case>& evidence_;
  SearchOptions options_;
  bool gradients_ = false;
  int64_t evaluations_ = 0;
  // Results by canonical spec and case, so that no candidate runs on a case twice.
  std::map<std::string, std::map<size_t, CaseAgreement>> cache_;
};

}  // namespace simprec::discover
