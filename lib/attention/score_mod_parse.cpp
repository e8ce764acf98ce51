// The score_mod expression's grammar (PEGTL, Python's precedence) and its typed program:
// constants folded in double as Python folds them before tracing, an integer meeting a float
// converted, each fault reported with its column.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <stdexcept>
#include <string>
#include <tao/pegtl.hpp>
#include <tao/pegtl/contrib/parse_tree.hpp>

#include "emulation/excerpt.hpp"
#include "lib/attention/score_mod.hpp"

namespace simprec::attention {

namespace {

namespace grammar {
using namespace tao::pegtl;

struct ws : star<space> {};
struct expr;
struct exponent : seq<one<'e', 'E'>, opt<one<'+', '-'>>, plus<digit>> {};
struct number : seq<sor<seq<plus<digit>, opt<one<'.'>, star<digit>>>, seq<one<'.'>, plus<digit>>>,
                    opt<exponent>, not_at<identifier_other>> {};
struct name : identifier {};
struct close_paren : one<')'> {};
struct close_bracket : one<']'> {};
struct arguments : opt<list<expr, seq<one<','>, ws>>> {};
struct call : seq<name, ws, one<'('>, ws, arguments, must<close_paren>> {};
struct subscript : seq<name, ws, one<'['>, ws, arguments, must<close_bracket>> {};
struct group : seq<one<'('>, ws, must<expr>, must<close_paren>> {};
struct atom : seq<sor<number, call, subscript, name, group>, ws> {};
struct unary;
struct pow_op : string<'*', '*'> {};
struct power : seq<atom, opt<pow_op, ws, must<unary>>> {};
struct neg_op : one<'-'> {};
struct pos_op : one<'+'> {};
struct not_op : one<'~'> {};
struct operand : seq<sor<neg_op, pos_op, not_op>, ws, must<unary>> {};
struct unary : sor<operand, power> {};
struct floordiv_op : string<'/', '/'> {};
struct div_op : seq<one<'/'>, not_at<one<'/'>>> {};
struct mul_op : seq<one<'*'>, not_at<one<'*'>>> {};
struct mod_op : one<'%'> {};
struct term : seq<unary, star<sor<floordiv_op, div_op, mul_op, mod_op>, ws, must<unary>>> {};
struct add_op : one<'+'> {};
struct sub_op : one<'-'> {};
struct sum : seq<term, star<sor<add_op, sub_op>, ws, must<term>>> {};
struct and_op : one<'&'> {};
struct bit_and : seq<sum, star<and_op, ws, must<sum>>> {};
struct or_op : one<'|'> {};
struct bit_or : seq<bit_and, star<or_op, ws, must<bit_and>>> {};
struct le_op : string<'<', '='> {};
struct ge_op : string<'>', '='> {};
struct eq_op : string<'=', '='> {};
struct ne_op : string<'!', '='> {};
struct lt_op : one<'<'> {};
struct gt_op : one<'>'> {};
struct comparison
    : seq<bit_or, opt<sor<le_op, ge_op, eq_op, ne_op, lt_op, gt_op>, ws, must<bit_or>>> {};
struct expr : seq<comparison> {};
struct end : eof {};
struct whole : seq<ws, must<expr>, must<end>> {};

template <typename Rule>
inline constexpr const char* message = nullptr;
template <>
inline constexpr const char* message<expr> = "expected an expression";
template <>
inline constexpr const char* message<unary> = "expected an operand";
template <>
inline constexpr const char* message<term> = "expected an operand";
template <>
inline constexpr const char* message<sum> = "expected an operand";
template <>
inline constexpr const char* message<bit_and> = "expected an operand";
template <>
inline constexpr const char* message<bit_or> = "expected an operand";
template <>
inline constexpr const char* message<close_paren> = "expected ')'";
template <>
inline constexpr const char* message<close_bracket> = "expected ']'";
template <>
inline constexpr const char* message<end> = "expected an operator or the end";
struct errors {
  template <typename Rule>
  static constexpr const char* message = grammar::message<Rule>;
};
template <typename Rule>
using control = must_if<errors>::control<Rule>;

template <typename Rule>
using selector = parse_tree::selector<
    Rule,
    parse_tree::store_content::on<number, name, pow_op, neg_op, pos_op, not_op, floordiv_op, div_op,
                                  mul_op, mod_op, add_op, sub_op, and_op, or_op, le_op, ge_op,
                                  eq_op, ne_op, lt_op, gt_op>,
    parse_tree::remove_content::on<call, subscript, arguments, operand>,
    parse_tree::fold_one::on<power, term, sum, bit_and, bit_or, comparison>>;

}  // namespace grammar

using Tree = tao::pegtl::parse_tree::node;

class Builder {
 public:
  Builder(std::string_view text, const std::vector<ScoreModTensor>& tensors, bool mask)
      : text_(text), tensors_(tensors), mask_(mask) {}

