// Times simprec's flash-attention kernels on the GPU (CUDA events, median of repeated runs) and
// prints one JSON object per case: the kernel, mitigation, milliseconds and TFLOP/s. Run by
// scripts/gpu_check.sh beside scripts/torch_sdpa_bench.py (PyTorch's SDPA backends on the same
// shapes), so that the ratios come from one run on one machine.
//   flash_bench [--batch 4] [--heads 16] [--seqlen 4096] [--dim 128] [--iters 20] [--causal]
//               [--repeated-keys]
//   --repeated-keys: keys in equal pairs, so that every row's max repeats in every block; times
//   only the bf16 forward kernels with and without mitigations (lines say "inputs").
// Each kernel with and without its mitigations is timed in 5 alternating rounds (the median).
//   flash_bench --check: a small forward and backward per head dimension, tile and causal flag,
//   against a double-precision reference on the host (a sanity check of the kernels' layouts;
//   bit-exactness is validate's job); exits 1 when an error exceeds its bound.
//   flash_bench --digest: one line per kernel instance, input kind and mitigation with a hash of
//   its outputs (O and LSE; dQ, dK, dV), so that two builds compare bit for bit with `diff`: a
//   kernel change that keeps the arithmetic must keep every line.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/flash/flash_launch.cuh"
#include "kernels/flash/flash_launch_wgmma.cuh"

namespace {

using simprec::flash::BackwardParams;
using simprec::flash::Element;
using simprec::flash::ForwardParams;
using simprec::flash::TileConfig;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "flash_bench: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

// Uniform values in [-1, 1) as bf16, from a hash of the index (no host transfer).
__global__ void fill_bf16(__nv_bfloat16* x, size_t n, uint32_t salt) {
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  uint32_t h = static_cast<uint32_t>(i) * 0x9E3779B1u ^ salt;
  h ^= h >> 16;
  h *= 0x85EBCA6Bu;
  h ^= h >> 13;
  x[i] = __float2bfloat16(static_cast<float>(h) * 0x1p-31f - 1.0f);
}

template <class T>
double median_of(std::vector<T> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <class Launch>
double median_ms(Launch launch, int iters) {
  for (int i = 0; i < 3; ++i) check(launch(), "warm-up launch");
  check(cudaDeviceSynchronize(), "warm-up");
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "event");
  check(cudaEventCreate(&stop), "event");
  std::vector<float> ms(iters);
  for (int i = 0; i < iters; ++i) {
    check(cudaEventRecord(start), "record");
    check(launch(), "launch");
    check(cudaEventRecord(stop), "record");
    check(cudaEventSynchronize(stop), "sync");
    check(cudaEventElapsedTime(&ms[i], start, stop), "elapsed");
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return median_of(ms);
}

// Medians of several launches timed in turns (round r times each launch `iters` times), so that
// drifts of the clock affect each alike: the ratios between them are what the mitigation
// targets are about.
template <class Launch>
std::vector<double> interleaved_median_ms(const std::vector<Launch>& launches, int iters,
                                          int rounds) {
  std::vector<std::vector<double>> all(launches.size());
  for (int r = 0; r < rounds; ++r)
    for (size_t i = 0; i < launches.size(); ++i) all[i].push_back(median_ms(launches[i], iters));
  std::vector<double> out;
  for (const std::vector<double>& v : all) out.push_back(median_of(v));
  return out;
}

// A bf16/fp16 forward kernel: an mma.sync tile configuration, or the wgmma kernel (d = 128).
struct ForwardKernel {
  std::string label;  // "64x64", "128x64", "wg128x64"
  TileConfig tile;
  bool wgmma;
  cudaError_t launch(Element element, int dim, const ForwardParams& p) const {
    return wgmma ? simprec::flash::launch_forward_wgmma(element, dim, p, nullptr)
                 : simprec::flash::launch_forward(element, dim, tile, p, nullptr);
  }
};
std::vector<ForwardKernel> forward_kernels(int dim) {
  std::vector<ForwardKernel> kernels{{"64x64", simprec::flash::kTile64x64, false},
                                     {"128x64", simprec::flash::kTile128x64, false}};
  if (dim == 128) kernels.push_back({"wg128x64", simprec::flash::kTile128x64, true});
  return kernels;
}

// Key row 2j + 1 := key row 2j (rows of `dim` elements): every score then appears twice, so
// that every row's max repeats in every key block (beta-rowmax's worst case).
__global__ void pair_rows(__nv_bfloat16* x, size_t n, int dim) {
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n && (i / dim) % 2 == 1) x[i] = x[i - dim];
}

// Host copy of a device bf16 tensor as doubles.
std::vector<double> to_host(const void* device, size_t n) {
  std::vector<__nv_bfloat16> h(n);
  check(cudaMemcpy(h.data(), device, n * 2, cudaMemcpyDeviceToHost), "copy");
  std::vector<double> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<double>(__bfloat162float(h[i]));
  return out;
}

// bf16 -> e4m3 (saturating, nearest even) on the device.
__global__ void to_e4m3(const __nv_bfloat16* x, __nv_fp8_e4m3* y, size_t n) {
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = __nv_fp8_e4m3(__bfloat162float(x[i]));
}

// Max |a - b| / max |b| over one tensor.
double relative_max_error(const std::vector<double>& a, const std::vector<double>& b) {
  double err = 0, scale = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    err = std::max(err, std::fabs(a[i] - b[i]));
    scale = std::max(scale, std::fabs(b[i]));
  }
  return scale > 0 ? err / scale : err;
}

