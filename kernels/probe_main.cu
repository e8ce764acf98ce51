// tc_probe: runs every tensor-core and element-wise probe once and writes what the hardware
// produced as raw little-endian files into an output folder:
//   <probe>.bin          D of every tile of simprec::tc_vectors::kProbes (fp32 as uint32, fp16 as
//   uint16) ex2_approx.bin, ex2_approx_ftz.bin   uint32 outputs for elementwise_input(kElementSeed,
//   i) cvt_bf16x2.bin (uint16), cvt_e4m3x2.bin, cvt_e5m2x2.bin (uint8) summary.txt          device,
//   sanity checks, exhaustive conversion comparisons
// Inputs are regenerated from the same generator (emulation/tensor_core_vectors.hpp) by the CPU
// tests, so only outputs travel.
//
// Build: nvcc -O2 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I<repo> kernels/probe_main.cu
#include <cuda_runtime.h>

#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "emulation/tensor_core_vectors.hpp"
#include "kernels/cvt_reference.cuh"
#include "kernels/tc_probe_kernels.cuh"

namespace tcv = simprec::tc_vectors;
namespace sk = simprec::kernels;

#define CHECK_CUDA(call)                                                 \
  do {                                                                   \
    cudaError_t err_ = (call);                                           \
    if (err_ != cudaSuccess) {                                           \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, \
                   cudaGetErrorString(err_));                            \
      std::exit(1);                                                      \
    }                                                                    \
  } while (0)

using tcv::kElementCount;
using tcv::kElementSeed;

static FILE* g_summary = nullptr;
static void say(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char buf[4096];
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  std::fputs(buf, stdout);
  std::fflush(stdout);
  if (g_summary) std::fputs(buf, g_summary);
}

static double decode(const tcv::ElementFormat& f, uint32_t bits) {
  const bool neg = (bits >> (f.width() - 1)) & 1;
  const uint32_t e = (bits >> f.mantissa_bits) & ((1u << f.exponent_bits) - 1);
  const uint32_t m = bits & ((1u << f.mantissa_bits) - 1);
  double v;
  if (e == 0) {
    v = std::ldexp(double(m), f.emin() - f.mantissa_bits);
  } else if (!f.finite_nan && e == (1u << f.exponent_bits) - 1) {
    v = m ? NAN : INFINITY;
  } else if (f.finite_nan && e == (1u << f.exponent_bits) - 1 && m == (1u << f.mantissa_bits) - 1) {
    v = NAN;
  } else {
    v = std::ldexp(double(m | (1u << f.mantissa_bits)), int(e) - f.bias - f.mantissa_bits);
  }
  return neg ? -v : v;
}

static sk::ProbeOp op_of(const tcv::Probe& p) {
  const bool wg = p.instruction == tcv::Instruction::kWgmma;
  const bool f16acc = p.accumulator == tcv::AccumulatorType::kFp16;
  switch (p.input) {
    case tcv::InputType::kBf16:
      return wg ? sk::ProbeOp::kWgmmaBf16F32 : sk::ProbeOp::kMmaBf16F32;
    case tcv::InputType::kFp16:
      if (f16acc) return wg ? sk::ProbeOp::kWgmmaFp16F16 : sk::ProbeOp::kMmaFp16F16;
      return wg ? sk::ProbeOp::kWgmmaFp16F32 : sk::ProbeOp::kMmaFp16F32;
    case tcv::InputType::kE4m3:
      if (f16acc) return wg ? sk::ProbeOp::kWgmmaE4m3F16 : sk::ProbeOp::kMmaE4m3F16;
      return wg ? sk::ProbeOp::kWgmmaE4m3F32 : sk::ProbeOp::kMmaE4m3F32;
    case tcv::InputType::kE5m2:
      return wg ? sk::ProbeOp::kWgmmaE5m2F32 : sk::ProbeOp::kMmaE5m2F32;
  }
  return sk::ProbeOp::kMmaBf16F32;
}

