// pack_ground_truth RAW_DIR DATA_DIR: turns the raw outputs written by tc_probe (probe_main.cu)
// into the test data of tests/data/tensor_core/ (hashes of every chunk, the subset of tiles in
// full, the first outputs of the element-wise probes). Plain C++, no GPU needed.
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "emulation/tensor_core_vectors.hpp"

namespace tcv = simprec::tc_vectors;

static std::vector<uint8_t> read_all(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    std::exit(1);
  }
  return {std::istreambuf_iterator<char>(f), {}};
}
static void write_all(const std::string& path, const uint8_t* data, size_t n) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(n));
  if (!f) {
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
    std::exit(1);
  }
}

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: pack_ground_truth RAW_DIR DATA_DIR\n");
    return 2;
  }
  const std::string raw_dir = argv[1], data_dir = argv[2];
  for (const tcv::Probe& p : tcv::kProbes) {
    const std::vector<uint8_t> raw = read_all(raw_dir + "/" + p.name + ".bin");
    const size_t ob = p.output_bytes();
    if (raw.size() != size_t(p.outputs()) * ob) {
      std::fprintf(stderr, "%s: %zu bytes, expected %zu\n", p.name, raw.size(),
                   size_t(p.outputs()) * ob);
      return 1;
    }
    std::vector<uint8_t> hashes;
    for (size_t first = 0; first < size_t(p.outputs()); first += tcv::kHashChunkOutputs) {
      const uint64_t h = tcv::fnv1a64(&raw[first * ob], tcv::kHashChunkOutputs * ob);
      for (int i = 0; i < 8; ++i) hashes.push_back(uint8_t(h >> (8 * i)));
    }
    std::vector<uint8_t> subset;
    const size_t tile_bytes = size_t(p.m) * p.n * ob;
    for (int t = 0; t < p.tiles; ++t)
      if (tcv::tile_in_subset(t))
        subset.insert(subset.end(), raw.begin() + t * tile_bytes,
                      raw.begin() + (t + 1) * tile_bytes);
    write_all(data_dir + "/" + p.name + ".hashes", hashes.data(), hashes.size());
    write_all(data_dir + "/" + p.name + ".subset", subset.data(), subset.size());
    std::printf("%s: %zu hashes, %zu subset bytes\n", p.name, hashes.size() / 8, subset.size());
  }
  const struct {
    const char* name;
    size_t bytes;
  } elementwise[] = {{"ex2_approx", 4},
                     {"ex2_approx_ftz", 4},
                     {"cvt_bf16x2", 2},
                     {"cvt_e4m3x2", 1},
                     {"cvt_e5m2x2", 1}};
  for (const auto& e : elementwise) {
    const std::vector<uint8_t> raw = read_all(raw_dir + "/" + e.name + ".bin");
    write_all(data_dir + "/" + e.name + ".first", raw.data(), tcv::kElementSubset * e.bytes);
  }
  return 0;
}
