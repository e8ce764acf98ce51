// Ranks in a build without MPI: always alone.
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "lib/distributed/ranks.hpp"

namespace simprec::distributed {

Ranks::Ranks() {
  if (const int n = launched_ranks(); n > 1) {
    throw std::runtime_error(
        "started as one of " + std::to_string(n) +
        " MPI ranks, but this simprec was built without MPI: each rank would run the whole "
        "sweep. Install Open MPI (libopenmpi-dev, openmpi-bin) and rebuild, or run without "
        "mpirun");
  }
}
Ranks::~Ranks() = default;

void Ranks::agree_on(const std::string&, const std::string&) {}

experiments::OtherProcesses& Ranks::others() {
  throw std::logic_error("Ranks::others: a single rank has no others");
}
std::optional<size_t> Ranks::ask_for_case() {
  throw std::logic_error("Ranks::ask_for_case: a single rank has no rank 0 to ask");
}
void Ranks::send_record(const nlohmann::json&) {
  throw std::logic_error("Ranks::send_record: a single rank has no rank 0 to send to");
}
void Ranks::finish() {}
void Ranks::abort(int exit_code) {
  std::exit(exit_code);
}

}  // namespace simprec::distributed
