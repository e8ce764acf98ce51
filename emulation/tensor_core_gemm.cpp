// tensor_core_gemm: the block-FMA model over whole matrices. Where the model allows it the
// operands are packed for the fast kernels (tensor_core_gemm_kernels.hpp, which say why they are
// exact), and every output a kernel flags, or whose row or column holds a NaN or an infinity, is
// recomputed by tensor_core_dot, the integer reference. So both paths give identical bits;
// tests/tensor_core_test.cpp checks it.
#include <algorithm>
#include <bit>
#include <cstring>
#include <stdexcept>
#include <string>

#include "emulation/bulk.hpp"
#include "emulation/cpu_level.hpp"
#include "emulation/parallel.hpp"
#include "emulation/round.hpp"
#include "emulation/tensor_core.hpp"
#include "emulation/tensor_core_gemm_kernels.hpp"
#if SIMPREC_AVX512_KERNELS
#include <immintrin.h>
#endif

namespace simprec {
namespace {

using tensor_core_fast::kCols;
using tensor_core_fast::kRows;
using tensor_core_fast::kZeroExponent;

bool fast_path_applies(const TensorCoreModel& m) {
  return (m.input == formats::bf16 || m.input == formats::fp16) && m.accumulator == formats::fp32 &&
         m.c_entry == CEntry::kFirstBlock && m.grouping == KGrouping::kContiguous &&
         m.alignment == AlignmentExponent::kOperandSum &&
         m.truncation == TermTruncation::kTowardZero &&
         m.block_rounding == RoundingMode::kTowardZero && m.block_result_precision == 24 &&
         !m.datapath_input && m.k % m.block_size == 0 && m.block_size <= 16 &&
         m.kept_fraction_bits <= 25;
}

// Every encoding of a 16-bit format as a float (exact), built once.
const float* value_table(const Format& f) {
  const auto build = [](const Format& format) {
    std::vector<float> table(65536);
    for (uint32_t bits = 0; bits < 65536; ++bits)
      table[bits] = static_cast<float>(decode(format, static_cast<uint16_t>(bits)));
    return table;
  };
  if (f == formats::bf16) {
    static const std::vector<float> table = build(formats::bf16);
    return table.data();
  }
  static const std::vector<float> table = build(formats::fp16);  // the fast path's other input
  return table.data();
}

// The fast path's operands and outputs, kept per thread between calls: attention multiplies
// small tiles many times over.
struct Workspace {
  std::vector<float> a, b;
  std::vector<int32_t> a_exp;
  std::vector<int16_t> b_exp;
  std::vector<uint32_t> c, d, redo;
  // Rows of A and columns of B (bit j of col_special[p]: column p * kCols + j) with a NaN or an
  // infinity: every output they reach goes to the reference.
  std::vector<uint8_t> row_special;
  std::vector<uint32_t> col_special;
  // tensor_core_gemm_in_place: its operands as encodings, for the outputs the reference computes
  std::vector<float> values;
  std::vector<uint16_t> a_bits, b_bits;
};
Workspace& workspace() {
  thread_local Workspace w;
  return w;
}

// What exponents() saw: the OR of every value's bits, and whether one was a NaN or an infinity.
struct Scan {
  uint32_t bits_or = 0;
  bool special = false;
};

// out[x] = the operand exponent of x[x] plus `bias` (a value of a 16-bit format, held exactly as a
// float: its exponent, the format's emin for the format's subnormals, kZeroExponent for zeros),
// as an int16 in both halves of an int32 (A) or as an int16 (B). Branch-free to vectorise.
template <class Out>
Scan exponents(const float* x, size_t count, int emin, int bias, Out* out) {
  uint32_t bits_or = 0, special = 0;
  for (size_t i = 0; i < count; ++i) {
    const auto u = std::bit_cast<uint32_t>(x[i]);
    const int field = static_cast<int>((u >> 23) & 0xff);
    int e = std::max(field - 127, emin);
    e = (u & 0x7fffffffu) == 0 ? kZeroExponent : e;
    e += bias;
    bits_or |= u;
    special |= field == 0xff;
    if constexpr (sizeof(Out) == 4) {
      out[i] = static_cast<Out>(static_cast<uint32_t>(e & 0xffff) * 0x10001u);
    } else {
      out[i] = static_cast<Out>(e);
    }
  }
  return {bits_or, special != 0};
}
// exponents compiled for each x86-64 level (cpu_level.hpp), picked at run time.
template <class Out>
[[SIMPREC_TARGET_V3]] Scan exponents_v3(const float* x, size_t n, int emin, int bias, Out* out) {
  return exponents(x, n, emin, bias, out);
}
template <class Out>
[[SIMPREC_TARGET_V4]] Scan exponents_v4(const float* x, size_t n, int emin, int bias, Out* out) {
  return exponents(x, n, emin, bias, out);
}
template <class Out>
Scan exponents_for_cpu(const float* x, size_t n, int emin, int bias, Out* out) {
  return for_this_cpu(&exponents<Out>, &exponents_v3<Out>, &exponents_v4<Out>)(x, n, emin, bias,
                                                                               out);
}

bool is_special(float x) {
  return (std::bit_cast<uint32_t>(x) & 0x7f800000u) == 0x7f800000u;
}

// Lays out groups [first_group, ...) of A (m x k, a_at(i, kk) a float) as Packed describes, k
// padded to kp with zeros.
template <class AAt>
void lay_out_a(int first_group, int m, int k, int kp, AAt a_at, float* a_out) {
  for (int g = first_group; g < (m + kRows - 1) / kRows; ++g) {
    float* out = a_out + static_cast<size_t>(g) * kp * kRows;
    const int rows = std::min(kRows, m - g * kRows);
    if (rows < kRows || kp > k) std::fill(out, out + static_cast<size_t>(kp) * kRows, 0.0f);
    for (int r = 0; r < rows; ++r)
      for (int kk = 0; kk < k; ++kk) out[kk * kRows + r] = a_at(g * kRows + r, kk);
  }
}
// The same for B (k x n, b_at(kk, j)).
template <class BAt>
void lay_out_b(int n, int k, int kp, BAt b_at, float* b_out) {
  for (int p = 0; p < (n + kCols - 1) / kCols; ++p) {
    float* out = b_out + static_cast<size_t>(p) * kp * kCols;
    const int cols = std::min(kCols, n - p * kCols);
    if (cols < kCols || kp > k) std::fill(out, out + static_cast<size_t>(kp) * kCols, 0.0f);
    for (int kk = 0; kk < k; ++kk)
      for (int j = 0; j < cols; ++j) out[kk * kCols + j] = b_at(kk, p * kCols + j);
  }
}
template <class AAt, class BAt>
void lay_out(int m, int n, int k, int kp, AAt a_at, BAt b_at, float* a_out, float* b_out) {
  lay_out_a(0, m, k, kp, a_at, a_out);
  lay_out_b(n, k, kp, b_at, b_out);
}

// Operands held as floats: a(i, kk) = a[i * a_row + kk * a_col], b(kk, j) = b[kk * ldb + j].
struct StridedFloats {
  const float* a;
  std::ptrdiff_t a_row, a_col;
  const float* b;
  std::ptrdiff_t ldb;
  float a_at(int i, int kk) const { return a[i * a_row + kk * a_col]; }
  float b_at(int kk, int j) const { return b[kk * ldb + j]; }
};
using LayOutFloats = void (*)(const StridedFloats&, int, int, int, int, float*, float*);
void lay_out_floats(const StridedFloats& s, int m, int n, int k, int kp, float* a_out,
                    float* b_out) {
  lay_out(
      m, n, k, kp, [&s](int i, int kk) { return s.a_at(i, kk); },
      [&s](int kk, int j) { return s.b_at(kk, j); }, a_out, b_out);
}
[[SIMPREC_TARGET_V3]] void lay_out_floats_v3(const StridedFloats& s, int m, int n, int k, int kp,
                                             float* a_out, float* b_out) {
  lay_out_floats(s, m, n, k, kp, a_out, b_out);
}
// With rows of A contiguous (a_col = 1), each group's 4 x 16 blocks are transposed in registers.
[[SIMPREC_TARGET_V4]] void lay_out_floats_v4(const StridedFloats& s, int m, int n, int k, int kp,
                                             float* a_out, float* b_out) {
#if SIMPREC_AVX512_KERNELS
  if (s.a_col != 1) {
    lay_out_floats(s, m, n, k, kp, a_out, b_out);
    return;
  }
  const auto a_at = [&s](int i, int kk) { return s.a_at(i, kk); };
  lay_out_b(
      n, k, kp, [&s](int kk, int j) { return s.b_at(kk, j); }, b_out);
  lay_out_a(m / kRows, m, k, kp, a_at, a_out);  // the last group, when it has fewer rows
  for (int g = 0; g < m / kRows; ++g) {
    const float* row = s.a + g * kRows * s.a_row;
    float* out = a_out + static_cast<size_t>(g) * kp * kRows;
    for (int kk = 0; kk + 16 <= k; kk += 16) {
      const __m512 v0 = _mm512_loadu_ps(row + kk), v1 = _mm512_loadu_ps(row + s.a_row + kk),
                   v2 = _mm512_loadu_ps(row + 2 * s.a_row + kk),
                   v3 = _mm512_loadu_ps(row + 3 * s.a_row + kk);
      // Within each 128-bit lane l: u_q holds column 4l + q of the four rows.
      const __m512 t0 = _mm512_unpacklo_ps(v0, v1), t1 = _mm512_unpackhi_ps(v0, v1),
                   t2 = _mm512_unpacklo_ps(v2, v3), t3 = _mm512_unpackhi_ps(v2, v3);
      const __m512
          u0 = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t0), _mm512_castps_pd(t2))),
          u1 = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t0), _mm512_castps_pd(t2))),
          u2 = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t1), _mm512_castps_pd(t3))),
          u3 = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t1), _mm512_castps_pd(t3)));
      // Then a 4 x 4 transpose of the 128-bit lanes.
      const __m512 x0 = _mm512_shuffle_f32x4(u0, u1, 0x44), x1 = _mm512_shuffle_f32x4(u0, u1, 0xee),
                   x2 = _mm512_shuffle_f32x4(u2, u3, 0x44), x3 = _mm512_shuffle_f32x4(u2, u3, 0xee);
      _mm512_storeu_ps(out + kk * kRows, _mm512_shuffle_f32x4(x0, x2, 0x88));
      _mm512_storeu_ps(out + kk * kRows + 16, _mm512_shuffle_f32x4(x0, x2, 0xdd));
      _mm512_storeu_ps(out + kk * kRows + 32, _mm512_shuffle_f32x4(x1, x3, 0x88));
      _mm512_storeu_ps(out + kk * kRows + 48, _mm512_shuffle_f32x4(x1, x3, 0xdd));
    }
    for (int kk = k / 16 * 16; kk < kp; ++kk)
      for (int r = 0; r < kRows; ++r) out[kk * kRows + r] = kk < k ? a_at(g * kRows + r, kk) : 0.0f;
  }
