// No kernel selection: the tile as given, one key/value split.
#include <stdexcept>

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
    if (c.block_rows == 0 && c.block_cols == 0) {
      std::string known;
      for (const Dispatch* d : strategies_of<Dispatch>()) {
        if (d != this)
          known += (known.empty() ? "" : " or ") + ("dispatch=" + std::string(d->name()));
      }
      throw std::invalid_argument("tile=auto needs a dispatch (" + known +
                                  "); give the tile as BRxBC");
    }
    if (c.kv_splits == 0) c.kv_splits = 1;
  }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(None)

}  // namespace simprec::attention