// Host operands of a probe, packed the way the kernels read them.
struct HostTiles {
  std::vector<uint8_t> a, b, c;
  size_t d_bytes = 0;
};

static HostTiles pack(const tcv::Probe& p, int tiles, const std::vector<uint16_t>& a16,
                      const std::vector<uint16_t>& b16, const std::vector<uint32_t>& c32) {
  HostTiles h;
  const bool in8 = tcv::element_format(p.input).width() == 8;
  const bool f16acc = p.accumulator == tcv::AccumulatorType::kFp16;
  auto narrow = [](const std::vector<uint16_t>& v, bool to8) {
    std::vector<uint8_t> out(v.size() * (to8 ? 1 : 2));
    for (size_t i = 0; i < v.size(); ++i) {
      if (to8)
        out[i] = uint8_t(v[i]);
      else
        std::memcpy(&out[2 * i], &v[i], 2);
    }
    return out;
  };
  h.a = narrow(a16, in8);
  h.b = narrow(b16, in8);
  if (f16acc) {
    h.c.resize(c32.size() * 2);
    for (size_t i = 0; i < c32.size(); ++i) {
      const uint16_t v = uint16_t(c32[i]);
      std::memcpy(&h.c[2 * i], &v, 2);
    }
  } else {
    h.c.resize(c32.size() * 4);
    std::memcpy(h.c.data(), c32.data(), h.c.size());
  }
  h.d_bytes = size_t(tiles) * p.m * p.n * (f16acc ? 2 : 4);
  return h;
}

