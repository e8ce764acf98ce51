#include "lib/npy/npy_header.hpp"

#include <stdexcept>

#include "lib/limits/strict_parse.hpp"

namespace simprec {
namespace {

class HeaderScanner {
 public:
  explicit HeaderScanner(std::string_view text) : text_(text) {}

  void skip_spaces() {
    while (at_ < text_.size() && (text_[at_] == ' ' || text_[at_] == '\t')) ++at_;
  }
  bool at_end() const { return at_ >= text_.size(); }
  char peek() const { return at_end() ? '\0' : text_[at_]; }
  // Consumes `c` (after spaces) when it comes next.
  bool accept(char c) {
    skip_spaces();
    if (peek() != c) return false;
    ++at_;
    return true;
  }
  void expect(char c, std::string_view what) {
    if (!accept(c)) fail(what);
  }
  // A quoted string without escapes: 'text' or "text".
  std::string quoted(std::string_view what) {
    skip_spaces();
    const char quote = peek();
    if (quote != '\'' && quote != '"') fail(what);
    const size_t end = text_.find(quote, at_ + 1);
    if (end == std::string_view::npos) fail("a closing quote");
    const std::string_view body = text_.substr(at_ + 1, end - at_ - 1);
    if (body.find('\\') != std::string_view::npos) fail("a string without escapes");
    at_ = end + 1;
    return std::string(body);
  }
  bool boolean() {
    skip_spaces();
    for (const auto& [word, value] : {std::pair{"True", true}, std::pair{"False", false}}) {
      const std::string_view w(word);
      if (text_.substr(at_, w.size()) == w) {
        at_ += w.size();
        return value;
      }
    }
    fail("True or False");
  }
  // "(2, 3)", "(5,)" or "()".
  std::vector<int64_t> dimensions() {
    expect('(', "a tuple of dimensions such as (2, 3)");
    std::vector<int64_t> shape;
    while (!accept(')')) {
      skip_spaces();
      const size_t start = at_;
      while (!at_end() && peek() >= '0' && peek() <= '9') ++at_;
      const std::string_view digits = text_.substr(start, at_ - start);
      const auto d = limits::parse_int64(digits);
      if (!d) {
        at_ = start;
        fail(shape.empty() ? "a dimension (a non-negative integer) or ')'"
                           : "a dimension (a non-negative integer)");
      }
      if (shape.size() == kMaxNpyDimensions) {
        at_ = start;
        fail("')': a shape has at most " + std::to_string(kMaxNpyDimensions) +
             " dimensions (numpy's own limit)");
      }
      shape.push_back(*d);
      if (accept(')')) break;
      expect(',', "',' or ')' after a dimension");
      // One entry needs its trailing comma ("(5,)"); more may have one.
    }
    return shape;
  }

  [[noreturn]] void fail(std::string_view expected) const {
    const std::string found =
        at_end() ? "the end of the header" : "'" + limits::excerpt(text_.substr(at_), 24) + "'";
    throw std::invalid_argument("header at byte " + std::to_string(at_) + ": expected " +
                                std::string(expected) + ", found " + found);
  }

 private:
  std::string_view text_;
  size_t at_ = 0;
};

}  // namespace

NpyHeader parse_npy_header(std::string_view text) {
  HeaderScanner scan(text);
  NpyHeader header;
  bool seen_descr = false, seen_order = false, seen_shape = false;
  scan.expect('{', "'{' opening the header's dict");
  while (!scan.accept('}')) {
    const std::string key = scan.quoted("a key ('descr', 'fortran_order' or 'shape') or '}'");
    scan.expect(':', "':' after the key");
    bool* seen = nullptr;
    if (key == "descr") {
      seen = &seen_descr;
      header.descr = scan.quoted("the dtype as a string such as '<f4'");
    } else if (key == "fortran_order") {
      seen = &seen_order;
      header.fortran_order = scan.boolean();
    } else if (key == "shape") {
      seen = &seen_shape;
      header.shape = scan.dimensions();
    } else {
      throw std::invalid_argument("header: unknown key '" + limits::excerpt(key) +
                                  "' (expected 'descr', 'fortran_order' and 'shape')");
    }
    if (*seen) throw std::invalid_argument("header: '" + key + "' given twice");
    *seen = true;
    if (scan.accept('}')) break;
    scan.expect(',', "',' or '}' after a value");
  }
  scan.skip_spaces();
  if (scan.peek() == '\n') scan.expect('\n', "");
  scan.skip_spaces();
  if (!scan.at_end()) scan.fail("only spaces and a newline after the dict");
  for (const auto& [seen, key] :
       {std::pair{seen_descr, "descr"}, std::pair{seen_order, "fortran_order"},
        std::pair{seen_shape, "shape"}}) {
    if (!seen) throw std::invalid_argument(std::string("header: no '") + key + "'");
  }
  return header;
}

}  // namespace simprec
