#include <cstdlib>
#include <string>

#include "lib/distributed/ranks.hpp"

namespace simprec::distributed {

int launched_ranks() {
  // Open MPI's mpirun, then the PMI of Slurm's srun and MPICH's launchers.
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"}) {
    if (const char* value = std::getenv(name)) {
      try {
        const int n = std::stoi(value);
        if (n > 0) return n;
      } catch (const std::exception&) {
      }
    }
  }
  return 1;
}

}  // namespace simprec::distributed
