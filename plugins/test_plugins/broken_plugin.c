/* Deliberately broken plugins for the host's tests, one per way a plugin can go wrong. The
 * variant is chosen at compile time (plugins/CMakeLists.txt builds each):
 *   BROKEN_NO_ENTRY        exports no simprec_plugin_entry
 *   BROKEN_WRONG_MAJOR     describes itself with ABI major 2
 *   BROKEN_ENTRY_FAILS     the entry function returns an error
 *   BROKEN_HANGING_ENTRY   the entry function never returns
 *   BROKEN_UNKNOWN_KIND    a kernel of kind 99
 *   BROKEN_NULL_NAME       a kernel without a name
 *   BROKEN_SMALL_STRUCT    a kernel whose struct_size is too small for ABI 1.0
 *   BROKEN_FAILING_KERNEL  the kernel returns SIMPREC_ERROR_DEVICE with a message
 *   BROKEN_CRASHING_KERNEL the kernel writes through a null pointer (SIGSEGV)
 *   BROKEN_HANGING_KERNEL  the kernel never returns
 *   BROKEN_WRONG_CLAIM     an unfused fp32 GEMM that claims to be bit-exact "sequential"
 *   BROKEN_TYPO_ATTRIBUTE  the attribute "accumulator_format" misspelt "acumulator_format"
 *   BROKEN_OVERRUN_<N>     the unfused GEMM, then N more bytes written after the end of D
 * Written in C to show that the header is plain C11. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "plugins/simprec_plugin.h"

static void write_error(const SimprecRunArgs* args, const char* message) {
  if (args->error && args->error_size > 0) snprintf(args->error, args->error_size, "%s", message);
}

static const SimprecTensor* find_tensor(const SimprecRunArgs* args, const char* name) {
  for (size_t i = 0; i < args->tensor_count; ++i) {
    if (strcmp(args->tensors[i]->name, name) == 0) return args->tensors[i];
  }
  return NULL;
}

/* fp32 D = A*B (+ C) with the product rounded before each add. */
__attribute__((unused)) static SimprecStatus unfused_gemm(const SimprecRunArgs* args) {
  const SimprecTensor* a = find_tensor(args, "A");
  const SimprecTensor* b = find_tensor(args, "B");
  const SimprecTensor* c = find_tensor(args, "C");
  const SimprecTensor* d = find_tensor(args, "D");
  if (!a || !b || !d) {
    write_error(args, "missing operand");
    return SIMPREC_ERROR_INVALID_ARGUMENT;
  }
  const int64_t m = a->tensor->shape[0], k = a->tensor->shape[1], n = b->tensor->shape[1];
  const float* av = (const float*)a->tensor->data;
  const float* bv = (const float*)b->tensor->data;
  float* dv = (float*)d->tensor->data;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float acc = c ? ((const float*)c->tensor->data)[i * n + j] : 0.0f;
      for (int64_t p = 0; p < k; ++p) {
        const float product = av[i * k + p] * bv[p * n + j];
        acc = acc + product;
      }
      dv[i * n + j] = acc;
    }
  }
  return SIMPREC_OK;
}

static SimprecStatus broken_run(const SimprecRunArgs* args) {
#if defined(BROKEN_FAILING_KERNEL)
  write_error(args, "simulated device failure: out of memory");
  return SIMPREC_ERROR_DEVICE;
#elif defined(BROKEN_CRASHING_KERNEL)
  volatile int* nowhere = NULL;
  *nowhere = 1;
  return SIMPREC_OK;
#elif defined(BROKEN_HANGING_KERNEL)
  for (;;) sleep(1);
  return SIMPREC_OK;
#elif defined(OVERRUN_BYTES)
  const SimprecStatus status = unfused_gemm(args);
  const DLTensor* d = find_tensor(args, "D")->tensor;
  unsigned char* end = (unsigned char*)d->data + d->shape[0] * d->shape[1] * sizeof(float);
  for (int i = 0; i < OVERRUN_BYTES; ++i) ((volatile unsigned char*)end)[i] = (unsigned char)i;
  return status;
#else
  return unfused_gemm(args);
#endif
}

