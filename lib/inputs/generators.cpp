#include "lib/inputs/generators.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <span>
#include <stdexcept>

#include "emulation/did_you_mean.hpp"
#include "emulation/excerpt.hpp"
#include "emulation/random.hpp"
#include "emulation/round.hpp"
#include "lib/attention/footprint.hpp"
#include "lib/limits/checked_arithmetic.hpp"
#include "lib/npy/npy.hpp"

namespace simprec::inputs {
namespace {

using attention::AttentionInputs;
using attention::AttentionShape;

// Standard normal from a counter-based stream (Box-Muller): the same numbers on every platform.
class Normal {
 public:
  Normal(uint64_t seed, uint64_t stream) : rs_{seed, stream} {}
  double operator()() {
    const double u1 = (static_cast<double>(random_bits(rs_, next_++)) + 0.5) * 0x1p-32;
    const double u2 = static_cast<double>(random_bits(rs_, next_++)) * 0x1p-32;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
  }

 private:
  RandomStream rs_;
  uint64_t next_ = 0;
};

enum Tensor : uint64_t { kQ, kK, kV, kDo, kAux };

// Stream of one (tensor, batch entry, head): each batch entry is an independent draw.
Normal stream(uint64_t seed, Tensor t, int64_t b, int64_t h) {
  return Normal(seed, (static_cast<uint64_t>(t) << 56) ^ (static_cast<uint64_t>(b) << 24) ^
                          static_cast<uint64_t>(h));
}

}  // namespace

std::vector<std::string> generator_kinds() {
  return {"normal", "peaky", "repeated-max", "low-rank", "sinks", "outliers"};
}

GeneratorParams generator_params(const std::map<std::string, double>& values) {
  GeneratorParams p;
  for (const auto& [key, value] : values) {
    const auto bad = [&, key = key, value = value](const std::string& expected) {
      char text[40];
      std::snprintf(text, sizeof text, "%.17g", value);
      return std::invalid_argument("generator parameter " + key + " = " + text + ": expected " +
                                   expected);
    };
    if (key == "peak" || key == "concentration") {
      if (!std::isfinite(value) || value <= 0) throw bad("a finite positive number");
      (key == "peak" ? p.peak : p.concentration) = value;
    } else if (key == "prototypes") {
      if (!(value >= 1 && value <= kMaxPrototypes) || value != std::floor(value))
        throw bad("an integer in [1, " + std::to_string(kMaxPrototypes) + "]");
      p.prototypes = static_cast<int>(value);
    } else {
      throw std::invalid_argument("unknown generator parameter '" + excerpt(key) +
                                  "' (expected peak, prototypes or concentration)");
    }
  }
  return p;
}

AttentionInputs generate(std::string_view kind, const AttentionShape& shape_in, uint64_t seed,
                         bool with_grad, const GeneratorParams& prm) {
  AttentionShape s = shape_in;
  s.dv = s.d;
  attention::check_shape(s);
  bool known = false;
  for (const auto& k : generator_kinds()) known |= k == kind;
  if (!known) {
    std::string list;
    for (const auto& k : generator_kinds()) list += (list.empty() ? "" : ", ") + k;
    throw std::invalid_argument("unknown input generator '" + excerpt(kind) + "'" +
                                did_you_mean(kind, generator_kinds()) + " (known: " + list + ")");
  }
  AttentionInputs in;
  in.shape = s;
  const int64_t nq = s.nq, nk = s.nk, d = s.d;
  in.q.resize(s.problems() * nq * d);
  in.k.resize(s.problems() * nk * d);
  in.v.resize(in.k.size());
  if (with_grad) in.d_out.resize(in.q.size());
  const double root_d = std::sqrt(static_cast<double>(d));
  // Each tensor draws from its own stream, so a tensor's values do not depend on the other
  // tensors' lengths: the first rows of a longer key sequence are those of a shorter one.
  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t h = 0; h < s.heads; ++h) {
      const int64_t problem = b * s.heads + h;
      Normal n_q = stream(seed, kQ, b, h), n_k = stream(seed, kK, b, h),
             n_v = stream(seed, kV, b, h), n_do = stream(seed, kDo, b, h),
             aux = stream(seed, kAux, b, h);
      double* q = in.q.data() + problem * nq * d;
      double* k = in.k.data() + problem * nk * d;
      double* v = in.v.data() + problem * nk * d;
      double* dout = with_grad ? in.d_out.data() + problem * nq * d : nullptr;
      if (kind == "normal" || kind == "peaky" || kind == "sinks" || kind == "outliers") {
        const double qscale = kind == "peaky" ? prm.peak : 1.0;
        for (int64_t x = 0; x < nq * d; ++x) q[x] = qscale * n_q();
        for (int64_t x = 0; x < nk * d; ++x) {
          k[x] = n_k();
          v[x] = n_v();
        }
        if (dout) {
          for (int64_t x = 0; x < nq * d; ++x) dout[x] = n_do();
        }
        if (kind == "outliers") {
          // What quantisation scales meet in real models, with every head's scores and O on one
          // scale: a per-channel bias of K shared by every key (what SageAttention's smoothing
          // removes), an outlier head (the last of each draw: K `peak` times larger, Q `peak`
          // times smaller) and a block of outlier values (V of the 64 keys from Nk/2 on `peak`
          // times larger).
          for (int64_t c = 0; c < d; ++c) {
            const double bias = 2.0 * aux();
            for (int64_t j = 0; j < nk; ++j) k[j * d + c] += bias;
          }
          if (s.heads > 1 && h == s.heads - 1) {
            for (int64_t x = 0; x < nq * d; ++x) q[x] /= prm.peak;
            for (int64_t x = 0; x < nk * d; ++x) k[x] *= prm.peak;
          }
          for (int64_t x = nk / 2 * d; x < std::min(nk, nk / 2 + 64) * d; ++x) v[x] *= prm.peak;
        }
        if (kind == "sinks") {
          // A direction u every query leans on, and key 0 strongly aligned with it.
          std::vector<double> u(d);
          double norm = 0;
          for (auto& x : u) {
            x = aux();
            norm += x * x;
          }
          norm = std::sqrt(norm);
          for (auto& x : u) x /= norm;
          for (int64_t i = 0; i < nq; ++i) {
            for (int64_t c = 0; c < d; ++c) q[i * d + c] += 2.0 * u[c];
          }
          for (int64_t c = 0; c < d; ++c) {
            k[c] = 4.0 * root_d * u[c] / 2.0;
            v[c] *= 0.05;
          }
        }
      } else if (kind == "repeated-max") {
        const int protos = std::max(1, prm.prototypes);
        std::vector<double> proto(protos * d);
        for (int p = 0; p < protos; ++p) {
          double norm = 0;
          for (int64_t c = 0; c < d; ++c) {
            proto[p * d + c] = aux();
            norm += proto[p * d + c] * proto[p * d + c];
          }
          norm = std::sqrt(norm);
          for (int64_t c = 0; c < d; ++c) proto[p * d + c] *= root_d / norm;
        }
        for (int64_t j = 0; j < nk; ++j) {
          const int p = static_cast<int>(
              random_bits(RandomStream{seed, 0xabcdULL ^ (static_cast<uint64_t>(b) << 24) ^ h}, j) %
              protos);
          for (int64_t c = 0; c < d; ++c) k[j * d + c] = proto[p * d + c];
        }
        for (int64_t i = 0; i < nq; ++i) {
          const int p = static_cast<int>(
              random_bits(RandomStream{seed, 0xdcbaULL ^ (static_cast<uint64_t>(b) << 24) ^ h}, i) %
              protos);
          // A concentration that varies by row, so that the row maxima (and with them the
          // rounding patterns of exp and of the sums) differ between rows and draws.
          const double u =
              (static_cast<double>(random_bits(
                   RandomStream{seed, 0x5ca1eULL ^ (static_cast<uint64_t>(b) << 24) ^ h}, i)) +
               0.5) *
              0x1p-32;
          const double concentration = prm.concentration * (0.5 + u);
          for (int64_t c = 0; c < d; ++c)
            q[i * d + c] = concentration * proto[p * d + c] + 0.1 * n_q();
        }
        for (int64_t x = 0; x < nk * d; ++x) v[x] = -1.0 + 0.25 * n_v();
        if (dout) {
          for (int64_t x = 0; x < nq * d; ++x) dout[x] = 1.0 + 0.5 * n_do();
        }
      } else {  // low-rank
        std::vector<double> u(d);
        double norm = 0;
        for (auto& x : u) {
          x = aux();
          norm += x * x;
        }
        norm = std::sqrt(norm);
        for (auto& x : u) x *= 1.0 / norm * std::sqrt(root_d);
        for (int64_t i = 0; i < nq; ++i) {
          for (int64_t c = 0; c < d; ++c) q[i * d + c] = 2.0 * u[c] + 0.5 * n_q();
        }
        for (int64_t j = 0; j < nk; ++j) {
          for (int64_t c = 0; c < d; ++c) k[j * d + c] = 2.0 * u[c] + 0.5 * n_k();
        }
        for (int64_t x = 0; x < nk * d; ++x) v[x] = 1.0 + 0.25 * n_v();
        if (dout) {
          for (int64_t x = 0; x < nq * d; ++x) dout[x] = n_do();
        }
      }
    }
  }
  return in;
}

