// Checking the emulated arithmetic against the MPFR oracle: an operation on encodings in
// every deterministic mode at once, with mismatches collected for a readable failure.
#pragma once

#include <cstdint>
#include <vector>

#include "emulation/arithmetic.hpp"
#include "tests/mpfr_oracle.hpp"

namespace simprec::testing {

using oracle::Op;

inline uint64_t run_op(Op op, RoundingContext& ctx, uint64_t a, uint64_t b, uint64_t c) {
  switch (op) {
    case Op::kAdd:
      return add(ctx, a, b);
    case Op::kSub:
      return sub(ctx, a, b);
    case Op::kMul:
      return mul(ctx, a, b);
    case Op::kDiv:
      return div(ctx, a, b);
    case Op::kFma:
      return fma(ctx, a, b, c);
    case Op::kSqrt:
      return sqrt(ctx, a);
  }
  return 0;
}

// Runs one operation in all six deterministic modes and compares each with MPFR.
struct Checker {
  Format format;
  oracle::Oracle o;
  oracle::Inputs in;
  std::vector<RoundingContext> ctx;
  oracle::Mismatches bad;
  uint64_t checked = 0;
  explicit Checker(const Format& f) : format(f), o(f) {
    for (RoundingMode m : oracle::kModes) ctx.emplace_back(f, Rounding{m});
  }
  void check(Op op, uint64_t a, uint64_t b = 0, uint64_t c = 0) {
    const auto& s = o.spec();
    in.set(oracle::decode(s, a), oracle::decode(s, b), oracle::decode(s, c));
    uint64_t expected[6];
    o.round_all([&](mpfr_ptr r, mpfr_rnd_t rnd) { return oracle::mpfr_op(op, r, in, rnd); },
                expected);
    for (int i = 0; i < 6; ++i) {
      const uint64_t got = run_op(op, ctx[i], a, b, c);
      ++checked;
      if (got != expected[i]) {
        bad.add(format.name() + " " + oracle::op_name(op) + " " +
                oracle::mode_name(oracle::kModes[i]) + " a=" + oracle::hex(a) +
                " b=" + oracle::hex(b) + " c=" + oracle::hex(c) + ": expected " +
                oracle::hex(expected[i]) + " got " + oracle::hex(got));
      }
    }
  }
};

}  // namespace simprec::testing
