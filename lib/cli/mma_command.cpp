// simprec mma: D = A*B + C the way a tensor-core instruction chain computes it (emulation/
// tensor_core.hpp), on .npy operands; `simprec mma --list` lists the models.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "emulation/round.hpp"
#include "emulation/tensor_core.hpp"
#include "lib/cli/command.hpp"
#include "lib/limits/checked_arithmetic.hpp"
#include "lib/limits/memory_bound.hpp"
#include "lib/npy/npy.hpp"

namespace simprec::cli {
namespace {

struct Options {
  std::string model, a, b, c, out, max_memory;
  bool list = false;
  unsigned threads = 0;
};

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

std::string alignment_text(const TensorCoreModel& m) {
  return m.alignment == AlignmentExponent::kOperandSum ? "e(a)+e(b)" : "exact product exponent";
}

void list_models() {
  std::printf("%-28s %-9s %-15s %-7s %-6s %-9s %-6s %-5s %-10s %-8s %s\n", "model", "verified",
              "gpu", "input", "accum", "m,n,k", "block", "kept", "grouping", "rounding",
              "instruction");
  for (const TensorCoreModel& m : tensor_core_models()) {
    const std::string shape =
        std::to_string(m.m) + "," + std::to_string(m.n) + "," + std::to_string(m.k);
    std::string rounding = std::string(short_name(m.block_rounding));
    if (m.block_result_precision < m.accumulator.precision())
      rounding += "/p" + std::to_string(m.block_result_precision);
    if (m.c_entry == CEntry::kSeparateAddition) rounding += "+C(rne)";
    std::printf("%-28s %-9s %-15s %-7s %-6s %-9s %-6d %-5d %-10s %-8s %s\n", m.name.c_str(),
                m.verified ? "yes(H100)" : "no", m.gpu.c_str(), m.input.name().c_str(),
                m.accumulator.name().c_str(), shape.c_str(), m.block_size, m.kept_fraction_bits,
                m.grouping == KGrouping::kContiguous ? "contiguous" : "pairs", rounding.c_str(),
                m.instruction.c_str());
  }
  std::printf(
      "\nblock: products aligned together; kept: fraction bits kept below the alignment exponent "
      "(%s); rounding: of each block's sum.\n",
      alignment_text(tensor_core_models().front()).c_str());
}

// Encodings of `format` from an .npy array of bit patterns (the right width) or of float32
// values that are exactly representable.
std::vector<uint32_t> encodings(const NpyArray& array, const Format& format,
                                const std::string& what) {
  const bool narrow = format.width() <= 8;
  std::vector<uint32_t> bits(static_cast<size_t>(array.size()));
  if (array.type == NpyType::kUint8 || array.type == NpyType::kUint16) {
    const bool is8 = array.type == NpyType::kUint8;
    if (format.width() > 16 || is8 != narrow) {
      throw UsageError(what + ": " + npy_type_name(array.type) + " bit patterns do not fit " +
                       format.name() + " (expected " +
                       (format.width() > 16 ? std::string("float32 values")
                        : narrow            ? std::string("uint8")
                                            : std::string("uint16")) +
                       " or exactly representable float32 values)");
    }
    for (size_t i = 0; i < bits.size(); ++i)
      bits[i] = is8 ? array.as<uint8_t>()[i] : array.as<uint16_t>()[i];
    return bits;
  }
  if (array.type != NpyType::kFloat32) {
    throw UsageError(what + ": dtype " + npy_type_name(array.type) + " is not accepted for " +
                     format.name() + " (expected " +
                     (format.width() <= 16
                          ? std::string(narrow ? "uint8" : "uint16") + " bit patterns or "
                          : "") +
                     "float32 values)");
  }
  const std::span<const float> values = array.as<float>();
  for (size_t i = 0; i < bits.size(); ++i) {
    const float x = values[i];
    const Unrounded u = unrounded_from_float(x);
    const auto b = static_cast<uint32_t>(round_to_format(format, u, Rounding{}));
    const double back = decode(format, b);
    const bool same =
        x != x ? back != back
               : (back == static_cast<double>(x) && std::signbit(back) == std::signbit(x));
    if (!same) {
      char text[64];
      std::snprintf(text, sizeof text, "%.9g", static_cast<double>(x));
      throw UsageError(what + "[" + std::to_string(i) + "] = " + text +
                       " is not representable in " + format.name());
    }
    bits[i] = b;
  }
  return bits;
}

// Batch dimensions: everything before the last two. An operand without them is shared.
std::vector<int64_t> batch_of(const std::vector<int64_t>& shape) {
  return {shape.begin(), shape.end() - 2};
}

void run_mma(const Options& o) {
  if (o.list) {
    list_models();
    return;
  }
  if (o.model.empty() || o.a.empty() || o.b.empty() || o.out.empty()) {
    throw UsageError("mma needs --model, --a, --b and --out (or --list)");
  }
  const TensorCoreModel* model;
  try {
    model = &tensor_core_model(o.model);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  const NpyArray a = read_npy(o.a), b = read_npy(o.b);
  if (a.shape.size() < 2 || b.shape.size() < 2) {
    throw UsageError("A and B need at least two dimensions; A is " + shape_text(a.shape) +
                     ", B is " + shape_text(b.shape));
  }
  const int64_t m = a.shape[a.shape.size() - 2], k = a.shape.back();
  const int64_t kb = b.shape[b.shape.size() - 2], n = b.shape.back();
  if (k != kb) {
    throw UsageError("A " + shape_text(a.shape) + " and B " + shape_text(b.shape) +
                     ": K differs (" + std::to_string(k) + " vs " + std::to_string(kb) + ")");
  }
  std::vector<int64_t> batch = batch_of(a.shape);
  const auto check_batch = [&](const std::vector<int64_t>& shape, const char* name) {
    const std::vector<int64_t> other = batch_of(shape);
    if (other.empty()) return;
    if (batch.empty()) batch = other;
    if (other != batch) {
      throw UsageError(std::string(name) + " " + shape_text(shape) +
                       ": batch dimensions differ from A " + shape_text(a.shape));
    }
  };
  check_batch(b.shape, "B");
  std::vector<uint32_t> c_bits;
  std::vector<int64_t> c_shape;
  if (!o.c.empty()) {
    const NpyArray c = read_npy(o.c);
    if (c.shape.size() < 2 || c.shape[c.shape.size() - 2] != m || c.shape.back() != n) {
      throw UsageError("C " + shape_text(c.shape) + ": expected (..., " + std::to_string(m) + ", " +
                       std::to_string(n) + ")");
    }
    check_batch(c.shape, "C");
    c_bits = encodings(c, model->accumulator, "C");
    c_shape = c.shape;
  }
  // M, N and K reach the GEMM as int; D's size is checked before anything is allocated.
  for (const auto& [name, size] : {std::pair{"M", m}, std::pair{"N", n}, std::pair{"K", k}}) {
    if (size < 1 || size > INT32_MAX) {
      throw UsageError(std::string(name) + " = " + std::to_string(size) + " is out of range [1, " +
                       std::to_string(INT32_MAX) + "]");
    }
  }
  int64_t batches = 0;
  limits::MemoryEstimate estimate;
  try {
    batches = limits::checked_product(std::span<const int64_t>(batch), "batch dimensions");
    std::vector<int64_t> d_dims = {batches, m, n};
    estimate.add(limits::checked_product(std::span<const int64_t>(d_dims), "D (batch x M x N)"),
                 2 * sizeof(uint32_t));
    estimate.add(m * k + k * n, 2 * sizeof(uint32_t)).add(m * n, 2 * sizeof(uint32_t));
    estimate.add(a.size() + b.size(), sizeof(uint32_t));
    limits::check_memory(estimate, limits::memory_limit(o.max_memory),
                         "D " + shape_text({batches, m, n}));
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  const std::vector<uint32_t> a_bits = encodings(a, model->input, "A"),
                              b_bits = encodings(b, model->input, "B");
  const bool a_shared = a.shape.size() == 2, b_shared = b.shape.size() == 2,
             c_shared = c_shape.size() == 2;
  std::vector<uint32_t> d(static_cast<size_t>(batches * m * n));
  std::vector<uint16_t> at(static_cast<size_t>(m * k)), bt(static_cast<size_t>(k * n));
  std::vector<uint32_t> ct(static_cast<size_t>(m * n), 0u);
  for (int64_t t = 0; t < batches; ++t) {
    const int64_t ao = a_shared ? 0 : t * m * k, bo = b_shared ? 0 : t * k * n,
                  co = c_shared ? 0 : t * m * n;
    for (int64_t i = 0; i < m * k; ++i) at[i] = static_cast<uint16_t>(a_bits[ao + i]);
    for (int64_t i = 0; i < k * n; ++i) bt[i] = static_cast<uint16_t>(b_bits[bo + i]);
    if (!c_bits.empty())
      for (int64_t i = 0; i < m * n; ++i) ct[i] = c_bits[co + i];
    const std::vector<uint32_t> dt =
        tensor_core_gemm(*model, at, bt, ct, static_cast<int>(m), static_cast<int>(n),
                         static_cast<int>(k), o.threads);
    std::copy(dt.begin(), dt.end(), d.begin() + t * m * n);
  }
  std::vector<int64_t> d_shape = batch;
  d_shape.push_back(m);
  d_shape.push_back(n);
  if (model->accumulator == formats::fp32) {
    std::vector<float> values(d.size());
    std::memcpy(values.data(), d.data(), d.size() * 4);
    write_npy(o.out, make_npy<float>(d_shape, values));
  } else {
    const std::vector<uint16_t> values(d.begin(), d.end());
    write_npy(o.out, make_npy<uint16_t>(d_shape, values));
  }
  std::printf("%s: D %s (%s) written to %s\n", model->name.c_str(), shape_text(d_shape).c_str(),
              model->accumulator == formats::fp32 ? "float32" : "fp16 bit patterns, uint16",
              o.out.c_str());
}

const RegisterCommand kRegistration([](CLI::App& app) {
  auto options = std::make_shared<Options>();
  auto* command =
      app.add_subcommand("mma", "D = A*B + C the way a tensor-core instruction chain computes it.");
  command->add_flag("--list", options->list,
                    "list the models and whether each is verified on hardware");
  command->add_option("--model", options->model, "model name (see --list), e.g. tc:sm90-mma-bf16");
  command->add_option("--a", options->a,
                      "A.npy, shape (..., M, K): uint16/uint8 bit patterns or float32 values");
  command->add_option("--b", options->b, "B.npy, shape (..., K, N)");
  command->add_option("--c", options->c,
                      "C.npy, shape (..., M, N): float32 (fp16 accumulators: uint16 bits or "
                      "float32); default zeros");
  command->add_option("--out", options->out,
                      "D.npy: float32, or uint16 fp16 bit patterns for fp16 accumulators");
  command->add_option("--threads", options->threads, "threads (0: all)");
  command->add_option("--max-memory", options->max_memory,
                      "refuse work whose estimated memory exceeds SIZE (e.g. 4G; default: the "
                      "machine's physical memory)");
  command->callback([options] { run_mma(*options); });
});

}  // namespace
}  // namespace simprec::cli
