// Suggestions for a mistyped name ("unknown preset 'fa3'; did you mean 'fa2' or 'fa3-fp8'?"): the
// known names a likely typo of `word` was meant to be. CLI11 and Boost offer no edit distance;
// LLVM's and GoogleTest's are internal to those projects.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace simprec {

// The optimal string alignment distance: the fewest insertions, deletions, substitutions and
// swaps of two adjacent characters that turn `a` into `b`, no character edited twice ("atention"
// and "rnee" are 1 from "attention" and "rne", "fomrat" 1 from "format"; Levenshtein counts a
// swap as 2).
size_t edit_distance(std::string_view a, std::string_view b);

// The names `word` was likely meant to be, in the order `names` gives them: those nearest to it
// in edit distance, where that distance is at most max(1, |word| / 3) and less than |word| (so
// that a short word does not match everything), then those that share a part of at least three
// characters with it (parts are separated by '_' and '-': "fa3" is a part of "fa3-fp8", "out" of
// "out_format" and "o_out"), where at most three names do. Empty when nothing is close.
std::vector<std::string> closest_names(std::string_view word,
                                       const std::vector<std::string>& names);

// "; did you mean 'a'?" (or "'a' or 'b'", "'a', 'b' or 'c'") for closest_names(word, names),
// each name quoted through excerpt(); "" when nothing is close.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& names);

}  // namespace simprec