  ScoreProgram take(int32_t result) {
    p_.result = result;
    return std::move(p_);
  }

  int32_t build(const Tree& n) {
    if (n.is_type<grammar::number>()) return number(n);
    if (n.is_type<grammar::name>()) return name(n);
    if (n.is_type<grammar::call>()) return call(n);
    if (n.is_type<grammar::subscript>()) return subscript(n);
    if (n.is_type<grammar::operand>()) return unary(n);
    if (n.is_type<grammar::power>()) return power(n);
    // A chain: operand (operator operand)..., left to right; a comparison has one operator.
    int32_t x = build(*n.children[0]);
    for (size_t k = 1; k + 1 < n.children.size(); k += 2)
      x = binary(*n.children[k], x, build(*n.children[k + 1]));
    return x;
  }

 private:
  [[noreturn]] void fail(const Tree& at, const std::string& what) const {
    fail_at(at.begin().column, what);
  }
  [[noreturn]] void fail_at(size_t column, const std::string& what) const {
    throw std::invalid_argument(std::string(mask_ ? "mask_mod '" : "score_mod '") + excerpt(text_) +
                                "': column " + std::to_string(column) + ": " + what);
  }

  ScoreType type(int32_t k) const { return p_.nodes[k].type; }
  bool constant(int32_t k) const { return p_.nodes[k].op == ScoreOp::kConst; }
  double value(int32_t k) const { return p_.nodes[k].value; }

  int32_t add(ScoreOp op, ScoreType t, int32_t a = -1, int32_t b = -1, int32_t c = -1) {
    ScoreNode n{op, t};
    n.arg = {a, b, c};
    p_.nodes.push_back(std::move(n));
    return static_cast<int32_t>(p_.nodes.size() - 1);
  }
  int32_t constant_node(double v, ScoreType t) {
    ScoreNode n{ScoreOp::kConst, t};
    n.value = v;
    p_.nodes.push_back(n);
    return static_cast<int32_t>(p_.nodes.size() - 1);
  }
  // An integer or boolean as a float: a constant stays a constant (Python's float()).
  int32_t as_float(int32_t k) {
    if (type(k) == ScoreType::kFloat) return k;
    if (constant(k)) return constant_node(value(k), ScoreType::kFloat);
    return add(ScoreOp::kToFloat, ScoreType::kFloat, k);
  }
  int32_t as_number(const Tree& at, int32_t k) {
    if (type(k) == ScoreType::kBool) {
      if (constant(k)) return constant_node(value(k), ScoreType::kInt);
      fail(at, "a boolean used as a number (convert with where(c, 1, 0))");
    }
    return k;
  }

  int32_t number(const Tree& n) {
    const std::string s = n.string();
    double v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v))
      fail(n, "the number " + s + " is out of range");
    const bool integral = s.find_first_of(".eE") == std::string::npos;
    if (integral && !(std::fabs(v) <= 2147483647.0))
      fail(n, "the integer " + s + " is beyond 32 bits");
    return constant_node(v, integral ? ScoreType::kInt : ScoreType::kFloat);
  }

  int32_t name(const Tree& n) {
    const std::string s = n.string();
    if (s == "score") {
      if (mask_) fail(n, "a mask_mod has no score (b, h, q_idx and kv_idx decide a mask)");
      return score();
    }
    if (s == "b") return input(ScoreOp::kBatch, ScoreType::kInt);
    if (s == "h") return input(ScoreOp::kHead, ScoreType::kInt);
    if (s == "q_idx") return input(ScoreOp::kQuery, ScoreType::kInt);
    if (s == "kv_idx") return input(ScoreOp::kKey, ScoreType::kInt);
    if (s == "inf") return constant_node(INFINITY, ScoreType::kFloat);
    if (s == "True" || s == "False") return constant_node(s == "True", ScoreType::kBool);
    for (const ScoreModTensor& t : tensors_) {
      if (t.name == s) {
        if (!t.dims.empty())
          fail(n, "the tensor " + s + " has " + std::to_string(t.dims.size()) +
                      " dimensions; index it as " + s + "[...]");
        return load(n, t, {});
      }
    }
    fail(n, "unknown name '" + excerpt(s) +
                "' (expected score, b, h, q_idx, kv_idx, inf, True, False or a tensor's name)");
  }

