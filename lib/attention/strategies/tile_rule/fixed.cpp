// The tile as the configuration gives it.
#include "lib/attention/strategies/tiling.hpp"

namespace simprec::attention {
namespace {

class Fixed final : public TileRule {
 public:
  Fixed() : TileRule({.name = "fixed", .doc = "the tile as given"}) {}
  void resolve(AttentionConfig&, int64_t, int64_t) const override {}
  bool keeps_tile() const override { return true; }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(Fixed)

}  // namespace simprec::attention
