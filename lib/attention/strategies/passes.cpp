// The strategies of the slots that pick the engine's passes (passes.hpp).
#include "lib/attention/strategies/passes.hpp"

namespace simprec::attention {
namespace {

class Flash final : public Algorithm {
 public:
  Flash()
      : Algorithm({.name = "flash",
                   .doc = "flash attention: query tiles against key/value tiles with an online "
                          "softmax (flash_forward.cpp, flash_backward.cpp)"}) {}
};

class Standard final : public Algorithm {
 public:
  Standard()
      : Algorithm({.name = "standard",
                   .doc = "standard attention: whole rows of S, P normalised at p_norm, the "
                          "backward pass as autograd's (standard_attention.cpp)"}) {}
};

class Running final : public FlashState {
 public:
  Running()
      : FlashState({.name = "running",
                    .doc = "FlashAttention-2: O and l unnormalised against the running max, "
                           "rescaled by alpha where it grows, O / l once after the last tile"}) {}
};

class Normalised final : public FlashState {
 public:
  Normalised()
      : FlashState({.name = "normalised",
                    .doc = "FlashAttention-1's Algorithm 1: each tile's P~, l~ and P~V from the "
                           "tile's own max, then O, l and m renormalised and written back in "
                           "their sites' formats after every tile (paper B; "
                           "flash_normalised_forward.cpp)",
                    .needs = {{.key = "pv_mode", .values = {"fused"}},
                              {.key = "rowsum_lanes", .values = {"1"}},
                              {.key = "rowsum_block", .values = {"running"}},
                              {.key = "rescale", .values = {"exact"}}}}) {}
};

class Fused final : public PvMode {
 public:
  Fused()
      : PvMode({.name = "fused",
                .doc = "O accumulates across key blocks in the pv_acc accumulator "
                       "(FlashAttention-2); pv_promote adds a second level"}) {}
};

class PerBlock final : public PvMode {
 public:
  PerBlock()
      : PvMode({.name = "per-block",
                .doc = "each block's P.V rounded at pv_acc, then added to O at o_update (paper "
                       "A's reference)",
                .needs = {{.key = "pv_promote", .values = {"0"}},
                          {.key = "rowsum_lanes", .values = {"1"}}}}) {}
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(Flash, Standard, Running, Normalised, Fused, PerBlock)

}  // namespace simprec::attention