#else
  lay_out_floats(s, m, n, k, kp, a_out, b_out);
#endif
}

// Packs A and B for the kernels, laid out by lay(kp, a_out, b_out) from a_at and b_at (see
// lay_out); `bits_or` gets the OR of every value's bits.
template <class Lay, class AAt, class BAt>
tensor_core_fast::Packed pack(const TensorCoreModel& model, int m, int n, int k, Lay lay, AAt a_at,
                              BAt b_at, Workspace& w, uint32_t& bits_or) {
  const int kp = (k + model.k - 1) / model.k * model.k;
  const int groups = (m + kRows - 1) / kRows, panels = (n + kCols - 1) / kCols;
  w.a.resize(static_cast<size_t>(groups) * kp * kRows);
  w.a_exp.resize(w.a.size());
  w.b.resize(static_cast<size_t>(panels) * kp * kCols);
  w.b_exp.resize(w.b.size());
  lay(kp, w.a.data(), w.b.data());
  const int emin = model.input.emin();
  const Scan sa = exponents_for_cpu(w.a.data(), w.a.size(), emin, tensor_core_fast::kExponentBias,
                                    w.a_exp.data());
  const Scan sb = exponents_for_cpu(w.b.data(), w.b.size(), emin, 0, w.b_exp.data());
  bits_or = sa.bits_or | sb.bits_or;
  w.row_special.assign(m, 0);
  w.col_special.assign(panels, 0);
  if (sa.special) {
    for (int i = 0; i < m; ++i)
      for (int kk = 0; kk < k; ++kk) w.row_special[i] |= is_special(a_at(i, kk));
  }
  if (sb.special) {
    for (int kk = 0; kk < k; ++kk)
      for (int j = 0; j < n; ++j)
        w.col_special[j / kCols] |= static_cast<uint32_t>(is_special(b_at(kk, j))) << (j % kCols);
  }
  w.redo.resize(static_cast<size_t>(m) * panels);
  tensor_core_fast::Packed packed{};
  packed.model = &model;
  packed.m = m;
  packed.n = n;
  packed.k = kp;
  packed.a = w.a.data();
  packed.a_exp = w.a_exp.data();
  packed.b = w.b.data();
  packed.b_exp = w.b_exp.data();
  packed.redo = w.redo.data();
  return packed;
}

