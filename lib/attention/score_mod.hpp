// A score modification in FlexAttention's form, score_mod(score, b, h, q_idx, kv_idx), given as
// an expression ("tanh(score / 20) * 20", "score + bias[b, h, q_idx, kv_idx]",
// "where(q_idx >= kv_idx, score, -inf)"), compiled into two small programs: the modification
// and its derivative with respect to the score, each operation a node that the engine rounds as
// the compiled kernel does. What the programs model of Inductor and Triton (docs/score_mod.md):
// - floats are fp32 (constants rounded to it), indices integers, comparisons booleans; an
//   integer meeting a float is converted to fp32;
// - a division by a constant is a product with its reciprocal (rounded to fp32), as Inductor
//   rewrites it; a division of two floats is div.full.f32, Triton's `/`;
// - tanh and sqrt are libdevice's; exp is ex2.approx of x times fp32(log2 e), Triton's exp;
// - the derivative follows PyTorch's derivative formulas and decompositions (tanh: g (1 - y y),
//   exp: g y, ...); a node used several times sums its gradients in the order autograd delivers
//   them, the last use's first;
// - a product feeding a sum or difference is contracted into an fma as LLVM's NVPTX back end does
//   (aggressively: whatever the product's other uses; of two products, the one with fewer uses).
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace simprec::attention {

enum class ScoreOp : uint8_t {
  // Inputs: the score's product q.k and the softmax scale (the score is their product, which
  // the compiler contracts like any other), the batch, head, query and key indices; in the
  // derivative program, the probability P and dP - D (the arriving gradient is their product,
  // the kernel's p * (dp - Di)).
  kRawScore,
  kScale,
  kBatch,
  kHead,
  kQuery,
  kKey,
  kProbability,
  kGradFactor,
  kConst,
  kLoad,
  kNeg,
  kAbs,
  kSign,
  kNot,
  kToFloat,
  kTanh,
  kExp,
  kExp2,
  kLog,
  kSqrt,
  kSigmoid,
  kAdd,
  kSub,
  kMul,
  kDiv,
  kFloorDiv,
  kMod,
  kMin,
  kMax,
  kLt,
  kLe,
  kGt,
  kGe,
  kEq,
  kNe,
  kAnd,
  kOr,
  kFma,
  kWhere,
};
enum class ScoreType : uint8_t { kBool, kInt, kFloat };

struct ScoreNode {
  ScoreNode(ScoreOp o, ScoreType t) : op(o), type(t) {}
  ScoreOp op;
  ScoreType type;
  std::array<int32_t, 3> arg{-1, -1, -1};
  double value = 0;     // kConst
  int32_t tensor = -1;  // kLoad: which tensor; its indices in `index`
  std::vector<int32_t> index;
};

// A tensor the expression reads by name, name[i, j, ...] (each index an integer expression).
struct ScoreModTensor {
  std::string name;
  std::vector<int64_t> dims;
  std::vector<double> values;  // C order
  ScoreType type = ScoreType::kFloat;
};

struct ScoreProgram {
  std::vector<ScoreNode> nodes;  // each node's arguments come before it
  int32_t result = -1;
};

// The values an evaluation starts from.
struct ScoreModPoint {
  double raw_score = 0, scale = 1;
  int64_t b = 0, h = 0, q = 0, kv = 0;
  double p = 0, grad_factor = 0;
};

class ScoreMod {
 public:
  // Parses `text` (Python's syntax and precedence: + - * / // % **2, comparisons, & | ~, unary
  // -; the functions tanh exp exp2 log sqrt sigmoid abs where minimum maximum; names score b h
  // q_idx kv_idx inf True False and the tensors'). Throws std::invalid_argument quoting the text
  // and the column of the fault.
  ScoreMod(std::string text, std::vector<ScoreModTensor> tensors);

  const std::string& text() const { return text_; }
  const std::vector<ScoreModTensor>& tensors() const { return tensors_; }
  const ScoreProgram& modification() const { return modification_; }
  // d(modification)/d(score) times the arriving gradient P (dP - D).
  const ScoreProgram& derivative() const { return derivative_; }
  // FlexAttention's score_mods for a soft-cap and ALiBi (masking.hpp): cap tanh(score / cap)
  // and score + slope[h] (kv_idx - q_idx), as Gemma 2's and the ALiBi paper's code write them
  // (slopes rounded to fp32, the tensor the kernel would load).
  static ScoreMod softcap_and_alibi(double softcap, const std::vector<double>& slopes);

 private:
  std::string text_;
  std::vector<ScoreModTensor> tensors_;
  ScoreProgram modification_, derivative_;
};

// A mask in FlexAttention's form, mask_mod(b, h, q_idx, kv_idx) -> bool, as an expression of
// the same language without `score` ("q_idx // 300 == kv_idx // 300"); its float arithmetic, if
// any, in fp32, each operation correctly rounded.
class MaskMod {
 public:
  // Throws std::invalid_argument as ScoreMod does, and where the value is not a boolean.
  MaskMod(std::string text, std::vector<ScoreModTensor> tensors);
  const std::string& text() const { return text_; }
  // Whether key kv is visible to query q of batch b, head h. Throws std::out_of_range on a
  // read outside an array.
  bool visible(int64_t b, int64_t h, int64_t q, int64_t kv) const;

 private:
  std::string text_;
  std::vector<ScoreModTensor> tensors_;
  ScoreProgram program_;
};

// Building blocks of the constructors (score_mod_*.cpp). `mask`: a mask_mod's text (a boolean,
// no score) instead of a score_mod's.
ScoreProgram parse_score_program(std::string_view text, const std::vector<ScoreModTensor>& t,
                                 bool mask = false);
ScoreProgram derivative_program(const ScoreProgram& forward);
// Products feeding sums and differences contracted into fmas; unused nodes removed.
ScoreProgram contracted(const ScoreProgram& p);
const char* score_op_name(ScoreOp op);

// Every floating-point operation of a program in double, unrounded: the expression as written
// (the fp64 reference's arithmetic).
struct ExactScoreArithmetic {
  double constant(double c) const { return c; }
  double to_float(double x, uint32_t) const { return x; }
  double add(double x, double y, uint32_t) const { return x + y; }
  double mul(double x, double y, uint32_t) const { return x * y; }
  double fma(double x, double y, double z, uint32_t) const { return std::fma(x, y, z); }
  double div(double x, double y, uint32_t) const { return x / y; }
  double div_const(double x, double c, uint32_t) const { return x / c; }
  double tanh(double x, uint32_t) const { return std::tanh(x); }
  double exp(double x, uint32_t) const { return std::exp(x); }
  double exp2(double x, uint32_t) const { return std::exp2(x); }
  double log(double x, uint32_t) const { return std::log(x); }
  double sqrt(double x, uint32_t) const { return std::sqrt(x); }
  double sigmoid(double x, uint32_t) const { return 1.0 / (1.0 + std::exp(-x)); }
};

// Evaluates a program: Arith supplies the floating-point operations (rounded as the kernel
// does, or exact); integer and boolean operations are exact here. Throws std::out_of_range on
// a load outside its tensor.
template <class Arith>
double evaluate(const ScoreProgram& p, const std::vector<ScoreModTensor>& tensors,
                const ScoreModPoint& at, Arith& arith, std::vector<double>& v);

}  // namespace simprec::attention

#include "lib/attention/score_mod_evaluate.hpp"