  // The score, q.k times the scale: one node, however often the text names it.
  int32_t score() {
    if (score_ < 0)
      score_ = add(ScoreOp::kMul, ScoreType::kFloat, input(ScoreOp::kRawScore, ScoreType::kFloat),
                   input(ScoreOp::kScale, ScoreType::kFloat));
    return score_;
  }

  // One node per input, however often the text names it.
  int32_t input(ScoreOp op, ScoreType t) {
    for (size_t k = 0; k < p_.nodes.size(); ++k) {
      if (p_.nodes[k].op == op) return static_cast<int32_t>(k);
    }
    return add(op, t);
  }

  int32_t load(const Tree& at, const ScoreModTensor& t, std::vector<int32_t> index) {
    if (index.size() != t.dims.size())
      fail(at, "the tensor " + t.name + " has " + std::to_string(t.dims.size()) +
                   " dimensions, indexed with " + std::to_string(index.size()));
    const int32_t k = add(ScoreOp::kLoad, t.type);
    p_.nodes[k].tensor = static_cast<int32_t>(&t - tensors_.data());
    p_.nodes[k].index = std::move(index);
    return k;
  }

  std::vector<int32_t> arguments(const Tree& list) {
    std::vector<int32_t> out;
    for (const auto& child : list.children) out.push_back(build(*child));
    return out;
  }

  int32_t subscript(const Tree& n) {
    const std::string s = n.children[0]->string();
    std::vector<int32_t> index = arguments(*n.children[1]);
    for (const int32_t k : index) {
      if (type(k) != ScoreType::kInt) fail(n, "the indices of " + s + " must be integers");
    }
    for (const ScoreModTensor& t : tensors_) {
      if (t.name == s) return load(n, t, std::move(index));
    }
    fail(n, "unknown tensor '" + excerpt(s) + "'");
  }

  int32_t call(const Tree& n) {
    const std::string f = n.children[0]->string();
    const std::vector<int32_t> a = arguments(*n.children[1]);
    const auto arity = [&](size_t count) {
      if (a.size() != count)
        fail(n, f + " takes " + std::to_string(count) + " argument" + (count == 1 ? "" : "s") +
                    ", given " + std::to_string(a.size()));
    };
    struct Unary {
      const char* name;
      ScoreOp op;
      double (*fold)(double);
    };
    static constexpr Unary kUnary[] = {
        {"tanh", ScoreOp::kTanh, [](double x) { return std::tanh(x); }},
        {"exp", ScoreOp::kExp, [](double x) { return std::exp(x); }},
        {"exp2", ScoreOp::kExp2, [](double x) { return std::exp2(x); }},
        {"log", ScoreOp::kLog, [](double x) { return std::log(x); }},
        {"sqrt", ScoreOp::kSqrt, [](double x) { return std::sqrt(x); }},
        {"sigmoid", ScoreOp::kSigmoid, [](double x) { return 1 / (1 + std::exp(-x)); }},
    };
    for (const Unary& u : kUnary) {
      if (f != u.name) continue;
      arity(1);
      const int32_t x = as_float(as_number(n, a[0]));
      if (constant(x)) return constant_node(u.fold(value(x)), ScoreType::kFloat);
      return add(u.op, ScoreType::kFloat, x);
    }
    if (f == "abs") {
      arity(1);
      const int32_t x = as_number(n, a[0]);
      if (constant(x)) return constant_node(std::fabs(value(x)), type(x));
      return add(ScoreOp::kAbs, type(x), x);
    }
    if (f == "float") {
      arity(1);
      return as_float(as_number(n, a[0]));
    }
    if (f == "where") {
      arity(3);
      if (type(a[0]) != ScoreType::kBool) fail(n, "where's condition must be a boolean");
      auto [x, y] = promoted(n, a[1], a[2]);
      if (constant(a[0])) return value(a[0]) != 0 ? x : y;
      return add(ScoreOp::kWhere, type(x), a[0], x, y);
    }
    if (f == "minimum" || f == "maximum") {
      arity(2);
      auto [x, y] = promoted(n, a[0], a[1]);
      const ScoreOp op = f == "minimum" ? ScoreOp::kMin : ScoreOp::kMax;
      if (constant(x) && constant(y))
        return constant_node(
            op == ScoreOp::kMin ? std::fmin(value(x), value(y)) : std::fmax(value(x), value(y)),
            type(x));
      return add(op, type(x), x, y);
    }
    fail(n, "unknown function '" + excerpt(f) +
                "' (expected tanh, exp, exp2, log, sqrt, sigmoid, abs, float, where, minimum, "
                "maximum)");
  }

