#include "emulation/did_you_mean.hpp"

#include <algorithm>

#include "emulation/excerpt.hpp"

namespace simprec {
namespace {

// The parts of at least three characters between '_' and '-'.
std::vector<std::string_view> long_parts(std::string_view text) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == '_' || text[i] == '-') {
      if (i - start >= 3) parts.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  return parts;
}

bool shares_a_part(std::string_view a, std::string_view b) {
  const auto b_parts = long_parts(b);
  for (const std::string_view p : long_parts(a)) {
    if (std::find(b_parts.begin(), b_parts.end(), p) != b_parts.end()) return true;
  }
  return false;
}

}  // namespace

size_t edit_distance(std::string_view a, std::string_view b) {
  // Three rows of the dynamic-programming table: d[i][j] is the distance between a's first i
  // characters and b's first j.
  std::vector<size_t> before(b.size() + 1), previous(b.size() + 1), row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    before.swap(previous);
    previous.swap(row);
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      row[j] = std::min({previous[j] + 1, row[j - 1] + 1, substitution});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        row[j] = std::min(row[j], before[j - 2] + 1);
      }
    }
  }
  return row[b.size()];
}

std::vector<std::string> closest_names(std::string_view word,
                                       const std::vector<std::string>& names) {
  const size_t limit = std::min(std::max<size_t>(1, word.size() / 3), word.size() - !word.empty());
  size_t best = limit + 1;
  std::vector<std::string> out;
  for (const std::string& name : names) {
    const size_t d = edit_distance(word, name);
    if (d == 0 || d > limit || d > best) continue;
    if (d < best) out.clear();
    best = d;
    out.push_back(name);
  }
  std::vector<std::string> sharing;
  for (const std::string& name : names) {
    if (name != word && std::find(out.begin(), out.end(), name) == out.end() &&
        shares_a_part(word, name)) {
      sharing.push_back(name);
    }
  }
  if (sharing.size() <= 3) out.insert(out.end(), sharing.begin(), sharing.end());
  return out;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& names) {
  const std::vector<std::string> close = closest_names(word, names);
  if (close.empty()) return "";
  std::string text = "; did you mean ";
  for (size_t i = 0; i < close.size(); ++i) {
    if (i > 0) text += i + 1 == close.size() ? " or " : ", ";
    text += "'" + excerpt(close[i]) + "'";
  }
  return text + "?";
}

}  // namespace simprec
