#include <algorithm>
#include <cmath>
#include <limits>

#include "plugins/cpu_reference/call_args.hpp"
#include "plugins/cpu_reference/kernels.hpp"

namespace simprec::cpu_reference {

SimprecStatus run_attention_forward_f32(const SimprecRunArgs* args) {
  return guarded(args, [&] {
    const SimprecTensor& q_t = tensor(args, "Q");
    const SimprecTensor& k_t = tensor(args, "K");
    const SimprecTensor& v_t = tensor(args, "V");
    const int64_t batch = dimension(q_t, 0), heads = dimension(q_t, 1), sq = dimension(q_t, 2),
                  d = dimension(q_t, 3);
    const int64_t sk = dimension(k_t, 2), dv = dimension(v_t, 3);
    const auto q = read_floats(q_t), k = read_floats(k_t), v = read_floats(v_t);
    const bool causal = bool_parameter(args, "causal", false);
    const auto scale = static_cast<float>(
        float64_parameter(args, "scale", 1.0 / std::sqrt(static_cast<double>(d))));

    std::vector<float> o(static_cast<size_t>(batch * heads * sq * dv));
    std::vector<float> lse(static_cast<size_t>(batch * heads * sq));
    std::vector<float> s(static_cast<size_t>(sk));
    for (int64_t bh = 0; bh < batch * heads; ++bh) {
      const float* qb = q.data() + bh * sq * d;
      const float* kb = k.data() + bh * sk * d;
      const float* vb = v.data() + bh * sk * dv;
      for (int64_t i = 0; i < sq; ++i) {
        // Top-left alignment (simprec_plugin.h): keys after i are masked.
        const int64_t visible = causal ? std::min<int64_t>(i + 1, sk) : sk;
        float row_max = -std::numeric_limits<float>::infinity();
        for (int64_t j = 0; j < visible; ++j) {
          float dot = 0.0f;
          for (int64_t c = 0; c < d; ++c) dot += qb[i * d + c] * kb[j * d + c];
          s[static_cast<size_t>(j)] = scale * dot;
          row_max = std::max(row_max, s[static_cast<size_t>(j)]);
        }
        float sum = 0.0f;
        float* out = o.data() + (bh * sq + i) * dv;
        for (int64_t j = 0; j < visible; ++j) {
          const float p = std::exp(s[static_cast<size_t>(j)] - row_max);
          sum += p;
          for (int64_t c = 0; c < dv; ++c) out[c] += p * vb[j * dv + c];
        }
        for (int64_t c = 0; c < dv; ++c) out[c] = visible > 0 ? out[c] / sum : 0.0f;
        lse[static_cast<size_t>(bh * sq + i)] =
            visible > 0 ? row_max + std::log(sum) : -std::numeric_limits<float>::infinity();
      }
    }
    write_floats(tensor(args, "O"), o);
    if (const SimprecTensor* lse_t = find_tensor(args, "LSE")) write_floats(*lse_t, lse);
  });
}

}  // namespace simprec::cpu_reference