// The device tensors of one problem shape ([problems, seqlen, dim], bf16), the inputs Q, K, V,
// dO filled with hash values from salt, salt + 1, ..., and the kernels' parameters for them.
struct Tensors {
  size_t count, rows;
  void *q, *k, *v, *o, *d_o, *dq, *dk, *dv;
  float *lse, *delta, *shift;
  ForwardParams forward;
  BackwardParams backward;

  Tensors(int problems, int seqlen, int dim, bool causal, uint32_t salt)
      : count(static_cast<size_t>(problems) * seqlen * dim),
        rows(static_cast<size_t>(problems) * seqlen) {
    for (void** p : {&q, &k, &v, &o, &d_o, &dq, &dk, &dv})
      check(cudaMalloc(p, count * 2), "malloc");
    for (float** p : {&lse, &delta, &shift}) check(cudaMalloc(p, rows * 4), "malloc");
    for (void* p : {q, k, v, d_o})
      fill_bf16<<<static_cast<unsigned>((count + 255) / 256), 256>>>(static_cast<__nv_bfloat16*>(p),
                                                                     count, salt++);
    check(cudaDeviceSynchronize(), "fill");
    ForwardParams& f = forward;
    f.q = q, f.k = k, f.v = v, f.o = o, f.lse = lse;
    f.problems = problems;
    f.seqlen_q = f.seqlen_k = seqlen;
    f.scale = 1.0 / std::sqrt(static_cast<double>(dim));
    f.scale_log2 = static_cast<float>(f.scale * 1.4426950408889634);
    f.causal = causal;
    f.eps_over_scale = 1e-3 / f.scale;
    BackwardParams& b = backward;
    b.q = q, b.k = k, b.v = v, b.o = o, b.d_o = d_o, b.lse = lse;
    b.dq = dq, b.dk = dk, b.dv = dv, b.delta = delta, b.shift = shift;
    b.problems = problems;
    b.seqlen_q = b.seqlen_k = seqlen;
    b.scale = f.scale;
    b.scale_log2 = f.scale_log2;
    b.causal = causal;
  }
  ~Tensors() {
    for (void* p : {q, k, v, o, d_o, dq, dk, dv}) cudaFree(p);
    for (float* p : {lse, delta, shift}) cudaFree(p);
  }
  Tensors(const Tensors&) = delete;
  Tensors& operator=(const Tensors&) = delete;
};