// Runs fn(begin, end) on contiguous ranges of [0, count), one per thread.
template <class Fn>
void parallel_ranges(int count, unsigned threads, Fn&& fn) {
  const unsigned t = std::min<unsigned>(resolve_threads(threads), std::max(1, count));
  parallel_for(t, t, [&](int64_t part) {
    fn(static_cast<int>(count * part / t), static_cast<int>(count * (part + 1) / t));
  });
}

// The kernel over every tile, then reference(i, j) for every output that needs it.
template <class Reference>
void run_fast(const tensor_core_fast::Packed& o, const Workspace& w, unsigned threads,
              Reference&& reference) {
  const tensor_core_fast::TileKernel kernel = tensor_core_fast::tile_kernel_for_this_cpu();
  const int groups = (o.m + kRows - 1) / kRows, panels = o.panels();
  // 16 groups (64 rows) of A stay in the cache while the panels of B go by.
  constexpr int kGroupsAtOnce = 16;
  parallel_ranges(groups, threads, [&](int begin, int end) {
    for (int g0 = begin; g0 < end; g0 += kGroupsAtOnce) {
      const int g1 = std::min(end, g0 + kGroupsAtOnce);
      for (int p = 0; p < panels; ++p)
        for (int g = g0; g < g1; ++g) kernel(o, g, p);
    }
    for (int i = begin * kRows; i < std::min(o.m, end * kRows); ++i) {
      for (int p = 0; p < panels; ++p) {
        const int cols = std::min(kCols, o.n - p * kCols);
        uint32_t redo = o.redo[static_cast<size_t>(i) * panels + p] | w.col_special[p];
        if (w.row_special[i]) redo = cols == kCols ? ~0u : (1u << cols) - 1;
        for (; redo != 0; redo &= redo - 1) reference(i, p * kCols + std::countr_zero(redo));
      }
    }
  });
}