static const SimprecOperandSpec operand_a = {
    SIMPREC_OPERAND_SPEC_STRUCT_SIZE, "A", SIMPREC_OPERAND_INPUT, 0, "fp32", "M,K"};
static const SimprecOperandSpec operand_b = {
    SIMPREC_OPERAND_SPEC_STRUCT_SIZE, "B", SIMPREC_OPERAND_INPUT, 0, "fp32", "K,N"};
static const SimprecOperandSpec operand_c = {
    SIMPREC_OPERAND_SPEC_STRUCT_SIZE, "C",    SIMPREC_OPERAND_INPUT,
    SIMPREC_OPERAND_FLAG_OPTIONAL,    "fp32", "M,N"};
static const SimprecOperandSpec operand_d = {
    SIMPREC_OPERAND_SPEC_STRUCT_SIZE, "D", SIMPREC_OPERAND_OUTPUT, 0, "fp32", "M,N"};
static const SimprecOperandSpec* const operands[] = {&operand_a, &operand_b, &operand_c,
                                                     &operand_d};
#if defined(BROKEN_TYPO_ATTRIBUTE)
#define ACCUMULATOR_ATTRIBUTE "acumulator_format"
#else
#define ACCUMULATOR_ATTRIBUTE "accumulator_format"
#endif
static const SimprecNamedValue accumulator = {SIMPREC_NAMED_VALUE_STRUCT_SIZE,
                                              ACCUMULATOR_ATTRIBUTE,
                                              SIMPREC_VALUE_STRING,
                                              0,
                                              {.string_value = "fp32"}};
static const SimprecNamedValue* const attributes[] = {&accumulator};

#if defined(BROKEN_UNKNOWN_KIND)
#define KERNEL_KIND 99
#else
#define KERNEL_KIND SIMPREC_KERNEL_MATMUL
#endif
#if defined(BROKEN_NULL_NAME)
#define KERNEL_NAME NULL
#else
#define KERNEL_NAME "gemm"
#endif
#if defined(BROKEN_SMALL_STRUCT)
#define KERNEL_STRUCT_SIZE 16
#else
#define KERNEL_STRUCT_SIZE SIMPREC_KERNEL_STRUCT_SIZE
#endif

static const SimprecKernel kernel = {
    .struct_size = KERNEL_STRUCT_SIZE,
    .name = KERNEL_NAME,
    .kind = KERNEL_KIND,
    .flags = SIMPREC_KERNEL_FLAG_BIT_EXACT, /* false for the unfused GEMM: BROKEN_WRONG_CLAIM */
    .description = "a deliberately broken kernel",
    .emulation_model = "sequential",
    .operand_count = 4,
    .operands = operands,
    .attribute_count = 1,
    .attributes = attributes,
    .run = broken_run,
};
static const SimprecKernel* const kernels[] = {&kernel};

static const SimprecPlugin plugin = {
    .struct_size = SIMPREC_PLUGIN_STRUCT_SIZE,
#if defined(BROKEN_WRONG_MAJOR)
    .abi_major = SIMPREC_PLUGIN_ABI_MAJOR + 1,
#else
    .abi_major = SIMPREC_PLUGIN_ABI_MAJOR,
#endif
    .abi_minor = 0,
    .name = "broken",
    .version = "0.0.1",
    .description = "a plugin that goes wrong on purpose",
    .kernel_count = 1,
    .kernels = kernels,
    .shutdown = NULL,
};

#if defined(BROKEN_NO_ENTRY)
SIMPREC_PLUGIN_EXPORT int not_the_entry_function(void) {
  return plugin.kernel_count == 1;
}
#else
SIMPREC_PLUGIN_EXPORT SimprecStatus simprec_plugin_entry(SimprecEntryArgs* args) {
#if defined(BROKEN_HANGING_ENTRY)
  (void)args;
  for (;;) sleep(1);
#endif
#if defined(BROKEN_ENTRY_FAILS)
  (void)plugin;
  if (args->error && args->error_size > 0)
    snprintf(args->error, args->error_size, "no device found");
  return SIMPREC_ERROR_DEVICE;
#else
  args->plugin = &plugin;
  return SIMPREC_OK;
#endif
}
#endif
