// Exhaustive probe of the GPU's approximate exp2 and log2 (ex2.approx.ftz.f32,
// ex2.approx.f32, lg2.approx.ftz.f32): which function of its input each one computes, so that
// the CPU can reproduce it bit for bit from a table.
//
// Hypothesis for ex2 (the multifunction unit works on a fixed-point argument): x is turned into
// i = R(x * 2^F), an integer with F fraction bits (R truncates toward -inf, toward zero, or
// rounds to nearest even), and
//     ex2(x) = T_F[i mod 2^F] * 2^(floor(i / 2^F) + 1),   T_F[j] = ex2(-1 + j * 2^-F),
// with results below 2^-126 flushed (.ftz) or rounded to nearest (the non-ftz form). For lg2:
//     lg2(x) = R'(e + L[m]),   x = 2^e * (1 + m * 2^-23),   L[m] = lg2(1 + m * 2^-23),
// R' rounding the exact sum to fp32 to nearest even or toward zero. Each hypothesis is checked
// against every fp32 input of its domain; mismatches are counted per binade of x.
//
//   mufu_probe OUT_DIR
//   mufu_probe --structure OUT_DIR   (OUT_DIR/ex2_structure.txt, see ex2_structure)
//   mufu_probe --tables OUT_DIR      (positive-fraction ex2 table and a lg2 sample, see tables)
// writes OUT_DIR/mufu_counts.txt (one line per hypothesis and binade with mismatches, and
// totals) and the tables as raw little-endian uint32 fp32 bit patterns:
// ex2_ftz_T23.bin, ex2_ftz_T24.bin (2^23, 2^24 entries) and lg2_ftz_L.bin (2^23 entries).
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#define CHECK(call)                                                                   \
  do {                                                                                \
    cudaError_t e_ = (call);                                                          \
    if (e_ != cudaSuccess) {                                                          \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      std::exit(1);                                                                   \
    }                                                                                 \
  } while (0)

