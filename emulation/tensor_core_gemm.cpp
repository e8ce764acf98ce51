// tensor_core_gemm: the block-FMA model over whole matrices. Where the model allows it the
// operands are packed for the fast kernels (tensor_core_gemm_kernels.hpp, which say why they are
// exact), and every output a kernel flags, or whose row or column holds a NaN or an infinity, is
// recomputed by tensor_core_dot, the integer reference. So both paths give identical bits;
// tests/tensor_core_test.cpp checks it.
#include <algorithm>
#include <bit>
#include <cstring>
#include <functional>
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

// The inputs the kernels take: every value a float, every product of two exact in float.
bool fast_input(const Format& f) {
  return f == formats::bf16 || f == formats::fp16 || f == formats::e4m3fn || f == formats::e5m2;
}

// The models the kernels compute (tensor_core_gemm_kernels.hpp says why exactly): the block FMA
// with truncated terms and a truncated block sum, C in the first block, into fp32, with a window
// of at most 25 bits and blocks whose int32 sums cannot wrap around unseen: at most 16 terms (the
// AVX-512 kernel's argument), or few enough that the sum stays below 2^31 - 2^26.
bool fast_path_applies(const TensorCoreModel& m) {
  const int64_t F = m.kept_fraction_bits, terms = m.block_size;
  const bool sums_fit = terms <= 16 || terms * (int64_t{4} << F) + (int64_t{2} << F) <
                                           (int64_t{1} << 31) - (int64_t{1} << 26);
  return fast_input(m.input_a) && fast_input(m.input_b) && m.accumulator == formats::fp32 &&
         m.c_entry == CEntry::kFirstBlock && m.grouping == KGrouping::kContiguous &&
         m.alignment == AlignmentExponent::kOperandSum &&
         m.truncation == TermTruncation::kTowardZero &&
         m.block_rounding == RoundingMode::kTowardZero && m.block_result_precision >= 2 &&
         m.block_result_precision <= 24 && !m.datapath_input && m.block_size > 0 &&
         m.k % m.block_size == 0 && F >= 0 && F <= 25 && sums_fit;
}

