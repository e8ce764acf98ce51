// The .npy reader on arbitrary bytes (the seeds include 30 KB headers and tuples and dicts nested
// thousands deep, which the header parser must read or refuse without recursing): it either
// refuses them with an exception or returns an array whose data holds exactly the elements its
// shape says.
#include <cstdint>
#include <cstdlib>
#include <exception>

#include "fuzz/fuzz_file.hpp"
#include "lib/npy/npy.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const simprec::fuzzing::MemoryFile file(data, size);
  simprec::NpyArray array;
  try {
    array = simprec::read_npy(file.path());
  } catch (const std::exception&) {
    return 0;  // refused, with a message: what bad input should get
  }
  if (array.size() < 0) std::abort();
  const auto elements = static_cast<size_t>(array.size());
  if (array.data.size() != elements * array.element_bytes()) std::abort();
  if (array.to_doubles().size() != elements) std::abort();
  return 0;
}
