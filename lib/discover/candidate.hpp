// A candidate numerics spec as the search holds it: the family it starts from, the format F and
// the items it changes, each key once, so that a move replaces a value rather than piling up.
#pragma once

#include <string>
#include <vector>

namespace simprec::discover {

struct Assignment {
  std::string key, value;
  bool operator==(const Assignment&) const = default;
};

// One step of the search: one or a few items set together.
using Move = std::vector<Assignment>;
std::string move_text(const Move& move);  // "key=value,key=value"

struct Candidate {
  std::string family;  // a preset, or a numerics file
  std::string format;  // F
  std::vector<Assignment> items;

  std::string spec() const;  // "FAMILY,format=F,KEY=VALUE,..."
  const Assignment* find(const std::string& key) const;
};

// The candidate with the move's items set: each replaces the item of its key, and a site group
// (all, products) replaces the items of its sites.
Candidate apply_move(const Candidate& candidate, const Move& move);

// The same numerics in canonical form (canonical_numerics): the family's base preset and each
// site and option that differs from it, in table order. Throws std::invalid_argument for a spec
// that is refused.
Candidate canonical(const Candidate& candidate);
// A numerics spec (a preset, PRESET,ITEM,..., or a numerics file) at `format` unless it names its
// own, in canonical form.
Candidate candidate_of(const std::string& spec, const std::string& format);

}  // namespace simprec::discover
