#include <cmath>

#include "plugins/cpu_reference/call_args.hpp"
#include "plugins/cpu_reference/kernels.hpp"

namespace simprec::cpu_reference {

SimprecStatus run_exp2_f32(const SimprecRunArgs* args) {
  return guarded(args, [&] {
    auto values = read_floats(tensor(args, "x"));
    for (auto& x : values) x = std::exp2(x);
    write_floats(tensor(args, "y"), values);
  });
}

}  // namespace simprec::cpu_reference