  // Two operands of one type: booleans as integers, an integer beside a float as a float.
  std::pair<int32_t, int32_t> promoted(const Tree& at, int32_t x, int32_t y) {
    if (type(x) == ScoreType::kBool && type(y) == ScoreType::kBool) return {x, y};
    x = as_number(at, x);
    y = as_number(at, y);
    if (type(x) == ScoreType::kFloat || type(y) == ScoreType::kFloat)
      return {as_float(x), as_float(y)};
    return {x, y};
  }

  int32_t unary(const Tree& n) {
    const Tree& op = *n.children[0];
    const int32_t x = build(*n.children[1]);
    if (op.is_type<grammar::pos_op>()) return as_number(op, x);
    if (op.is_type<grammar::not_op>()) {
      if (type(x) != ScoreType::kBool) fail(op, "~ of a number (only booleans are negated)");
      if (constant(x)) return constant_node(value(x) == 0, ScoreType::kBool);
      return add(ScoreOp::kNot, ScoreType::kBool, x);
    }
    const int32_t y = as_number(op, x);
    if (constant(y)) return constant_node(-value(y), type(y));
    return add(ScoreOp::kNeg, type(y), y);
  }

  int32_t power(const Tree& n) {
    const int32_t x = as_number(*n.children[1], build(*n.children[0]));
    const int32_t e = build(*n.children[2]);
    if (constant(x) && constant(e)) {
      const double v = std::pow(value(x), value(e));
      return constant_node(v, type(x) == ScoreType::kInt && type(e) == ScoreType::kInt
                                  ? ScoreType::kInt
                                  : ScoreType::kFloat);
    }
    if (!constant(e) || value(e) != 2)
      fail(*n.children[1], "** takes the constant exponent 2 (x * x, as Inductor computes it)");
    return add(ScoreOp::kMul, type(x), x, x);
  }

  int32_t binary(const Tree& op, int32_t x, int32_t y) {
    ScoreOp o;
    if (op.is_type<grammar::add_op>())
      o = ScoreOp::kAdd;
    else if (op.is_type<grammar::sub_op>())
      o = ScoreOp::kSub;
    else if (op.is_type<grammar::mul_op>())
      o = ScoreOp::kMul;
    else if (op.is_type<grammar::div_op>())
      o = ScoreOp::kDiv;
    else if (op.is_type<grammar::floordiv_op>())
      o = ScoreOp::kFloorDiv;
    else if (op.is_type<grammar::mod_op>())
      o = ScoreOp::kMod;
    else if (op.is_type<grammar::and_op>())
      o = ScoreOp::kAnd;
    else if (op.is_type<grammar::or_op>())
      o = ScoreOp::kOr;
    else if (op.is_type<grammar::lt_op>())
      o = ScoreOp::kLt;
    else if (op.is_type<grammar::le_op>())
      o = ScoreOp::kLe;
    else if (op.is_type<grammar::gt_op>())
      o = ScoreOp::kGt;
    else if (op.is_type<grammar::ge_op>())
      o = ScoreOp::kGe;
    else if (op.is_type<grammar::eq_op>())
      o = ScoreOp::kEq;
    else
      o = ScoreOp::kNe;
    if (o == ScoreOp::kAnd || o == ScoreOp::kOr) {
      if (type(x) != ScoreType::kBool || type(y) != ScoreType::kBool)
        fail(op, "& and | take booleans (compare numbers first)");
      if (constant(x) && constant(y))
        return constant_node(o == ScoreOp::kAnd ? (value(x) != 0 && value(y) != 0)
                                                : (value(x) != 0 || value(y) != 0),
                             ScoreType::kBool);
      return add(o, ScoreType::kBool, x, y);
    }
    if (o == ScoreOp::kEq || o == ScoreOp::kNe || o == ScoreOp::kLt || o == ScoreOp::kLe ||
        o == ScoreOp::kGt || o == ScoreOp::kGe) {
      auto [a, b] = promoted(op, x, y);
      if (constant(a) && constant(b)) {
        const double u = value(a), v = value(b);
        const bool r = o == ScoreOp::kEq   ? u == v
                       : o == ScoreOp::kNe ? u != v
                       : o == ScoreOp::kLt ? u < v
                       : o == ScoreOp::kLe ? u <= v
                       : o == ScoreOp::kGt ? u > v
                                           : u >= v;
        return constant_node(r, ScoreType::kBool);
      }
      return add(o, ScoreType::kBool, a, b);
    }
    auto [a, b] = promoted(op, x, y);
    if (o == ScoreOp::kDiv) {
      // True division: integers become floats (torch's int / int).
      a = as_float(a);
      b = as_float(b);
    }
    const ScoreType t = type(a);
    if ((o == ScoreOp::kFloorDiv || o == ScoreOp::kMod) && t != ScoreType::kInt)
      fail(op, "// and % take integers (index arithmetic)");
    if (constant(a) && constant(b)) {
      const double u = value(a), v = value(b);
      if ((o == ScoreOp::kDiv || o == ScoreOp::kFloorDiv || o == ScoreOp::kMod) && v == 0)
        fail(op, "division by zero");
      const double r = o == ScoreOp::kAdd        ? u + v
                       : o == ScoreOp::kSub      ? u - v
                       : o == ScoreOp::kMul      ? u * v
                       : o == ScoreOp::kDiv      ? u / v
                       : o == ScoreOp::kFloorDiv ? std::floor(u / v)
                                                 : u - v * std::floor(u / v);
      return constant_node(r, t);
    }
    if (o == ScoreOp::kDiv && constant(b) && value(b) == 0) fail(op, "division by the constant 0");
    return add(o, t, a, b);
  }