static std::vector<uint8_t> run_tiles(const tcv::Probe& p, const HostTiles& h, int tiles,
                                      uint32_t lbo, uint32_t sbo) {
  void *da, *db, *dc, *dd;
  CHECK_CUDA(cudaMalloc(&da, h.a.size()));
  CHECK_CUDA(cudaMalloc(&db, h.b.size()));
  CHECK_CUDA(cudaMalloc(&dc, h.c.size()));
  CHECK_CUDA(cudaMalloc(&dd, h.d_bytes));
  CHECK_CUDA(cudaMemcpy(da, h.a.data(), h.a.size(), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(db, h.b.data(), h.b.size(), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(dc, h.c.data(), h.c.size(), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemset(dd, 0xA5, h.d_bytes));  // poison: every output must be written
  const sk::GemmArgs args{da, db, dc, dd, tiles, p.m, p.n, p.k, lbo, sbo};
  CHECK_CUDA(sk::launch_gemm(op_of(p), args));
  std::vector<uint8_t> d(h.d_bytes);
  CHECK_CUDA(cudaMemcpy(d.data(), dd, h.d_bytes, cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaFree(da));
  CHECK_CUDA(cudaFree(db));
  CHECK_CUDA(cudaFree(dc));
  CHECK_CUDA(cudaFree(dd));
  return d;
}

// Small-integer tiles whose products and sums are exact in every format: checks the fragment
// layouts (and, for wgmma, the shared-memory descriptor strides).
static int sanity_mismatches(const tcv::Probe& p, uint32_t lbo, uint32_t sbo) {
  const int tiles = 8;
  const tcv::ElementFormat& in = tcv::element_format(p.input);
  const tcv::ElementFormat& out =
      p.accumulator == tcv::AccumulatorType::kFp32 ? tcv::kFp32 : tcv::kFp16;
  std::vector<uint16_t> a(size_t(tiles) * p.m * p.k), b(size_t(tiles) * p.k * p.n);
  std::vector<uint32_t> c(size_t(tiles) * p.m * p.n);
  tcv::Rng rng(12345);
  auto small = [&](const tcv::ElementFormat& f, int max_exp) -> uint32_t {
    const int e = rng.range(-1, max_exp);
    if (e < 0) return 0;
    return tcv::encode(f, rng.chance(2), e, 0);
  };
  for (auto& v : a) v = uint16_t(small(in, 1));
  for (auto& v : b) v = uint16_t(small(in, 1));
  for (auto& v : c) v = small(out, 3);
  const HostTiles h = pack(p, tiles, a, b, c);
  const std::vector<uint8_t> d = run_tiles(p, h, tiles, lbo, sbo);
  int bad = 0;
  for (int t = 0; t < tiles; ++t)
    for (int i = 0; i < p.m; ++i)
      for (int j = 0; j < p.n; ++j) {
        double s = decode(out, c[(size_t(t) * p.m + i) * p.n + j]);
        for (int kk = 0; kk < p.k; ++kk)
          s += decode(in, a[(size_t(t) * p.m + i) * p.k + kk]) *
               decode(in, b[(size_t(t) * p.k + kk) * p.n + j]);
        const size_t idx = (size_t(t) * p.m + i) * p.n + j;
        uint32_t bits = 0;
        if (p.accumulator == tcv::AccumulatorType::kFp32)
          std::memcpy(&bits, &d[4 * idx], 4);
        else {
          uint16_t v;
          std::memcpy(&v, &d[2 * idx], 2);
          bits = v;
        }
        const double got = decode(out, bits);
        if (!(got == s)) ++bad;
      }
  return bad;
}

static void write_file(const std::string& path, const void* data, size_t bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f || std::fwrite(data, 1, bytes, f) != bytes) {
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
    std::exit(1);
  }
  std::fclose(f);
}

template <sk::ElementOp kOp>
static std::vector<uint32_t> run_elementwise(const std::vector<uint32_t>& in) {
  uint32_t *din, *dout;
  CHECK_CUDA(cudaMalloc(&din, in.size() * 4));
  CHECK_CUDA(cudaMalloc(&dout, in.size() * 4));
  CHECK_CUDA(cudaMemcpy(din, in.data(), in.size() * 4, cudaMemcpyHostToDevice));
  CHECK_CUDA(sk::launch_elementwise(kOp, din, dout, in.size()));
  std::vector<uint32_t> out(in.size());
  CHECK_CUDA(cudaMemcpy(out.data(), dout, in.size() * 4, cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaFree(din));
  CHECK_CUDA(cudaFree(dout));
  return out;
}

template <sk::ElementOp kOp>
static void exhaustive(const char* name, sk::NarrowFormat format) {
  unsigned long long* dcount;
  uint32_t* dbad;
  const int max_bad = 16;
  CHECK_CUDA(cudaMalloc(&dcount, 8));
  CHECK_CUDA(cudaMalloc(&dbad, 8 * max_bad));
  CHECK_CUDA(cudaMemset(dcount, 0, 8));
  sk::exhaustive_compare_kernel<kOp>
      <<<4096, 256>>>(0, uint64_t{1} << 32, sk::CvtReference{format}, dcount, dbad, max_bad);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());
  unsigned long long count = 0;
  uint32_t bad[2 * max_bad] = {};
  CHECK_CUDA(cudaMemcpy(&count, dcount, 8, cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(bad, dbad, sizeof bad, cudaMemcpyDeviceToHost));
  say("exhaustive %s: 4294967296 inputs, %llu differ from the integer RNE reference\n", name,
      count);
  for (unsigned long long i = 0; i < count && i < static_cast<unsigned long long>(max_bad); ++i)
    say("  input 0x%08x -> hw 0x%x, reference 0x%x\n", bad[2 * i], bad[2 * i + 1],
        sk::rne_narrow(format, bad[2 * i]));
  CHECK_CUDA(cudaFree(dcount));
  CHECK_CUDA(cudaFree(dbad));
}

int main(int argc, char** argv) {
  std::string out_dir = ".";
  std::string only;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--out") && i + 1 < argc)
      out_dir = argv[++i];
    else if (!std::strcmp(argv[i], "--only") && i + 1 < argc)
      only = argv[++i];
    else {
      std::fprintf(stderr, "usage: tc_probe [--out DIR] [--only PROBE]\n");
      return 2;
    }
  }
  g_summary = std::fopen((out_dir + "/summary.txt").c_str(), "w");
  cudaDeviceProp prop;
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  say("device: %s, sm_%d%d, %d SMs, driver %d, runtime %d\n", prop.name, prop.major, prop.minor,
      prop.multiProcessorCount, driver, runtime);

  for (const tcv::Probe& p : tcv::kProbes) {
    if (!only.empty() && only != p.name) continue;
    uint32_t lbo = 128, sbo = 256;
    int bad = sanity_mismatches(p, lbo, sbo);
    if (bad && p.instruction == tcv::Instruction::kWgmma) {
      const int swapped = sanity_mismatches(p, 256, 128);
      say("%s: sanity with lbo=128 sbo=256: %d mismatches; lbo=256 sbo=128: %d\n", p.name, bad,
          swapped);
      if (swapped == 0) {
        lbo = 256;
        sbo = 128;
        bad = 0;
      }
    }
    say("%-16s sanity (exact small-integer tiles): %s (%d mismatches)\n", p.name,
        bad ? "FAIL" : "ok", bad);

    std::vector<uint16_t> a(size_t(p.tiles) * p.m * p.k), b(size_t(p.tiles) * p.k * p.n);
    std::vector<uint32_t> c(size_t(p.tiles) * p.m * p.n);
    for (int t = 0; t < p.tiles; ++t)
      tcv::generate_tile(p, t, &a[size_t(t) * p.m * p.k], &b[size_t(t) * p.k * p.n],
                         &c[size_t(t) * p.m * p.n]);
    const HostTiles h = pack(p, p.tiles, a, b, c);
    const std::vector<uint8_t> d = run_tiles(p, h, p.tiles, lbo, sbo);
    write_file(out_dir + "/" + p.name + ".bin", d.data(), d.size());
    say("%-16s %d outputs written\n", p.name, p.outputs());
  }
  if (!only.empty()) return 0;

  std::vector<uint32_t> in(kElementCount);
  for (uint32_t i = 0; i < kElementCount; ++i) in[i] = tcv::elementwise_input(kElementSeed, i);
  {
    const auto y = run_elementwise<sk::ElementOp::kEx2Approx>(in);
    write_file(out_dir + "/ex2_approx.bin", y.data(), y.size() * 4);
    const auto z = run_elementwise<sk::ElementOp::kEx2ApproxFtz>(in);
    write_file(out_dir + "/ex2_approx_ftz.bin", z.data(), z.size() * 4);
  }
  {
    const auto y = run_elementwise<sk::ElementOp::kCvtBf16x2>(in);
    std::vector<uint16_t> n16(y.begin(), y.end());
    write_file(out_dir + "/cvt_bf16x2.bin", n16.data(), n16.size() * 2);
    const auto e4 = run_elementwise<sk::ElementOp::kCvtE4m3x2>(in);
    std::vector<uint8_t> n8(e4.begin(), e4.end());
    write_file(out_dir + "/cvt_e4m3x2.bin", n8.data(), n8.size());
    const auto e5 = run_elementwise<sk::ElementOp::kCvtE5m2x2>(in);
    std::vector<uint8_t> m8(e5.begin(), e5.end());
    write_file(out_dir + "/cvt_e5m2x2.bin", m8.data(), m8.size());
  }
  say("element-wise probes: %u inputs each written\n", kElementCount);
  exhaustive<sk::ElementOp::kCvtBf16x2>("cvt.rn.bf16x2.f32", sk::kCvtBf16);
  exhaustive<sk::ElementOp::kCvtE4m3x2>("cvt.rn.satfinite.e4m3x2.f32", sk::kCvtE4m3Sat);
  exhaustive<sk::ElementOp::kCvtE5m2x2>("cvt.rn.satfinite.e5m2x2.f32", sk::kCvtE5m2Sat);
  if (g_summary) std::fclose(g_summary);
  return 0;
}
