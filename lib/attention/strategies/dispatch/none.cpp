// No kernel selection: the tile as given, one key/value split.
#include "lib/attention/dispatch.hpp"

namespace simprec::attention {
namespace {

class None final : public Dispatch {
 public:
  None()
      : Dispatch({.name = "none",
                  .doc = "the tile as given (tile=auto refused), one key/value split, the "
                         "forward tile for the backward pass unless bwd_tile says"}) {}

  void resolve(AttentionConfig& c, const AttentionShape&) const override {
    check_auto_tile(c);
    if (c.kv_splits == 0) c.kv_splits = 1;
  }

  bool fills_auto_tile() const override { return false; }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(None)

}  // namespace simprec::attention
