#include "lib/discover/candidate.hpp"

#include <algorithm>
#include <stdexcept>

#include "lib/attention/numerics_spec.hpp"
#include "lib/attention/site.hpp"

namespace simprec::discover {
namespace {

bool in_group(const std::string& key, const std::vector<attention::Site>& group) {
  return std::any_of(group.begin(), group.end(),
                     [&](attention::Site s) { return attention::site_name(s) == key; });
}

}  // namespace

std::string move_text(const Move& move) {
  std::string text;
  for (const Assignment& a : move) text += (text.empty() ? "" : ",") + a.key + "=" + a.value;
  return text;
}

std::string Candidate::spec() const {
  std::string text = family + ",format=" + format;
  for (const Assignment& a : items) text += "," + a.key + "=" + a.value;
  return text;
}

const Assignment* Candidate::find(const std::string& key) const {
  for (const Assignment& a : items) {
    if (a.key == key) return &a;
  }
  return nullptr;
}

Candidate apply_move(const Candidate& candidate, const Move& move) {
  Candidate out = candidate;
  for (const Assignment& a : move) {
    const std::vector<attention::Site> group = attention::site_group(a.key);
    std::erase_if(out.items, [&](const Assignment& item) {
      return item.key == a.key || (!group.empty() && in_group(item.key, group));
    });
    out.items.push_back(a);
  }
  return out;
}

Candidate canonical(const Candidate& candidate) {
  return candidate_of(candidate.spec(), candidate.format);
}

Candidate candidate_of(const std::string& spec, const std::string& format) {
  const std::string text =
      attention::canonical_numerics(attention::parse_numerics(spec, parse_format(format)));
  Candidate out;
  size_t start = 0;
  bool first = true;
  while (start <= text.size()) {
    const size_t end = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, end - start);
    start = end + 1;
    if (first) {
      out.family = item;
      first = false;
      continue;
    }
    const size_t eq = item.find('=');
    if (eq == std::string::npos) {
      throw std::invalid_argument("the canonical spec '" + text + "' holds '" + item +
                                  "', which the search cannot move (a mitigation)");
    }
    if (item.substr(0, eq) == "format") {
      out.format = item.substr(eq + 1);
    } else {
      out.items.push_back({item.substr(0, eq), item.substr(eq + 1)});
    }
  }
  if (out.format.empty()) out.format = format;
  return out;
}

}  // namespace simprec::discover