void check_sizes(const char* function, int m, int n, int k, size_t a, size_t b, size_t c) {
  if (m < 0 || n < 0 || k < 0 || a != static_cast<size_t>(m) * k ||
      b != static_cast<size_t>(k) * n || c != static_cast<size_t>(m) * n) {
    throw std::invalid_argument(std::string(function) +
                                ": operand sizes do not match M=" + std::to_string(m) +
                                ", N=" + std::to_string(n) + ", K=" + std::to_string(k));
  }
}

// Encodings of `values` in `format`; throws std::invalid_argument naming the first value that
// is not one of the format's.
void encode_exactly(const Format& format, const std::vector<float>& values,
                    std::vector<uint16_t>& bits, const char* what) {
  bits.resize(values.size());
  round_to_bits<float, uint16_t>(values, bits,
                                 BulkRounding{format, Rounding{}, RandomStream{}, 0, 1});
  std::vector<float> back(values.size());
  decode_bits<uint16_t, float>(format, bits, back);
  for (size_t x = 0; x < values.size(); ++x) {
    if (std::bit_cast<uint32_t>(back[x]) != std::bit_cast<uint32_t>(values[x]) &&
        !(back[x] != back[x] && values[x] != values[x])) {
      throw std::invalid_argument(std::string("tensor_core_gemm_in_place: ") + what + " value " +
                                  std::to_string(values[x]) + " is not a " + format.name() +
                                  " value");
    }
  }
}

}  // namespace