namespace {

struct Loaded {
  std::vector<int64_t> shape;
  std::vector<double> values;
};

Loaded load_one(const NpyArray& a, const std::string& label,
                const std::optional<Format>& bits_format, NonFiniteInputs non_finite) {
  if (a.shape.size() < 2) {
    throw std::invalid_argument(label + ": expected shape (..., N, d), got " +
                                std::to_string(a.shape.size()) + " dimensions");
  }
  Loaded out;
  out.shape = a.shape;
  out.values.resize(a.size());
  if (bits_format) {
    if (a.type != NpyType::kUint16 && a.type != NpyType::kUint8) {
      throw std::invalid_argument(label + ": --input-format " + bits_format->name() +
                                  " expects uint16 or uint8 bit patterns, the file holds " +
                                  npy_type_name(a.type));
    }
    // The dtype must be the format's width: uint8 for 8-bit formats, uint16 for 9 to 16 bits.
    const bool narrow = bits_format->width() <= 8;
    if (bits_format->width() > 16 || (a.type == NpyType::kUint8) != narrow) {
      throw std::invalid_argument(
          label + ": --input-format " + bits_format->name() + " is " +
          std::to_string(bits_format->width()) + " bits wide, the file holds " +
          npy_type_name(a.type) +
          (bits_format->width() > 16
               ? " (--input-format takes formats of at most 16 bits; give float32 or float64 "
                 "values without it)"
               : std::string(" (expected ") + (narrow ? "uint8" : "uint16") + " bit patterns)"));
    }
    const std::vector<double> raw = a.to_doubles();
    for (size_t i = 0; i < raw.size(); ++i)
      out.values[i] = decode(*bits_format, static_cast<uint64_t>(raw[i]));
  } else {
    if (a.type != NpyType::kFloat32 && a.type != NpyType::kFloat64) {
      throw std::invalid_argument(label +
                                  ": expected float32 or float64 values (or bit "
                                  "patterns with --input-format), the file holds " +
                                  npy_type_name(a.type));
    }
    out.values = a.to_doubles();
  }
  for (size_t i = 0; i < out.values.size() && non_finite == NonFiniteInputs::kRefuse; ++i) {
    if (!std::isfinite(out.values[i])) {
      throw std::invalid_argument(label + ": non-finite value at flat index " + std::to_string(i));
    }
  }
  return out;
}

std::string shape_text(const std::vector<int64_t>& s) {
  std::string t = "(";
  for (size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
  return t + ")";
}

}  // namespace

AttentionInputs load_inputs(const std::filesystem::path& qp, const std::filesystem::path& kp,
                            const std::filesystem::path& vp,
                            const std::optional<std::filesystem::path>& dop,
                            const std::optional<Format>& bits_format) {
  const NpyArray q = read_npy(qp), k = read_npy(kp), v = read_npy(vp);
  std::optional<NpyArray> d_out;
  if (dop) d_out = read_npy(*dop);
  return inputs_from_arrays(
      {&q, qp.string()}, {&k, kp.string()}, {&v, vp.string()},
      d_out ? std::optional<LabelledArray>({&*d_out, dop->string()}) : std::nullopt, bits_format);
}

AttentionInputs inputs_from_arrays(const LabelledArray& qa, const LabelledArray& ka,
                                   const LabelledArray& va, const std::optional<LabelledArray>& doa,
                                   const std::optional<Format>& bits_format,
                                   NonFiniteInputs non_finite) {
  const Loaded q = load_one(*qa.array, qa.label, bits_format, non_finite),
               k = load_one(*ka.array, ka.label, bits_format, non_finite),
               v = load_one(*va.array, va.label, bits_format, non_finite);
  const size_t rank = q.shape.size();
  // The dimensions before the heads must agree; K and V may have fewer heads than Q, a divisor
  // of Q's (grouped-query attention).
  const auto batch_dims = [](const std::vector<int64_t>& s) {
    return std::vector<int64_t>(s.begin(), s.end() - std::min<size_t>(s.size(), 3));
  };
  const auto heads_of = [&](const std::vector<int64_t>& s) { return rank >= 3 ? s[rank - 3] : 1; };
  if (k.shape.size() != rank || v.shape.size() != rank ||
      batch_dims(k.shape) != batch_dims(q.shape) || batch_dims(v.shape) != batch_dims(q.shape) ||
      heads_of(k.shape) != heads_of(v.shape) || heads_of(k.shape) < 1 ||
      heads_of(q.shape) % heads_of(k.shape) != 0) {
    throw std::invalid_argument("shape mismatch: Q " + shape_text(q.shape) + ", K " +
                                shape_text(k.shape) + ", V " + shape_text(v.shape) +
                                " (leading dimensions must agree; K and V may have fewer heads "
                                "than Q, a divisor of Q's)");
  }
  if (k.shape[rank - 1] != q.shape[rank - 1]) {
    throw std::invalid_argument("shape mismatch: Q " + shape_text(q.shape) + " and K " +
                                shape_text(k.shape) + " differ in the head dimension");
  }
  if (v.shape[rank - 2] != k.shape[rank - 2]) {
    throw std::invalid_argument("shape mismatch: K " + shape_text(k.shape) + " and V " +
                                shape_text(v.shape) + " differ in the key count");
  }
  AttentionInputs in;
  AttentionShape& s = in.shape;
  s.batch = limits::checked_product(
      std::span<const int64_t>(q.shape.data(), rank - std::min<size_t>(rank, 3)),
      qa.label + ": batch dimensions");
  s.heads = rank >= 3 ? q.shape[rank - 3] : 1;
  s.nq = q.shape[rank - 2];
  s.d = q.shape[rank - 1];
  s.nk = k.shape[rank - 2];
  s.dv = v.shape[rank - 1];
  if (heads_of(k.shape) != s.heads) s.heads_kv = heads_of(k.shape);
  in.q = q.values;
  in.k = k.values;
  in.v = v.values;
  if (doa) {
    const Loaded g = load_one(*doa->array, doa->label, bits_format, non_finite);
    std::vector<int64_t> expected = q.shape;
    expected[rank - 1] = s.dv;
    if (g.shape != expected) {
      throw std::invalid_argument("shape mismatch: dO " + shape_text(g.shape) + ", expected " +
                                  shape_text(expected));
    }
    in.d_out = g.values;
  }
  in.validate();
  return in;
}

}  // namespace simprec::inputs