// Every encoding of an input format (fast_input) as a float (exact), built once; bits above an
// 8-bit format's are ignored, as tensor_core_dot ignores them.
const float* value_table(const Format& f) {
  const auto build = [](const Format& format) {
    std::vector<float> table(65536);
    const uint32_t width_mask = (1u << format.width()) - 1;
    for (uint32_t bits = 0; bits < 65536; ++bits)
      table[bits] = static_cast<float>(decode(format, bits & width_mask));
    return table;
  };
  if (f == formats::bf16) {
    static const std::vector<float> table = build(formats::bf16);
    return table.data();
  }
  if (f == formats::fp16) {
    static const std::vector<float> table = build(formats::fp16);
    return table.data();
  }
  if (f == formats::e4m3fn) {
    static const std::vector<float> table = build(formats::e4m3fn);
    return table.data();
  }
  static const std::vector<float> table = build(formats::e5m2);  // the last input format taken
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
  // tensor_core_gemm_in_place: values to encode
  std::vector<float> values;
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

// A left operand held as floats, a(i, kk) = a[i * a_row + kk * a_col], laid out as Packed
// describes, k padded to kp with zeros.
using LayOutLeft = void (*)(const float* a, std::ptrdiff_t a_row, std::ptrdiff_t a_col, int m,
                            int k, int kp, float* out);
void lay_out_left(const float* a, std::ptrdiff_t a_row, std::ptrdiff_t a_col, int m, int k, int kp,
                  float* out) {
  const auto a_at = [=](int i, int kk) { return a[i * a_row + kk * a_col]; };
  if (a_row != 1) {
    lay_out_a(0, m, k, kp, a_at, out);
    return;
  }
  // A read through its transpose: a group's kRows values of one kk lie side by side.
  for (int g = 0; g < m / kRows; ++g) {
    float* group = out + static_cast<size_t>(g) * kp * kRows;
    for (int kk = 0; kk < k; ++kk)
      std::memcpy(group + kk * kRows, a + g * kRows + kk * a_col, sizeof(float) * kRows);
    std::fill(group + static_cast<size_t>(k) * kRows, group + static_cast<size_t>(kp) * kRows,
              0.0f);
  }
  lay_out_a(m / kRows, m, k, kp, a_at, out);  // the last group, when it has fewer rows
}
[[SIMPREC_TARGET_V3]] void lay_out_left_v3(const float* a, std::ptrdiff_t a_row,
                                           std::ptrdiff_t a_col, int m, int k, int kp, float* out) {
  lay_out_left(a, a_row, a_col, m, k, kp, out);
}
// With rows of A contiguous (a_col = 1), each group's 4 x 16 blocks are transposed in registers.
[[SIMPREC_TARGET_V4]] void lay_out_left_v4(const float* a, std::ptrdiff_t a_row,
                                           std::ptrdiff_t a_col, int m, int k, int kp, float* out) {
#if SIMPREC_AVX512_KERNELS
  if (a_col != 1) {
    lay_out_left(a, a_row, a_col, m, k, kp, out);
    return;
  }
  const auto a_at = [=](int i, int kk) { return a[i * a_row + kk]; };
  lay_out_a(m / kRows, m, k, kp, a_at, out);  // the last group, when it has fewer rows
  for (int g = 0; g < m / kRows; ++g) {
    const float* row = a + g * kRows * a_row;
    float* group = out + static_cast<size_t>(g) * kp * kRows;
    for (int kk = 0; kk + 16 <= k; kk += 16) {
      const __m512 v0 = _mm512_loadu_ps(row + kk), v1 = _mm512_loadu_ps(row + a_row + kk),
                   v2 = _mm512_loadu_ps(row + 2 * a_row + kk),
                   v3 = _mm512_loadu_ps(row + 3 * a_row + kk);
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
      _mm512_storeu_ps(group + kk * kRows, _mm512_shuffle_f32x4(x0, x2, 0x88));
      _mm512_storeu_ps(group + kk * kRows + 16, _mm512_shuffle_f32x4(x0, x2, 0xdd));
      _mm512_storeu_ps(group + kk * kRows + 32, _mm512_shuffle_f32x4(x1, x3, 0x88));
      _mm512_storeu_ps(group + kk * kRows + 48, _mm512_shuffle_f32x4(x1, x3, 0xdd));
    }
    for (int kk = k / 16 * 16; kk < kp; ++kk)
      for (int r = 0; r < kRows; ++r)
        group[kk * kRows + r] = kk < k ? a_at(g * kRows + r, kk) : 0.0f;
  }
#else
  lay_out_left(a, a_row, a_col, m, k, kp, out);
#endif
}
// A right operand held as floats, b(kk, j) = b[kk * ldb + j], laid out likewise.
using LayOutRight = void (*)(const float* b, std::ptrdiff_t ldb, int k, int n, int kp, float* out);
void lay_out_right(const float* b, std::ptrdiff_t ldb, int k, int n, int kp, float* out) {
  lay_out_b(
      n, k, kp, [=](int kk, int j) { return b[kk * ldb + j]; }, out);
}
[[SIMPREC_TARGET_V3]] void lay_out_right_v3(const float* b, std::ptrdiff_t ldb, int k, int n,
                                            int kp, float* out) {
  lay_out_right(b, ldb, k, n, kp, out);
}
[[SIMPREC_TARGET_V4]] void lay_out_right_v4(const float* b, std::ptrdiff_t ldb, int k, int n,
                                            int kp, float* out) {
  lay_out_right(b, ldb, k, n, kp, out);
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
  const Scan sa = exponents_for_cpu(w.a.data(), w.a.size(), model.input_a.emin(),
                                    tensor_core_fast::kExponentBias, w.a_exp.data());
  const Scan sb =
      exponents_for_cpu(w.b.data(), w.b.size(), model.input_b.emin(), 0, w.b_exp.data());
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

// Products a thread is given at least: waking a thread costs about as much as a few million
// products on the fast path (more on a busy machine), so small GEMMs run on fewer threads. The
// results do not depend on the count.
constexpr int64_t kProductsPerThread = int64_t{1} << 23;

// Runs fn(begin, end) on contiguous ranges of [0, count), one per thread, on at most one
// thread per kProductsPerThread of the `products` the whole loop computes.
template <class Fn>
void parallel_ranges(int count, int64_t products, unsigned threads, Fn&& fn) {
  const int64_t by_work = std::max<int64_t>(1, products / kProductsPerThread);
  const auto t = static_cast<unsigned>(
      std::min<int64_t>({resolve_threads(threads), std::max(1, count), by_work}));
  parallel_for(t, t, [&](int64_t part) {
    fn(static_cast<int>(count * part / t), static_cast<int>(count * (part + 1) / t));
  });
}

// The kernel over every tile, then reference(i, j) for every output that needs it.
// row_special[i] and bit j % kCols of col_special[j / kCols]: row i of A or column j of B holds a
// NaN or an infinity.
template <class Reference>
void run_fast(const tensor_core_fast::Packed& o, const uint8_t* row_special,
              const uint32_t* col_special, unsigned threads, Reference&& reference) {
  const tensor_core_fast::TileKernel kernel = tensor_core_fast::tile_kernel_for(*o.model);
  const int groups = (o.m + kRows - 1) / kRows, panels = o.panels();
  // 16 groups (64 rows) of A stay in the cache while the panels of B go by.
  constexpr int kGroupsAtOnce = 16;
  const int64_t products = int64_t{o.m} * o.n * o.k;
  parallel_ranges(groups, products, threads, [&](int begin, int end) {
    for (int g0 = begin; g0 < end; g0 += kGroupsAtOnce) {
      const int g1 = std::min(end, g0 + kGroupsAtOnce);
      for (int p = 0; p < panels; ++p)
        for (int g = g0; g < g1; ++g) kernel(o, g, p);
    }
    for (int i = begin * kRows; i < std::min(o.m, end * kRows); ++i) {
      for (int p = 0; p < panels; ++p) {
        const int cols = std::min(kCols, o.n - p * kCols);
        uint32_t redo = o.redo[static_cast<size_t>(i) * panels + p] | col_special[p];
        if (row_special[i]) redo = cols == kCols ? ~0u : (1u << cols) - 1;
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
  const size_t x = first_value_not_held(format, values);
  if (x < values.size()) {
    throw std::invalid_argument(std::string("tensor_core_gemm_in_place: ") + what + " value " +
                                std::to_string(values[x]) + " is not a " + format.name() +
                                " value");
  }
  bits.resize(values.size());
  round_to_bits<float, uint16_t>(values, bits,
                                 BulkRounding{format, Rounding{}, RandomStream{}, 0, 1});
}

}  // namespace

bool tensor_core_gemm_fast_path(const TensorCoreModel& model) {
  return fast_path_applies(model);
}

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
    // The reference costs about a hundred times a fast-path product.
    parallel_ranges(m, int64_t{100} * m * n * k, threads, [&](int begin, int end) {
      for (int i = begin; i < end; ++i)
        for (int j = 0; j < n; ++j) reference(i, j);
    });
    return d;
  }
  Workspace& w = workspace();
  const float* a_values = value_table(model.input_a);
  const float* b_values = value_table(model.input_b);
  uint32_t bits_or = 0;
  const auto a_at = [&](int i, int kk) { return a_values[a[static_cast<size_t>(i) * k + kk]]; };
  const auto b_at = [&](int kk, int j) { return b_values[b[static_cast<size_t>(kk) * n + j]]; };
  tensor_core_fast::Packed packed = pack(
      model, m, n, k,
      [&](int kp, float* a_out, float* b_out) { lay_out(m, n, k, kp, a_at, b_at, a_out, b_out); },
      a_at, b_at, w, bits_or);
  packed.c = c.data();
  packed.ldc = n;
  packed.d = d.data();
  packed.ldd = n;
  run_fast(packed, w.row_special.data(), w.col_special.data(), threads, reference);
  return d;
}

namespace {

void check_in_place_model(const TensorCoreModel& model) {
  if (model.accumulator != formats::fp32 || model.input_a.width() > 16 ||
      model.input_b.width() > 16) {
    throw std::invalid_argument("tensor_core_gemm_in_place: " + model.name +
                                " does not take 16-bit or narrower inputs into fp32");
  }
}

// Whether the kernels take a packed operand of the model with these sizes: the fast path's models
// on bf16 values, whose encodings are the high halves of their floats.
bool packs_for_kernels(const TensorCoreModel& model, int rows, int cols) {
  return fast_path_applies(model) && model.input_a == formats::bf16 && rows > 0 && cols > 0;
}

// The encodings of x (rows x cols, x_at(i, j) a float) in `format`, after checking that every
// value is one (std::invalid_argument naming the first that is not, as "`what` value").
template <class At>
void encode_values(const Format& format, int rows, int cols, At x_at, std::vector<uint16_t>& bits,
                   const char* what) {
  std::vector<float>& values = workspace().values;
  values.resize(static_cast<size_t>(rows) * cols);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) values[static_cast<size_t>(i) * cols + j] = x_at(i, j);
  encode_exactly(format, values, bits, what);
}

}  // namespace

void TensorCoreOperand::start(const TensorCoreModel& model, bool left, int rows, int cols) {
  check_in_place_model(model);
  if (rows < 0 || cols < 0) {
    throw std::invalid_argument(std::string("tensor_core_gemm_in_place: negative size of ") +
                                (left ? "A: " : "B: ") + std::to_string(rows) + " x " +
                                std::to_string(cols));
  }
  model_ = &model;
  left_ = left;
  rows_ = rows;
  cols_ = cols;
  encoded_ = false;
  fast_ = packs_for_kernels(model, rows, cols);
  kp_ = ((left ? cols : rows) + model.k - 1) / model.k * model.k;  // k padded
}

void TensorCoreOperand::encode_from(const std::function<float(int, int)>& at) {
  encode_values(left_ ? model_->input_a : model_->input_b, rows_, cols_, at, bits_,
                left_ ? "A" : "B");
  encoded_ = true;
}

void TensorCoreOperand::pack_left(const TensorCoreModel& model, int m, int k, const float* a,
                                  std::ptrdiff_t a_row, std::ptrdiff_t a_col) {
  start(model, true, m, k);
  const auto a_at = [=](int i, int kk) { return a[i * a_row + kk * a_col]; };
  if (!fast_) return encode_from(a_at);
  values_.resize(static_cast<size_t>((m + kRows - 1) / kRows) * kp_ * kRows);
  a_exp_.resize(values_.size());
  for_this_cpu<LayOutLeft>(lay_out_left, lay_out_left_v3, lay_out_left_v4)(a, a_row, a_col, m, k,
                                                                           kp_, values_.data());
  const Scan scan = exponents_for_cpu(values_.data(), values_.size(), model.input_a.emin(),
                                      tensor_core_fast::kExponentBias, a_exp_.data());
  any_special_ = scan.special;
  row_special_.assign(m, 0);
  if (scan.special) {
    for (int i = 0; i < m; ++i)
      for (int kk = 0; kk < k; ++kk) row_special_[i] |= is_special(a_at(i, kk));
  }
  // A value with a nonzero low half is not bf16's (an error) or a NaN with a payload, whose
  // encoding the rounding gives.
  if ((scan.bits_or & 0xffffu) != 0) encode_from(a_at);
}

void TensorCoreOperand::pack_right(const TensorCoreModel& model, int k, int n, const float* b,
                                   std::ptrdiff_t ldb) {
  start(model, false, k, n);
  const auto b_at = [=](int kk, int j) { return b[kk * ldb + j]; };
  if (!fast_) return encode_from(b_at);
  const int panels = (n + kCols - 1) / kCols;
  values_.resize(static_cast<size_t>(panels) * kp_ * kCols);
  b_exp_.resize(values_.size());
  for_this_cpu<LayOutRight>(lay_out_right, lay_out_right_v3, lay_out_right_v4)(b, ldb, k, n, kp_,
                                                                               values_.data());
  const Scan scan =
      exponents_for_cpu(values_.data(), values_.size(), model.input_a.emin(), 0, b_exp_.data());
  any_special_ = scan.special;
  col_special_.assign(panels, 0);
  if (scan.special) {
    for (int kk = 0; kk < k; ++kk)
      for (int j = 0; j < n; ++j)
        col_special_[j / kCols] |= static_cast<uint32_t>(is_special(b_at(kk, j))) << (j % kCols);
  }
  if ((scan.bits_or & 0xffffu) != 0) encode_from(b_at);
}

const std::vector<uint16_t>& TensorCoreOperand::encodings() const {
  if (encoded_) return bits_;
  // Laid out for the kernels, every value bf16's: its encoding is its float's high half.
  const auto high_half = [](float x) {
    return static_cast<uint16_t>(std::bit_cast<uint32_t>(x) >> 16);
  };
  bits_.resize(static_cast<size_t>(rows_) * cols_);
  for (int i = 0; i < rows_; ++i) {
    for (int j = 0; j < cols_; ++j) {
      const size_t at = left_ ? (static_cast<size_t>(i / kRows) * kp_ + j) * kRows + i % kRows
                              : (static_cast<size_t>(j / kCols) * kp_ + i) * kCols + j % kCols;
      bits_[static_cast<size_t>(i) * cols_ + j] = high_half(values_[at]);
    }
  }
  encoded_ = true;
  return bits_;
}

void tensor_core_gemm_in_place(const TensorCoreOperand& a, const TensorCoreOperand& b, float* c,
                               std::ptrdiff_t ldc) {
  if (a.model_ == nullptr || !a.left_ || b.left_ || a.model_ != b.model_ || a.cols_ != b.rows_) {
    throw std::invalid_argument(
        "tensor_core_gemm_in_place: packed operands do not fit: expected a left A (m x k) and a "
        "right B (k x n) of one model, got " +
        std::to_string(a.rows_) + " x " + std::to_string(a.cols_) + " and " +
        std::to_string(b.rows_) + " x " + std::to_string(b.cols_));
  }
  const TensorCoreModel& model = *a.model_;
  const int m = a.rows_, n = b.cols_, k = a.cols_;
  Workspace& w = workspace();
  auto* c_bits = reinterpret_cast<uint32_t*>(c);
  if (!a.fast_ || !b.fast_) {
    w.c.resize(static_cast<size_t>(m) * n);
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) w.c[static_cast<size_t>(i) * n + j] = c_bits[i * ldc + j];
    const std::vector<uint32_t> d =
        tensor_core_gemm(model, a.encodings(), b.encodings(), w.c, m, n, k, 1);
    for (int i = 0; i < m; ++i)
      std::memcpy(c + i * ldc, d.data() + static_cast<size_t>(i) * n, sizeof(float) * n);
    return;
  }
  tensor_core_fast::Packed packed{};
  packed.model = &model;
  packed.m = m;
  packed.n = n;
  packed.k = a.kp_;
  packed.a = a.values_.data();
  packed.a_exp = a.a_exp_.data();
  packed.b = b.values_.data();
  packed.b_exp = b.b_exp_.data();
  w.redo.resize(static_cast<size_t>(m) * packed.panels());
  packed.redo = w.redo.data();
  // D is written over C; the reference reads the C of the outputs the kernels flag from c_kept,
  // and where a NaN or an infinity sends others to it as well, D goes beside C first.
  const bool specials = a.any_special_ || b.any_special_;
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
  run_fast(packed, a.row_special_.data(), b.col_special_.data(), 1, [&](int i, int j) {
    const uint16_t* a_bits = a.encodings().data();
    const uint16_t* b_bits = b.encodings().data();
    const uint32_t c_ij = specials ? c_bits[i * ldc + j] : w.c[static_cast<size_t>(i) * n + j];
    packed.d[i * packed.ldd + j] =
        tensor_core_dot(model, a_bits + static_cast<size_t>(i) * k, 1, b_bits + j, n, k, c_ij);
  });
  if (specials) {
    for (int i = 0; i < m; ++i)
      std::memcpy(c + i * ldc, w.d.data() + static_cast<size_t>(i) * n, sizeof(float) * n);
  }
}

void tensor_core_gemm_in_place(const TensorCoreModel& model, int m, int n, int k, const float* a,
                               std::ptrdiff_t a_row, std::ptrdiff_t a_col, const float* b,
                               std::ptrdiff_t ldb, float* c, std::ptrdiff_t ldc) {
  if (m < 0 || n < 0 || k < 0) {
    throw std::invalid_argument("tensor_core_gemm_in_place: negative size M=" + std::to_string(m) +
                                ", N=" + std::to_string(n) + ", K=" + std::to_string(k));
  }
  thread_local TensorCoreOperand left, right;
  left.pack_left(model, m, k, a, a_row, a_col);
  right.pack_right(model, k, n, b, ldb);
  tensor_core_gemm_in_place(left, right, c, ldc);
}

}  // namespace simprec
