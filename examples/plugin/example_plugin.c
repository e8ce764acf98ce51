/* An out-of-tree simprec plugin, in C: one matmul kernel, D = A*B + C on bf16 inputs with an
 * fp32 accumulator, D in fp32 or bf16. It claims to be reproduced bit for bit by simprec's
 * "sequential" accumulation model; `simprec validate` checks that claim.
 *
 * Everything a plugin needs is in plugins/simprec_plugin.h:
 *   1. descriptors (static data, valid until the library is unloaded), each struct_size set
 *      to its SIMPREC_*_STRUCT_SIZE;
 *   2. a run function per kernel that reads DLTensors in host memory and returns a status,
 *      with a message in args->error on failure;
 *   3. the one exported function, simprec_plugin_entry(), which checks the host's ABI major
 *      version and hands over the description. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "plugin_helpers.h"

static SimprecStatus run_gemm_bf16(const SimprecRunArgs* args) {
  /* The host has checked names, formats and shapes against the descriptor below. */
  const SimprecTensor* a = find_tensor(args, "A");
  const SimprecTensor* b = find_tensor(args, "B");
  const SimprecTensor* c = find_tensor(args, "C"); /* optional */
  const SimprecTensor* d = find_tensor(args, "D");
  if (!a || !b || !d) return fail(args, SIMPREC_ERROR_INVALID_ARGUMENT, "A, B and D are required");
  const int64_t m = a->tensor->shape[0], k = a->tensor->shape[1], n = b->tensor->shape[1];
  const uint16_t* av = (const uint16_t*)a->tensor->data;
  const uint16_t* bv = (const uint16_t*)b->tensor->data;
  const float* cv = c ? (const float*)c->tensor->data : NULL;
  const int bf16_output = strcmp(d->format, "bf16") == 0;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float acc = cv ? cv[i * n + j] : 0.0f;
      /* One fused multiply-add per term, in K order: the "sequential" model in fp32. */
      for (int64_t p = 0; p < k; ++p)
        acc = fmaf(bf16_to_float(av[i * k + p]), bf16_to_float(bv[p * n + j]), acc);
      if (bf16_output) {
        ((uint16_t*)d->tensor->data)[i * n + j] = float_to_bf16(acc);
      } else {
        ((float*)d->tensor->data)[i * n + j] = acc;
      }
    }
  }
  return SIMPREC_OK;
}

/* ---- the description ---- */
static const SimprecOperandSpec operand_a = {
    SIMPREC_OPERAND_SPEC_STRUCT_SIZE, "A", SIMPREC_OPERAND_INPUT, 0, "bf16", "M,K"};
static const SimprecOperandSpec operand_b = {
    SIMPREC_OPERAND_SPEC_STRUCT_SIZE, "B", SIMPREC_OPERAND_INPUT, 0, "bf16", "K,N"};
static const SimprecOperandSpec operand_c = {
    SIMPREC_OPERAND_SPEC_STRUCT_SIZE, "C",    SIMPREC_OPERAND_INPUT,
    SIMPREC_OPERAND_FLAG_OPTIONAL,    "fp32", "M,N"};
/* The first format listed is the default; `--format D=bf16` picks the other. */
static const SimprecOperandSpec operand_d = {
    SIMPREC_OPERAND_SPEC_STRUCT_SIZE, "D", SIMPREC_OPERAND_OUTPUT, 0, "fp32,bf16", "M,N"};
static const SimprecOperandSpec* const operands[] = {&operand_a, &operand_b, &operand_c,
                                                     &operand_d};

static const SimprecDimensionSpec k_limit = {SIMPREC_DIMENSION_SPEC_STRUCT_SIZE, "K", 1, 1 << 16,
                                             1};
static const SimprecDimensionSpec* const dimensions[] = {&k_limit};

/* The emulation accumulates in fp32, then rounds to D's format to nearest even. */
static const SimprecNamedValue accumulator = {SIMPREC_NAMED_VALUE_STRUCT_SIZE,
                                              "accumulator_format",
                                              SIMPREC_VALUE_STRING,
                                              0,
                                              {.string_value = "fp32"}};
static const SimprecNamedValue* const attributes[] = {&accumulator};

static const SimprecKernel gemm_bf16 = {
    .struct_size = SIMPREC_KERNEL_STRUCT_SIZE,
    .name = "gemm_bf16",
    .kind = SIMPREC_KERNEL_MATMUL,
    .flags = SIMPREC_KERNEL_FLAG_BIT_EXACT,
    .description = "bf16 x bf16 + fp32 -> fp32 or bf16, fp32 fma accumulation in K order",
    .emulation_model = "sequential",
    .operand_count = 4,
    .operands = operands,
    .dimension_count = 1,
    .dimensions = dimensions,
    .parameter_count = 0,
    .parameters = NULL,
    .attribute_count = 1,
    .attributes = attributes,
    .run = run_gemm_bf16,
};
static const SimprecKernel* const kernels[] = {&gemm_bf16};

static const SimprecPlugin plugin = {
    .struct_size = SIMPREC_PLUGIN_STRUCT_SIZE,
    .abi_major = SIMPREC_PLUGIN_ABI_MAJOR,
    .abi_minor = SIMPREC_PLUGIN_ABI_MINOR,
    .name = "example",
    .version = "1.0.0",
    .description = "the out-of-tree plugin example of docs/plugins.md",
    .kernel_count = 1,
    .kernels = kernels,
    .shutdown = NULL,
};

SIMPREC_PLUGIN_EXPORT SimprecStatus simprec_plugin_entry(SimprecEntryArgs* args) {
  if (args->host_abi_major != SIMPREC_PLUGIN_ABI_MAJOR) {
    if (args->error && args->error_size > 0) {
      snprintf(args->error, args->error_size, "built for plugin ABI %d, the host speaks %u",
               SIMPREC_PLUGIN_ABI_MAJOR, (unsigned)args->host_abi_major);
    }
    return SIMPREC_ERROR_UNSUPPORTED;
  }
  args->plugin = &plugin;
  return SIMPREC_OK;
}
