// The strategies of the flash backward pass's fixed forms (backward.hpp).
#include <numbers>

#include "lib/attention/engine.hpp"
#include "lib/attention/strategies/backward.hpp"

namespace simprec::attention {
namespace {

class FromOutput final : public DeltaMode {
 public:
  FromOutput()
      : DeltaMode({.name = "output",
                   .doc = "D = rowsum(dO o O) from the stored O, in delta_sum's order "
                          "(FlashAttention-2's preprocessing kernel)"}) {}
};

class FromDpP final : public DeltaMode {
 public:
  FromDpP()
      : DeltaMode({.name = "dpp",
                   .doc = "D = rowsum(dP o P) from the recomputed P (paper A's stable variant; "
                          "the delta-dpp mitigation)"}) {}
};

class Chained final : public DqMode {
 public:
  Chained()
      : DqMode({.name = "chained",
                .doc = "dQ's product chain continues from the previous key block's "
                       "accumulator"}) {}
};

class BlockPartials final : public DqMode {
 public:
  BlockPartials()
      : DqMode({.name = "block-partials",
                .doc = "each key block's dQ product chained from zero, then added to dQ with "
                       "one rounding at dq_acc (FlashAttention-2's fp32 atomicAdd into "
                       "dq_accum, in key-block order)",
                .draws = {{"dq_acc", "the addition: (row, column, the key block's step + Bc)"}}}) {}
};

class ExpP final : public DsProb {
 public:
  ExpP() : DsProb({.name = "exp", .doc = "P as rounded at exp (FlashAttention-2's fp32 scores)"}) {}
};

class CastP final : public DsProb {
 public:
  CastP()
      : DsProb({.name = "cast",
                .doc = "P as cast at p_cast_bwd (the memory-efficient kernel keeps P in F)"}) {}
};

class ExactLog2e final : public LseLog2e {
 public:
  ExactLog2e() : LseLog2e({.name = "exact", .doc = "lse log2(e) rounded once at exp_arg"}) {}
  double log2e(const Engine&) const override { return std::numbers::log2e; }
};

class Fp32Log2e final : public LseLog2e {
 public:
  Fp32Log2e()
      : LseLog2e({.name = "fp32",
                  .doc = "lse times log2(e) rounded at exp_arg first (FlashAttention-2's lse * "
                         "float(M_LOG2E))"}) {}
  double log2e(const Engine& e) const override { return e.log2e; }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(FromOutput, FromDpP, Chained, BlockPartials, ExpP, CastP, ExactLog2e,
                            Fp32Log2e)

}  // namespace simprec::attention