  std::string_view text_;
  const std::vector<ScoreModTensor>& tensors_;
  ScoreProgram p_;
  int32_t score_ = -1;
  bool mask_;
};

}  // namespace

ScoreProgram parse_score_program(std::string_view text, const std::vector<ScoreModTensor>& t,
                                 bool mask) {
  namespace pg = tao::pegtl;
  const std::string what = std::string(mask ? "mask_mod '" : "score_mod '") + excerpt(text) + "'";
  // The parser and the program's builder recurse once per nesting level and unary operator:
  // bounded (the unary operators by the length), so that no text can exhaust the stack.
  constexpr size_t kMaxLength = 2000, kMaxDepth = 100;
  if (text.size() > kMaxLength)
    throw std::invalid_argument(what + ": " + std::to_string(text.size()) +
                                " characters, more than " + std::to_string(kMaxLength));
  size_t depth = 0, deepest = 0;
  for (const char c : text) {
    if (c == '(' || c == '[') deepest = std::max(deepest, ++depth);
    if ((c == ')' || c == ']') && depth > 0) --depth;
  }
  if (deepest > kMaxDepth)
    throw std::invalid_argument(what + ": nested more than " + std::to_string(kMaxDepth) + " deep");
  pg::memory_input in(text.data(), text.size(), "score_mod");
  std::unique_ptr<Tree> root;
  try {
    root =
        pg::parse_tree::parse<grammar::whole, grammar::selector, pg::nothing, grammar::control>(in);
  } catch (const pg::parse_error& e) {
    const size_t column = e.positions().empty() ? 0 : e.positions().front().column;
    throw std::invalid_argument(std::string(mask ? "mask_mod '" : "score_mod '") + excerpt(text) +
                                "': column " + std::to_string(column) + ": " +
                                std::string(e.message()));
  }
  if (!root || root->children.size() != 1)
    throw std::invalid_argument(std::string(mask ? "mask_mod '" : "score_mod '") + excerpt(text) +
                                "': expected an expression");
  Builder builder(text, t, mask);
  const int32_t result = builder.build(*root->children[0]);
  ScoreProgram p = builder.take(result);
  if (mask) {
    if (p.nodes[p.result].type != ScoreType::kBool)
      throw std::invalid_argument("mask_mod '" + excerpt(text) +
                                  "': its value is not a boolean (compare: q_idx >= kv_idx)");
    return p;
  }
  if (p.nodes[p.result].type == ScoreType::kBool)
    throw std::invalid_argument("score_mod '" + excerpt(text) +
                                "': its value is a boolean (a mask belongs in mask_mod)");
  if (p.nodes[p.result].type == ScoreType::kInt) {
    ScoreNode n{ScoreOp::kToFloat, ScoreType::kFloat};
    n.arg[0] = p.result;
    p.nodes.push_back(n);
    p.result = static_cast<int32_t>(p.nodes.size() - 1);
  }
  return p;
}

}  // namespace simprec::attention