// e4m3 copies of a problem's Q, K and V (rounded on the device), freed with it; params()
// points a forward's inputs at them.
struct E4m3Inputs {
  void *q, *k, *v;
  size_t count;
  explicit E4m3Inputs(const Tensors& t) : count(t.count) {
    const void* src[3] = {t.q, t.k, t.v};
    void** dst[3] = {&q, &k, &v};
    const unsigned blocks = static_cast<unsigned>((count + 255) / 256);
    for (int i = 0; i < 3; ++i) {
      check(cudaMalloc(dst[i], count), "malloc");
      to_e4m3<<<blocks, 256>>>(static_cast<const __nv_bfloat16*>(src[i]),
                               static_cast<__nv_fp8_e4m3*>(*dst[i]), count);
    }
    check(cudaDeviceSynchronize(), "to e4m3");
  }
  ~E4m3Inputs() {
    for (void* p : {q, k, v}) cudaFree(p);
  }
  E4m3Inputs(const E4m3Inputs&) = delete;
  E4m3Inputs& operator=(const E4m3Inputs&) = delete;
  ForwardParams params(ForwardParams f) const {
    f.q = q, f.k = k, f.v = v;
    return f;
  }
};

int run_check() {
  const int heads = 2, n = 256;
  int failures = 0;
  for (int dim : {64, 128}) {
    for (bool causal : {false, true}) {
      Tensors t(heads, n, dim, causal, 7);
      const size_t count = t.count;
      void *q = t.q, *k = t.k, *v = t.v, *o = t.o, *d_o = t.d_o, *dq = t.dq, *dk = t.dk, *dv = t.dv;
      const std::vector<double> hq = to_host(q, count), hk = to_host(k, count),
                                hv = to_host(v, count), hdo = to_host(d_o, count);
      const double scale = 1.0 / std::sqrt(static_cast<double>(dim));
      // Reference forward and backward in double.
      std::vector<double> ro(count), rdq(count, 0.0), rdk(count, 0.0), rdv(count, 0.0);
      for (int h = 0; h < heads; ++h) {
        const size_t base = static_cast<size_t>(h) * n * dim;
        std::vector<double> p(static_cast<size_t>(n) * n);
        for (int i = 0; i < n; ++i) {
          double m = -1e300;
          for (int j = 0; j < n; ++j) {
            double s = 0;
            for (int c = 0; c < dim; ++c) s += hq[base + i * dim + c] * hk[base + j * dim + c];
            p[i * n + j] = (causal && j > i) ? -1e300 : s * scale;
            m = std::max(m, p[i * n + j]);
          }
          double l = 0;
          for (int j = 0; j < n; ++j) l += (p[i * n + j] = std::exp(p[i * n + j] - m));
          for (int j = 0; j < n; ++j) p[i * n + j] /= l;
          for (int c = 0; c < dim; ++c) {
            double acc = 0;
            for (int j = 0; j < n; ++j) acc += p[i * n + j] * hv[base + j * dim + c];
            ro[base + i * dim + c] = acc;
          }
        }
        for (int i = 0; i < n; ++i) {
          double d = 0;
          for (int c = 0; c < dim; ++c) d += hdo[base + i * dim + c] * ro[base + i * dim + c];
          for (int j = 0; j < n; ++j) {
            double dp = 0;
            for (int c = 0; c < dim; ++c) dp += hdo[base + i * dim + c] * hv[base + j * dim + c];
            const double ds = p[i * n + j] * (dp - d);
            for (int c = 0; c < dim; ++c) {
              rdq[base + i * dim + c] += scale * ds * hk[base + j * dim + c];
              rdk[base + j * dim + c] += scale * ds * hq[base + i * dim + c];
              rdv[base + j * dim + c] += p[i * n + j] * hdo[base + i * dim + c];
            }
          }
        }
      }
      ForwardParams f = t.forward;
      const auto report = [&](const char* what, double err, double bound) {
        const bool ok = err <= bound;
        failures += !ok;
        std::printf("check d=%d causal=%d %-28s rel-max-error %.3e (bound %.0e) %s\n", dim, causal,
                    what, err, bound, ok ? "ok" : "FAIL");
      };
      for (const ForwardKernel& kernel : forward_kernels(dim)) {
        for (int sr : {0, 8}) {
          f.sr_bits = sr;
          check(kernel.launch(Element::kBf16, dim, f), "forward");
          check(cudaDeviceSynchronize(), "forward");
          const std::string name = "O " + kernel.label + (sr ? " sr-p:8" : "");
          report(name.c_str(), relative_max_error(to_host(o, count), ro), 2e-2);
        }
      }
      if (dim == 128) {
        // e4m3: inputs rounded to e4m3 on the device, V transposed on the host; the reference
        // sees the e4m3 values; P is cast to e4m3 too, hence the looser bound.
        const E4m3Inputs e4m3(t);
        void* vt8;
        check(cudaMalloc(&vt8, count), "malloc");
        std::vector<__nv_fp8_e4m3> h8(count), ht8(count);  // ht8: V^T
        const auto decode = [&](void* src) {
          check(cudaMemcpy(h8.data(), src, count, cudaMemcpyDeviceToHost), "copy");
          std::vector<double> out(count);
          for (size_t i = 0; i < count; ++i)
            out[i] = static_cast<double>(static_cast<float>(h8[i]));
          return out;
        };
        const std::vector<double> q8h = decode(e4m3.q), k8h = decode(e4m3.k), v8h = decode(e4m3.v);
        for (int h = 0; h < heads; ++h)
          for (int j = 0; j < n; ++j)
            for (int c = 0; c < dim; ++c)
              ht8[(static_cast<size_t>(h) * dim + c) * n + j] =
                  h8[(static_cast<size_t>(h) * n + j) * dim + c];
        check(cudaMemcpy(vt8, ht8.data(), count, cudaMemcpyHostToDevice), "copy");
        std::vector<double> ro8(count);
        for (int h = 0; h < heads; ++h) {
          const size_t base = static_cast<size_t>(h) * n * dim;
          for (int i = 0; i < n; ++i) {
            std::vector<double> p(n);
            double m = -1e300, l = 0;
            for (int j = 0; j < n; ++j) {
              double sc = 0;
              for (int c = 0; c < dim; ++c) sc += q8h[base + i * dim + c] * k8h[base + j * dim + c];
              p[j] = (causal && j > i) ? -1e300 : sc * scale;
              m = std::max(m, p[j]);
            }
            for (int j = 0; j < n; ++j) l += (p[j] = std::exp(p[j] - m));
            for (int c = 0; c < dim; ++c) {
              double acc = 0;
              for (int j = 0; j < n; ++j) acc += p[j] / l * v8h[base + j * dim + c];
              ro8[base + i * dim + c] = acc;
            }
          }
        }
        ForwardParams f8 = e4m3.params(f);
        f8.v = vt8;
        f8.sr_bits = 0;
        check(simprec::flash::launch_forward(Element::kE4m3, dim, simprec::flash::kTile64x128, f8,
                                             nullptr),
              "e4m3 forward");
        check(cudaDeviceSynchronize(), "e4m3 forward");
        report("O e4m3 64x128", relative_max_error(to_host(o, count), ro8), 1e-1);
        cudaFree(vt8);
      }
      f.sr_bits = 0;
      check(simprec::flash::launch_forward(Element::kBf16, dim, simprec::flash::kTile64x64, f,
                                           nullptr),
            "forward");
      const BackwardParams b = t.backward;
      check(simprec::flash::launch_backward(Element::kBf16, dim, 64, b, nullptr), "backward");
      check(cudaDeviceSynchronize(), "backward");
      report("dQ", relative_max_error(to_host(dq, count), rdq), 5e-2);
      report("dK", relative_max_error(to_host(dk, count), rdk), 5e-2);
      report("dV", relative_max_error(to_host(dv, count), rdv), 5e-2);
    }
  }
  return failures ? 1 : 0;
}

