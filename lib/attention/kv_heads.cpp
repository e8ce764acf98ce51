#include "lib/attention/kv_heads.hpp"

namespace simprec::attention {

AttentionInputs with_kv_heads_expanded(const AttentionInputs& grouped) {
  const AttentionShape& s = grouped.shape;
  AttentionInputs out = grouped;
  out.shape.heads_kv = 0;
  const int64_t group = s.heads / s.kv_heads();
  const auto expand = [&](const std::vector<double>& x, int64_t width) {
    const int64_t block = s.nk * width;
    std::vector<double> e(static_cast<size_t>(s.problems() * block));
    for (int64_t p = 0; p < s.problems(); ++p) {
      const int64_t kp = (p / s.heads) * s.kv_heads() + (p % s.heads) / group;
      std::copy_n(x.begin() + kp * block, block, e.begin() + p * block);
    }
    return e;
  };
  out.k = expand(grouped.k, s.d);
  out.v = expand(grouped.v, s.dv);
  return out;
}

}  // namespace simprec::attention