std::vector<uint32_t> tensor_core_gemm(const TensorCoreModel& model, std::span<const uint16_t> a,
                                       std::span<const uint16_t> b, std::span<const uint32_t> c,
                                       int m, int n, int k, unsigned threads) {
  check_sizes("tensor_core_gemm", m, n, k, a.size(), b.size(), c.size());
  std::vector<uint32_t> d(static_cast<size_t>(m) * n);
  const auto reference = [&](int i, int j) {
    d[static_cast<size_t>(i) * n + j] =
        tensor_core_dot(model, a.data() + static_cast<size_t>(i) * k, 1, b.data() + j, n, k,
                        c[static_cast<size_t>(i) * n + j]);
  };
  if (!fast_path_applies(model) || k == 0 || m == 0 || n == 0) {
    parallel_ranges(m, threads, [&](int begin, int end) {
      for (int i = begin; i < end; ++i)
        for (int j = 0; j < n; ++j) reference(i, j);
    });
    return d;
  }
  Workspace& w = workspace();
  const float* values = value_table(model.input);
  uint32_t bits_or = 0;
  const auto a_at = [&](int i, int kk) { return values[a[static_cast<size_t>(i) * k + kk]]; };
  const auto b_at = [&](int kk, int j) { return values[b[static_cast<size_t>(kk) * n + j]]; };
  tensor_core_fast::Packed packed = pack(
      model, m, n, k,
      [&](int kp, float* a_out, float* b_out) { lay_out(m, n, k, kp, a_at, b_at, a_out, b_out); },
      a_at, b_at, w, bits_or);
  packed.c = c.data();
  packed.ldc = n;
  packed.d = d.data();
  packed.ldd = n;
  run_fast(packed, w, threads, reference);
  return d;
}