// FNV-1a over the bytes of a device buffer.
uint64_t device_hash(const void* device, size_t bytes, uint64_t h = 0xcbf29ce484222325ull) {
  std::vector<unsigned char> host(bytes);
  check(cudaMemcpy(host.data(), device, bytes, cudaMemcpyDeviceToHost), "copy");
  for (unsigned char c : host) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

int run_digest() {
  const int problems = 3, n = 512;
  for (int dim : {64, 128}) {
    for (bool causal : {false, true}) {
      for (bool repeated : {false, true}) {
        Tensors t(problems, n, dim, causal, 11);
        if (repeated)
          pair_rows<<<static_cast<unsigned>((t.count + 255) / 256), 256>>>(
              static_cast<__nv_bfloat16*>(t.k), t.count, dim);
        check(cudaDeviceSynchronize(), "inputs");
        const auto print = [&](const std::string& what, uint64_t hash) {
          std::printf("d=%d causal=%d %s %s %016llx\n", dim, causal,
                      repeated ? "repeated-keys" : "uniform", what.c_str(),
                      static_cast<unsigned long long>(hash));
        };
        // A forward's line: the hash of O, then LSE.
        const auto line = [&](const std::string& what) {
          print(what, device_hash(t.lse, t.rows * 4, device_hash(t.o, t.count * 2)));
        };
        for (Element element : {Element::kBf16, Element::kFp16}) {
          const std::string type = element == Element::kBf16 ? "bf16" : "fp16";
          for (const ForwardKernel& kernel : forward_kernels(dim)) {
            for (int mitigation = 0; mitigation < 3; ++mitigation) {
              ForwardParams f = t.forward;
              f.beta_rowmax = mitigation == 1;
              f.sr_bits = mitigation == 2 ? 8 : 0;
              f.seed = 0x5eed;
              check(cudaMemset(t.o, 0, t.count * 2), "clear");
              check(kernel.launch(element, dim, f), "forward");
              check(cudaDeviceSynchronize(), "forward");
              line("fwd_" + type + "_" + kernel.label + " " +
                   (mitigation == 0   ? "none"
                    : mitigation == 1 ? "beta-rowmax"
                                      : "sr-p:8"));
            }
          }
          check(simprec::flash::launch_forward(element, dim, simprec::flash::kTile64x64, t.forward,
                                               nullptr),
                "forward");
          check(simprec::flash::launch_backward(element, dim, 64, t.backward, nullptr), "backward");
          check(cudaDeviceSynchronize(), "backward");
          const uint64_t h = device_hash(t.dk, t.count * 2, device_hash(t.dq, t.count * 2));
          print("bwd_" + type + "_64x64 none", device_hash(t.dv, t.count * 2, h));
        }
        if (dim == 128) {  // e4m3 on the inputs rounded to e4m3 (V as if transposed)
          const E4m3Inputs e4m3(t);
          for (bool beta : {false, true}) {
            ForwardParams f = e4m3.params(t.forward);
            f.beta_rowmax = beta;
            check(cudaMemset(t.o, 0, t.count * 2), "clear");
            check(simprec::flash::launch_forward(Element::kE4m3, dim, simprec::flash::kTile64x128,
                                                 f, nullptr),
                  "e4m3 forward");
            check(cudaDeviceSynchronize(), "e4m3 forward");
            line(std::string("fwd_e4m3_64x128 ") + (beta ? "beta-rowmax" : "none"));
          }
        }
      }
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int batch = 4, heads = 16, seqlen = 4096, dim = 128, iters = 20;
  bool causal = false, repeated_keys = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto next = [&]() {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "flash_bench: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return std::atoi(argv[++i]);
    };
    if (a == "--batch")
      batch = next();
    else if (a == "--heads")
      heads = next();
    else if (a == "--seqlen")
      seqlen = next();
    else if (a == "--dim")
      dim = next();
    else if (a == "--iters")
      iters = next();
    else if (a == "--causal")
      causal = true;
    else if (a == "--repeated-keys")
      repeated_keys = true;
    else if (a == "--check")
      return run_check();
    else if (a == "--digest")
      return run_digest();
    else {
      std::fprintf(stderr, "flash_bench: unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  const Tensors t(batch * heads, seqlen, dim, causal, 1);
  const size_t n = t.count;
  if (repeated_keys) {
    pair_rows<<<static_cast<unsigned>((n + 255) / 256), 256>>>(static_cast<__nv_bfloat16*>(t.k), n,
                                                               dim);
    check(cudaDeviceSynchronize(), "pair key rows");
  }
  const ForwardParams& f = t.forward;
  const BackwardParams& b = t.backward;

  const double forward_flops =
      4.0 * batch * heads * static_cast<double>(seqlen) * seqlen * dim * (causal ? 0.5 : 1.0);
  const auto report = [&](const char* kernel, const char* pass, const char* mitigation, double ms,
                          double flops) {
    std::printf(
        "{\"source\": \"simprec\", \"kernel\": \"%s\", \"pass\": \"%s\", \"mitigation\": \"%s\", "
        "\"batch\": %d, \"heads\": %d, \"seqlen\": %d, \"dim\": %d, \"causal\": %s, "
        "\"inputs\": \"%s\", \"ms\": %.4f, \"tflops\": %.1f}\n",
        kernel, pass, mitigation, batch, heads, seqlen, dim, causal ? "true" : "false",
        repeated_keys ? "repeated-keys" : "uniform", ms, flops / (ms * 1e-3) / 1e12);
    std::fflush(stdout);
  };
  for (const ForwardKernel& kernel : forward_kernels(dim)) {
    const std::string name = "flash_fwd_bf16_" + kernel.label;
    const auto forward = [&](ForwardParams p) {
      return [p, dim, kernel]() { return kernel.launch(Element::kBf16, dim, p); };
    };
    ForwardParams plain = f, beta = f, sr = f;
    beta.beta_rowmax = true;
    sr.sr_bits = 8;
    const std::vector<double> ms =
        interleaved_median_ms(std::vector{forward(plain), forward(beta), forward(sr)}, iters, 5);
    report(name.c_str(), "forward", "none", ms[0], forward_flops);
    report(name.c_str(), "forward", "beta-rowmax", ms[1], forward_flops);
    report(name.c_str(), "forward", "sr-p:8", ms[2], forward_flops);
  }
  if (repeated_keys) return 0;
  // The backward pass needs the forward's O and LSE.
  check(simprec::flash::launch_forward(Element::kBf16, dim, simprec::flash::kTile64x64, f, nullptr),
        "forward for backward");
  check(cudaDeviceSynchronize(), "forward for backward");
  const double bwd_ms = median_ms(
      [&]() { return simprec::flash::launch_backward(Element::kBf16, dim, 64, b, nullptr); },
      iters);
  report("flash_bwd_bf16_64x64", "backward", "none", bwd_ms, 2.5 * forward_flops);
  // A training step's pair: the fastest forward (the last of forward_kernels) and the backward.
  const ForwardKernel fastest = forward_kernels(dim).back();
  const double fwd_bwd_ms = median_ms(
      [&]() {
        const cudaError_t e = fastest.launch(Element::kBf16, dim, f);
        if (e != cudaSuccess) return e;
        return simprec::flash::launch_backward(Element::kBf16, dim, 64, b, nullptr);
      },
      iters);
  report(("flash_fwd_bf16_" + fastest.label + "+flash_bwd_bf16_64x64").c_str(), "forward+backward",
         "none", fwd_bwd_ms, 3.5 * forward_flops);

  // The other kernels, unmitigated: fp16 on the same bits (values in (-2, 2), as fp16), and
  // e4m3 on the inputs rounded to e4m3 (V stored transposed; transposing does not change the
  // time, so the rounded V is timed as it lies).
  for (const ForwardKernel& kernel : forward_kernels(dim)) {
    const double ms = median_ms([&]() { return kernel.launch(Element::kFp16, dim, f); }, iters);
    report(("flash_fwd_fp16_" + kernel.label).c_str(), "forward", "none", ms, forward_flops);
  }
  check(simprec::flash::launch_forward(Element::kFp16, dim, simprec::flash::kTile64x64, f, nullptr),
        "fp16 forward for backward");
  report("flash_bwd_fp16_64x64", "backward", "none",
         median_ms(
             [&]() { return simprec::flash::launch_backward(Element::kFp16, dim, 64, b, nullptr); },
             iters),
         2.5 * forward_flops);
  if (dim == 128) {
    const E4m3Inputs e4m3(t);
    const ForwardParams f8 = e4m3.params(f);
    report("flash_fwd_e4m3_64x128", "forward", "none",
           median_ms(
               [&]() {
                 return simprec::flash::launch_forward(Element::kE4m3, dim,
                                                       simprec::flash::kTile64x128, f8, nullptr);
               },
               iters),
           forward_flops);
  }
  return 0;
}