__device__ float ex2_ftz(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
__device__ float ex2_full(float x) {
  float y;
  asm("ex2.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
__device__ float lg2_ftz(float x) {
  float y;
  asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

__global__ void ex2_table(uint32_t* t, int f, bool ftz) {
  const int64_t j = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (j >= (int64_t(1) << f)) return;
  const float x = -1.0f + float(double(j) * ldexp(1.0, -f));  // exact for f <= 24
  t[j] = __float_as_uint(ftz ? ex2_ftz(x) : ex2_full(x));
}

__global__ void lg2_table(uint32_t* t) {
  const int64_t m = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (m >= (int64_t(1) << 23)) return;
  t[m] = __float_as_uint(lg2_ftz(__uint_as_float(0x3f800000u | uint32_t(m))));
}

// The binade of x as an index 0..255 (the biased exponent); counters[h * 256 + binade].
constexpr int kEx2Hypotheses = 6;  // F = 23, 24 x {floor, toward zero, nearest}

__device__ int64_t fixed_point(double scaled, int rounding) {
  if (rounding == 0) return int64_t(floor(scaled));
  if (rounding == 1) return int64_t(trunc(scaled));
  return int64_t(rint(scaled));
}

// Prediction from the table for a result 2^k * T (T in [0.5, 1)); ftz flushes results below
// 2^-126, otherwise they are rounded to nearest by the conversion of the exact double product.
__device__ uint32_t scale_result(uint32_t t_bits, int64_t k, bool ftz) {
  const double value = double(__uint_as_float(t_bits)) * ldexp(1.0, int(k));
  if (value < ldexp(1.0, -126) && ftz) return 0u;
  if (value >= ldexp(1.0, 128)) return 0x7f800000u;
  return __float_as_uint(__double2float_rn(value));
}

__global__ void ex2_check(uint32_t first_bits, uint64_t count, const uint32_t* t23,
                          const uint32_t* t24, bool ftz, unsigned long long* counters,
                          unsigned long long* checked) {
  const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
  unsigned long long local_checked = 0;
  for (uint64_t n = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; n < count; n += stride) {
    const uint32_t bits = first_bits + uint32_t(n);
    const float x = __uint_as_float(bits);
    if (!(x > -127.0f && x < 128.0f)) continue;
    const uint32_t y = __float_as_uint(ftz ? ex2_ftz(x) : ex2_full(x));
    ++local_checked;
    const int binade = (bits >> 23) & 0xff;
    for (int h = 0; h < kEx2Hypotheses; ++h) {
      const int f = h < 3 ? 23 : 24;
      const int64_t i = fixed_point(double(x) * ldexp(1.0, f), h % 3);
      const int64_t j = i & ((int64_t(1) << f) - 1);
      const int64_t k = (i >> f) + 1;  // arithmetic shift: floor division
      const uint32_t predicted = scale_result((f == 23 ? t23 : t24)[j], k, ftz);
      if (predicted != y) atomicAdd(&counters[h * 256 + binade], 1ull);
    }
  }
  atomicAdd(checked, local_checked);
}

__global__ void lg2_check(const uint32_t* table, unsigned long long* counters,
                          unsigned long long* checked) {
  const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
  unsigned long long local_checked = 0;
  // Every positive normal fp32: biased exponents 1..254.
  const uint64_t count = uint64_t(254) << 23;
  for (uint64_t n = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; n < count; n += stride) {
    const uint32_t bits = 0x00800000u + uint32_t(n);
    const float x = __uint_as_float(bits);
    const uint32_t y = __float_as_uint(lg2_ftz(x));
    ++local_checked;
    const int binade = int(bits >> 23);
    const double exact = double(int(binade) - 127) + double(__uint_as_float(table[bits & 0x7fffff]));
    const uint32_t nearest = __float_as_uint(__double2float_rn(exact));
    const uint32_t toward_zero = __float_as_uint(__double2float_rz(exact));
    if (nearest != y) atomicAdd(&counters[0 * 256 + binade], 1ull);
    if (toward_zero != y) atomicAdd(&counters[1 * 256 + binade], 1ull);
  }
  atomicAdd(checked, local_checked);
}

void write_table(const std::string& path, const std::vector<uint32_t>& t) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f || std::fwrite(t.data(), 4, t.size(), f) != t.size() || std::fclose(f) != 0) {
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
    std::exit(1);
  }
}

// Structure of ex2 (counts per sign and binade of x, ftz form):
//   hypothesis 0: y(x) = y(x - trunc(x)) * 2^trunc(x)   (sign-magnitude integer part), |x| >= 1
//   hypothesis 1: y(x) = y(x - floor(x)) * 2^floor(x)   (two's complement integer part), |x| >= 1
//   hypotheses 2 + 2k (+1): y(x) = y(q(x)), q rounding x toward zero (to nearest) to a
//   multiple of 2^-(22 + k), k = 0..10, for |x| < 1
constexpr int kStructureHypotheses = 2 + 2 * 11;

__device__ uint32_t scaled(float y, int k) {
  const double value = double(y) * ldexp(1.0, k);
  if (value < ldexp(1.0, -126)) return 0u;
  if (value >= ldexp(1.0, 128)) return 0x7f800000u;
  return __float_as_uint(__double2float_rn(value));
}

__global__ void ex2_structure(uint32_t first_bits, uint64_t count, unsigned long long* counters) {
  const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
  for (uint64_t n = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; n < count; n += stride) {
    const uint32_t bits = first_bits + uint32_t(n);
    const float x = __uint_as_float(bits);
    if (!(x > -127.0f && x < 128.0f)) continue;
    const uint32_t y = __float_as_uint(ex2_ftz(x));
    const int sign = bits >> 31;
    const int binade = (bits >> 23) & 0xff;
    unsigned long long* c = counters + sign * 256 * kStructureHypotheses;
    if (fabsf(x) >= 1.0f) {
      const float t = truncf(x), f = floorf(x);
      if (scaled(ex2_ftz(x - t), int(t)) != y) atomicAdd(&c[0 * 256 + binade], 1ull);
      if (scaled(ex2_ftz(x - f), int(f)) != y) atomicAdd(&c[1 * 256 + binade], 1ull);
    } else {
      for (int k = 0; k <= 10; ++k) {
        const double grid = ldexp(1.0, 22 + k);
        const float toward_zero = float(trunc(double(x) * grid) / grid);
        const float nearest = float(rint(double(x) * grid) / grid);
        if (__float_as_uint(ex2_ftz(toward_zero)) != y) atomicAdd(&c[(2 + 2 * k) * 256 + binade], 1ull);
        if (__float_as_uint(ex2_ftz(nearest)) != y) atomicAdd(&c[(3 + 2 * k) * 256 + binade], 1ull);
      }
    }
  }
}

__global__ void ex2_positive_table(uint32_t* t) {
  const int64_t j = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (j >= (int64_t(1) << 23)) return;
  t[j] = __float_as_uint(ex2_ftz(float(double(j) * 0x1p-23)));
}

// lg2 of a fixed sample: x_i = (1 + ((i * 2654435761) mod 2^23) * 2^-23) * 2^(i mod 25).
__device__ inline float lg2_sample_input(uint32_t i) {
  const uint32_t m = uint32_t((uint64_t(i) * 2654435761u) & 0x7fffffu);
  return __uint_as_float(((127u + i % 25u) << 23) | m);
}

__global__ void lg2_sample(uint32_t* y, uint32_t n) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = __float_as_uint(lg2_ftz(lg2_sample_input(i)));
}

__device__ float rcp_ftz(float x) {
  float y;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
__device__ float div_full(float x, float y) {
  float z;
  asm("div.full.f32 %0, %1, %2;" : "=f"(z) : "f"(x), "f"(y));
  return z;
}

__global__ void rcp_table(uint32_t* t) {
  const int64_t m = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (m >= (int64_t(1) << 23)) return;
  t[m] = __float_as_uint(rcp_ftz(__uint_as_float(0x3f800000u | uint32_t(m))));
}

// counters[0]: rcp(y) != rcp(mantissa of y) * 2^-e over every normal y of both signs (results
// below 2^-126 flushed); counters[1]: div.full(x, y) != RN(x * rcp(y)) over a sample of pairs
// (x, y in [2^-20, 2^20) of both signs); counters[2]: pairs compared.
__global__ void rcp_div_check(unsigned long long* counters) {
  const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
  const uint64_t first = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x;
  for (uint64_t n = first; n < (uint64_t(254) << 24); n += stride) {
    const uint32_t bits = (uint32_t(n & 1) << 31) | (0x00800000u + uint32_t(n >> 1));
    const float y = __uint_as_float(bits);
    const float m = __uint_as_float((bits & 0x807fffffu) | 0x3f800000u);
    const int e = int((bits >> 23) & 0xff) - 127;
    const double v = double(rcp_ftz(m)) * ldexp(1.0, -e);
    const uint32_t predicted =
        fabs(v) < ldexp(1.0, -126) ? (bits & 0x80000000u) : __float_as_uint(float(v));
    if (predicted != __float_as_uint(rcp_ftz(y))) atomicAdd(&counters[0], 1ull);
  }
  unsigned long long compared = 0;
  for (uint64_t n = first; n < (uint64_t(1) << 30); n += stride) {
    uint64_t h = n * 0x9e3779b97f4a7c15ull;
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 32;
    const uint32_t a = uint32_t(h), b = uint32_t(h >> 32);
    const float x = __uint_as_float((a & 0x80000000u) | ((107u + (a >> 23) % 40u) << 23) | (a & 0x7fffffu));
    const float y = __uint_as_float((b & 0x80000000u) | ((107u + (b >> 23) % 40u) << 23) | (b & 0x7fffffu));
    ++compared;
    if (__float_as_uint(div_full(x, y)) != __float_as_uint(__fmul_rn(x, rcp_ftz(y))))
      atomicAdd(&counters[1], 1ull);
  }
  atomicAdd(&counters[2], compared);
}

// ex2.approx.ftz of x in [0, 1) on the 2^-23 grid (ex2_ftz_positive.bin, 2^23 words) and
// lg2.approx.ftz of lg2_sample_input(i), i < 2^16 (lg2_sample.bin); rcp.approx.ftz on
// [1, 2) (rcp_ftz_mantissa.bin) and the rcp/div.full hypothesis counts (rcp_div_counts.txt).
int tables(const std::string& dir) {
  uint32_t* t;
  CHECK(cudaMalloc(&t, (size_t(1) << 23) * 4));
  ex2_positive_table<<<(1u << 23) / 256, 256>>>(t);
  CHECK(cudaGetLastError());
  std::vector<uint32_t> host(size_t(1) << 23);
  CHECK(cudaMemcpy(host.data(), t, host.size() * 4, cudaMemcpyDeviceToHost));
  write_table(dir + "/ex2_ftz_positive.bin", host);
  rcp_table<<<(1u << 23) / 256, 256>>>(t);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(host.data(), t, host.size() * 4, cudaMemcpyDeviceToHost));
  write_table(dir + "/rcp_ftz_mantissa.bin", host);
  unsigned long long* counters;
  CHECK(cudaMalloc(&counters, 3 * 8));
  CHECK(cudaMemset(counters, 0, 3 * 8));
  rcp_div_check<<<4096, 256>>>(counters);
  CHECK(cudaGetLastError());
  unsigned long long c[3];
  CHECK(cudaMemcpy(c, counters, sizeof c, cudaMemcpyDeviceToHost));
  FILE* out = std::fopen((dir + "/rcp_div_counts.txt").c_str(), "w");
  if (!out) return 1;
  std::fprintf(out, "rcp.approx.ftz structure mismatches %llu of %llu normal inputs\n", c[0],
               (unsigned long long)(uint64_t(254) << 24));
  std::fprintf(out, "div.full vs RN(x * rcp.approx(y)) mismatches %llu of %llu pairs\n", c[1], c[2]);
  std::fclose(out);
  CHECK(cudaFree(counters));
  lg2_sample<<<256, 256>>>(t, 1u << 16);
  CHECK(cudaGetLastError());
  host.resize(1u << 16);
  CHECK(cudaMemcpy(host.data(), t, host.size() * 4, cudaMemcpyDeviceToHost));
  write_table(dir + "/lg2_sample.bin", host);
  CHECK(cudaFree(t));
  return 0;
}

int structure(const std::string& dir) {
  FILE* out = std::fopen((dir + "/ex2_structure.txt").c_str(), "w");
  if (!out) return 1;
  const size_t n = size_t(2) * 256 * kStructureHypotheses;
  unsigned long long* counters;
  CHECK(cudaMalloc(&counters, n * 8));
  CHECK(cudaMemset(counters, 0, n * 8));
  ex2_structure<<<4096, 256>>>(0u, 0x43000000ull, counters);
  ex2_structure<<<4096, 256>>>(0x80000000u, 0x42fe0001ull, counters);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  std::vector<unsigned long long> host(n);
  CHECK(cudaMemcpy(host.data(), counters, n * 8, cudaMemcpyDeviceToHost));
  for (int sign = 0; sign < 2; ++sign) {
    for (int h = 0; h < kStructureHypotheses; ++h) {
      std::string name = h == 0 ? "int_trunc" : h == 1 ? "int_floor"
                         : std::string((h % 2 == 0) ? "frac_toward_zero_F" : "frac_nearest_F") +
                               std::to_string(22 + (h - 2) / 2);
      unsigned long long total = 0;
      std::string detail;
      for (int b = 0; b < 256; ++b) {
        const unsigned long long c = host[(sign * kStructureHypotheses + h) * 256 + b];
        total += c;
        if (c) detail += " " + std::to_string(b - 127) + ":" + std::to_string(c);
      }
      std::fprintf(out, "%s %s total %llu |%s\n", sign ? "negative" : "positive", name.c_str(),
                   total, detail.c_str());
    }
  }
  std::fclose(out);
  return 0;
}

std::vector<uint32_t> make_ex2_table(int f, bool ftz, uint32_t** device) {
  const size_t n = size_t(1) << f;
  CHECK(cudaMalloc(device, n * 4));
  ex2_table<<<unsigned((n + 255) / 256), 256>>>(*device, f, ftz);
  CHECK(cudaGetLastError());
  std::vector<uint32_t> host(n);
  CHECK(cudaMemcpy(host.data(), *device, n * 4, cudaMemcpyDeviceToHost));
  return host;
}

void report(FILE* out, const char* name, const unsigned long long* counters, int hypothesis) {
  unsigned long long total = 0;
  for (int b = 0; b < 256; ++b) total += counters[hypothesis * 256 + b];
  std::fprintf(out, "%s total_mismatches %llu\n", name, total);
  for (int b = 0; b < 256; ++b) {
    const unsigned long long c = counters[hypothesis * 256 + b];
    if (c) std::fprintf(out, "%s binade %d (2^%d) mismatches %llu\n", name, b, b - 127, c);
  }
}

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "--structure") return structure(argv[2]);
  if (argc == 3 && std::string(argv[1]) == "--tables") return tables(argv[2]);
  if (argc != 2) {
    std::fprintf(stderr, "usage: mufu_probe [--structure|--tables] OUT_DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  FILE* out = std::fopen((dir + "/mufu_counts.txt").c_str(), "w");
  if (!out) {
    std::fprintf(stderr, "cannot write to %s\n", dir.c_str());
    return 1;
  }
  unsigned long long *counters, *checked;
  CHECK(cudaMalloc(&counters, sizeof(unsigned long long) * 256 * kEx2Hypotheses));
  CHECK(cudaMalloc(&checked, sizeof(unsigned long long)));
  const char* ex2_names[kEx2Hypotheses] = {"F23_floor", "F23_trunc", "F23_nearest",
                                           "F24_floor", "F24_trunc", "F24_nearest"};
  for (const bool ftz : {true, false}) {
    uint32_t *t23, *t24;
    const std::vector<uint32_t> h23 = make_ex2_table(23, ftz, &t23);
    const std::vector<uint32_t> h24 = make_ex2_table(24, ftz, &t24);
    if (ftz) {
      write_table(dir + "/ex2_ftz_T23.bin", h23);
      write_table(dir + "/ex2_ftz_T24.bin", h24);
    }
    CHECK(cudaMemset(counters, 0, sizeof(unsigned long long) * 256 * kEx2Hypotheses));
    CHECK(cudaMemset(checked, 0, sizeof(unsigned long long)));
    // Positive x: bits 0 .. 0x43000000 (0 to 128); negative: 0x80000000 .. 0xc2fe0000 (-127).
    ex2_check<<<4096, 256>>>(0u, 0x43000000ull, t23, t24, ftz, counters, checked);
    ex2_check<<<4096, 256>>>(0x80000000u, 0x42fe0001ull, t23, t24, ftz, counters, checked);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    std::vector<unsigned long long> host(256 * kEx2Hypotheses);
    unsigned long long n = 0;
    CHECK(cudaMemcpy(host.data(), counters, host.size() * 8, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(&n, checked, 8, cudaMemcpyDeviceToHost));
    std::fprintf(out, "== ex2.approx%s.f32: %llu inputs in (-127, 128)\n", ftz ? ".ftz" : "", n);
    for (int h = 0; h < kEx2Hypotheses; ++h) report(out, ex2_names[h], host.data(), h);
    CHECK(cudaFree(t23));
    CHECK(cudaFree(t24));
  }
  {
    uint32_t* l;
    CHECK(cudaMalloc(&l, (size_t(1) << 23) * 4));
    lg2_table<<<(1u << 23) / 256, 256>>>(l);
    CHECK(cudaGetLastError());
    std::vector<uint32_t> host_l(size_t(1) << 23);
    CHECK(cudaMemcpy(host_l.data(), l, host_l.size() * 4, cudaMemcpyDeviceToHost));
    write_table(dir + "/lg2_ftz_L.bin", host_l);
    CHECK(cudaMemset(counters, 0, sizeof(unsigned long long) * 256 * kEx2Hypotheses));
    CHECK(cudaMemset(checked, 0, sizeof(unsigned long long)));
    lg2_check<<<4096, 256>>>(l, counters, checked);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    std::vector<unsigned long long> host(256 * kEx2Hypotheses);
    unsigned long long n = 0;
    CHECK(cudaMemcpy(host.data(), counters, host.size() * 8, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(&n, checked, 8, cudaMemcpyDeviceToHost));
    std::fprintf(out, "== lg2.approx.ftz.f32: %llu positive normal inputs\n", n);
    report(out, "lg2_nearest", host.data(), 0);
    report(out, "lg2_toward_zero", host.data(), 1);
    CHECK(cudaFree(l));
  }
  std::fclose(out);
  std::printf("wrote %s/mufu_counts.txt\n", dir.c_str());
  return 0;
}
