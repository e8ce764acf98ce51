// The edit distance behind "did you mean": hand-worked values, every pair of short strings against
// the recursive definition of optimal string alignment, and which names are offered.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "emulation/did_you_mean.hpp"

namespace {

using simprec::closest_names;
using simprec::did_you_mean;
using simprec::edit_distance;

TEST(EditDistance, HandWorkedValues) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("abc", ""), 3u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);  // k->s, e->i, +g
  EXPECT_EQ(edit_distance("atention", "attention"), 1u);
  EXPECT_EQ(edit_distance("rnee", "rne"), 1u);
  EXPECT_EQ(edit_distance("fomrat", "format"), 1u);  // one swap, where Levenshtein counts 2
  EXPECT_EQ(edit_distance("ab", "ba"), 1u);
  // Optimal string alignment edits no substring twice: "ca" -> "ac" -> "abc" is not allowed, so
  // 3 (Damerau-Levenshtein's unrestricted distance is 2).
  EXPECT_EQ(edit_distance("ca", "abc"), 3u);
}

// The definition, written as a recursion over the last characters: the oracle for the table the
// code fills row by row.
size_t osa_by_definition(const std::string& a, const std::string& b) {
  std::map<std::pair<size_t, size_t>, size_t> memo;
  std::function<size_t(size_t, size_t)> d = [&](size_t i, size_t j) -> size_t {
    if (i == 0) return j;
    if (j == 0) return i;
    if (const auto it = memo.find({i, j}); it != memo.end()) return it->second;
    size_t best = std::min(
        {d(i - 1, j) + 1, d(i, j - 1) + 1, d(i - 1, j - 1) + (a[i - 1] == b[j - 1] ? 0 : 1)});
    if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
      best = std::min(best, d(i - 2, j - 2) + 1);
    }
    return memo[{i, j}] = best;
  };
  return d(a.size(), b.size());
}

TEST(EditDistance, EveryPairOfShortStringsMatchesTheDefinition) {
  // All strings of length 0 to 4 over three letters: 121 strings, 14641 pairs.
  std::vector<std::string> words{""};
  for (size_t begin = 0, length = 1; length <= 4; ++length) {
    const size_t end = words.size();
    for (size_t w = begin; w < end; ++w) {
      for (const char c : {'a', 'b', 'c'}) words.push_back(words[w] + c);
    }
    begin = end;
  }
  ASSERT_EQ(words.size(), 121u);
  for (const auto& a : words) {
    for (const auto& b : words) {
      ASSERT_EQ(edit_distance(a, b), osa_by_definition(a, b)) << "'" << a << "' '" << b << "'";
    }
  }
}

TEST(ClosestNames, OffersTheNearestWithinTheLimit) {
  const std::vector<std::string> modes{"rne", "rna", "rtz", "rup", "rdn", "rto", "sr", "rnr"};
  EXPECT_EQ(closest_names("rnee", modes), (std::vector<std::string>{"rne"}));
  // Ties are all offered, in the order given.
  EXPECT_EQ(closest_names("rn", modes), (std::vector<std::string>{"rne", "rna", "rdn", "rnr"}));
  // |word| / 3 edits at most: 2 for an 8-letter word, 1 below 6 letters.
  const std::vector<std::string> commands{"attention", "numerics", "validate"};
  EXPECT_EQ(closest_names("atention", commands), (std::vector<std::string>{"attention"}));
  EXPECT_EQ(closest_names("atentoin", commands), (std::vector<std::string>{"attention"}));
  EXPECT_TRUE(closest_names("atntoin", commands).empty());  // 3 edits from "attention"
  EXPECT_TRUE(closest_names("xyz", modes).empty());
  // A one-letter word is one edit from every one-letter name: nothing is offered.
  EXPECT_TRUE(closest_names("x", {"s", "o"}).empty());
  EXPECT_TRUE(closest_names("", modes).empty());
}

TEST(ClosestNames, NamesSharingAPartFollowTheNearest) {
  const std::vector<std::string> presets{"fa2", "fa3-fp8", "fp32", "sage", "torch-math"};
  EXPECT_EQ(closest_names("fa3", presets), (std::vector<std::string>{"fa2", "fa3-fp8"}));
  const std::vector<std::string> sites{"s", "p_cast", "o_out", "pv_acc", "grad_out"};
  EXPECT_EQ(closest_names("out_format", sites), (std::vector<std::string>{"o_out", "grad_out"}));
  // More than three names sharing a part is no hint.
  EXPECT_TRUE(closest_names("x_acc", {"pv_acc", "dq_acc", "dk_acc", "dv_acc"}).empty());
}

TEST(DidYouMean, JoinsTheNamesAsASentence) {
  EXPECT_EQ(did_you_mean("rnee", {"rne", "rna"}), "; did you mean 'rne'?");
  EXPECT_EQ(did_you_mean("fa3", {"fa2", "fa3-fp8"}), "; did you mean 'fa2' or 'fa3-fp8'?");
  EXPECT_EQ(did_you_mean("rn", {"rne", "rna", "rnr"}), "; did you mean 'rne', 'rna' or 'rnr'?");
  EXPECT_EQ(did_you_mean("qqqq", {"rne"}), "");
}

}  // namespace