void tensor_core_gemm_in_place(const TensorCoreModel& model, int m, int n, int k, const float* a,
                               std::ptrdiff_t a_row, std::ptrdiff_t a_col, const float* b,
                               std::ptrdiff_t ldb, float* c, std::ptrdiff_t ldc) {
  if (m < 0 || n < 0 || k < 0) {
    throw std::invalid_argument("tensor_core_gemm_in_place: negative size M=" + std::to_string(m) +
                                ", N=" + std::to_string(n) + ", K=" + std::to_string(k));
  }
  if (model.accumulator != formats::fp32 || model.input.width() > 16) {
    throw std::invalid_argument("tensor_core_gemm_in_place: " + model.name +
                                " does not take 16-bit or narrower inputs into fp32");
  }
  Workspace& w = workspace();
  const auto a_at = [&](int i, int kk) { return a[i * a_row + kk * a_col]; };
  const auto b_at = [&](int kk, int j) { return b[kk * ldb + j]; };
  // The encodings of A and B (for the reference), after checking that every value is one;
  // bf16 values known to be floats with zero low halves are their high halves.
  const auto encode = [&](int rows, int cols, auto&& at, std::vector<uint16_t>& bits,
                          const char* what, bool high_halves) {
    w.values.resize(static_cast<size_t>(rows) * cols);
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j) w.values[static_cast<size_t>(i) * cols + j] = at(i, j);
    if (!high_halves) {
      encode_exactly(model.input, w.values, bits, what);
      return;
    }
    bits.resize(w.values.size());
    for (size_t x = 0; x < w.values.size(); ++x)
      bits[x] = static_cast<uint16_t>(std::bit_cast<uint32_t>(w.values[x]) >> 16);
  };
  const bool fast =
      fast_path_applies(model) && model.input == formats::bf16 && k > 0 && m > 0 && n > 0;
  if (!fast) {
    encode(m, k, a_at, w.a_bits, "A", false);
    encode(k, n, b_at, w.b_bits, "B", false);
    w.c.resize(static_cast<size_t>(m) * n);
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j)
        w.c[static_cast<size_t>(i) * n + j] = std::bit_cast<uint32_t>(c[i * ldc + j]);
    const std::vector<uint32_t> d = tensor_core_gemm(model, w.a_bits, w.b_bits, w.c, m, n, k, 1);
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j)
        c[i * ldc + j] = std::bit_cast<float>(d[static_cast<size_t>(i) * n + j]);
    return;
  }
  // A bf16 value is a float whose low 16 bits are zero, its encoding the high 16 bits.
  const StridedFloats floats{a, a_row, a_col, b, ldb};
  const LayOutFloats lay_out_here =
      for_this_cpu<LayOutFloats>(lay_out_floats, lay_out_floats_v3, lay_out_floats_v4);
  uint32_t bits_or = 0;
  tensor_core_fast::Packed packed = pack(
      model, m, n, k,
      [&](int kp, float* a_out, float* b_out) { lay_out_here(floats, m, n, k, kp, a_out, b_out); },
      a_at, b_at, w, bits_or);
  const bool high_halves = (bits_or & 0xffffu) == 0;
  bool encoded = false;
  if (!high_halves) {  // throws naming a value that is not bf16's, or encodes NaN payloads
    encode(m, k, a_at, w.a_bits, "A", false);
    encode(k, n, b_at, w.b_bits, "B", false);
    encoded = true;
  }
  // D is written over C; the reference reads the C of the outputs the kernels flag from c_kept,
  // and where a NaN or an infinity sends others to it as well, D goes beside C first.
  const bool specials =
      std::any_of(w.row_special.begin(), w.row_special.end(), [](uint8_t x) { return x != 0; }) ||
      std::any_of(w.col_special.begin(), w.col_special.end(), [](uint32_t x) { return x != 0; });
  auto* c_bits = reinterpret_cast<uint32_t*>(c);
  packed.c = c_bits;
  packed.ldc = ldc;
  if (specials) {
    w.d.resize(static_cast<size_t>(m) * n);
    packed.d = w.d.data();
    packed.ldd = n;
  } else {
    w.c.resize(static_cast<size_t>(m) * n);
    packed.d = c_bits;
    packed.ldd = ldc;
    packed.c_kept = w.c.data();
  }
  run_fast(packed, w, 1, [&](int i, int j) {
    if (!encoded) {
      encode(m, k, a_at, w.a_bits, "A", true);
      encode(k, n, b_at, w.b_bits, "B", true);
      encoded = true;
    }
    const uint32_t c_ij = specials ? c_bits[i * ldc + j] : w.c[static_cast<size_t>(i) * n + j];
    packed.d[i * packed.ldd + j] = tensor_core_dot(
        model, w.a_bits.data() + static_cast<size_t>(i) * k, 1, w.b_bits.data() + j, n, k, c_ij);
  });
  if (specials) {
    for (int i = 0; i < m; ++i)
      std::memcpy(c + i * ldc, w.d.data() + static_cast<size_t>(i) * n, sizeof(float) * n);
  }
}

}  // namespace simprec
