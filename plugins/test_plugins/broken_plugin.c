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
 * and those that attack the host rather than merely fail:
 *   BROKEN_SQUARE_OUTPUT   D declared [M,M] instead of the matmul kind's [M,N]: with N > M the
 *                          host's emulation would write past D, with N < M the padding would
 *                          compare as equal
 *   BROKEN_SHORT_OUTPUT    a device function whose output y is declared [1] instead of [N]
 *   BROKEN_NEWLINE_NAME    a kernel name holding a newline and a forged `plugins list` record
 *   BROKEN_EXIT            the kernel calls exit(0) (quick_exit(0) with BROKEN_QUICK_EXIT)
 *   BROKEN_FORK            the kernel forks a child that sleeps for five minutes, writes its pid
 *                          to $SIMPREC_TEST_CHILD_PID_FILE, then runs the unfused GEMM, claiming
 *                          nothing
 *   BROKEN_BAD_UTF8        the kernel fails with a message holding bytes that are not UTF-8
 * Written in C to show that the header is plain C11. */
#include <stdio.h>
#include <stdlib.h>
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
#elif defined(BROKEN_EXIT) && defined(BROKEN_QUICK_EXIT)
  (void)args;
  quick_exit(0);
#elif defined(BROKEN_EXIT)
  (void)args;
  exit(0);
#elif defined(BROKEN_FORK)
  const pid_t child = fork();
  if (child == 0) {
    sleep(300);
    _exit(0);
  }
  /* The parent names the child, so that the test knows it whether or not it ever ran. */
  const char* file = getenv("SIMPREC_TEST_CHILD_PID_FILE");
  FILE* f = file ? fopen(file, "w") : NULL;
  if (f) {
    fprintf(f, "%d\n", (int)child);
    fclose(f);
  }
  return unfused_gemm(args);
#elif defined(BROKEN_BAD_UTF8)
  write_error(args, "device said \xff\xfe\x80 then stopped");
  return SIMPREC_ERROR_DEVICE;
#elif defined(BROKEN_SHORT_OUTPUT)
  const DLTensor* x = find_tensor(args, "x")->tensor;
  ((float*)find_tensor(args, "y")->tensor->data)[0] = ((const float*)x->data)[0];
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
#if defined(BROKEN_SQUARE_OUTPUT)
#define D_SHAPE "M,M"
#else
#define D_SHAPE "M,N"
#endif
static const SimprecOperandSpec operand_d = {
    SIMPREC_OPERAND_SPEC_STRUCT_SIZE, "D", SIMPREC_OPERAND_OUTPUT, 0, "fp32", D_SHAPE};
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

static const SimprecOperandSpec operand_x = {
    SIMPREC_OPERAND_SPEC_STRUCT_SIZE, "x", SIMPREC_OPERAND_INPUT, 0, "fp32", "N"};
static const SimprecOperandSpec operand_y = {
    SIMPREC_OPERAND_SPEC_STRUCT_SIZE, "y", SIMPREC_OPERAND_OUTPUT, 0, "fp32", "1"};
static const SimprecOperandSpec* const function_operands[] = {&operand_x, &operand_y};
static const SimprecNamedValue function = {
    SIMPREC_NAMED_VALUE_STRUCT_SIZE, "function", SIMPREC_VALUE_STRING, 0, {.string_value = "exp2"}};
static const SimprecNamedValue* const function_attributes[] = {&function};

#if defined(BROKEN_UNKNOWN_KIND)
#define KERNEL_KIND 99
#elif defined(BROKEN_SHORT_OUTPUT)
#define KERNEL_KIND SIMPREC_KERNEL_FUNCTION
#else
#define KERNEL_KIND SIMPREC_KERNEL_MATMUL
#endif
#if defined(BROKEN_NULL_NAME)
#define KERNEL_NAME NULL
#elif defined(BROKEN_NEWLINE_NAME)
#define KERNEL_NAME "gemm\nplugin forged version=6.6.6 abi=1.0 path=/forged.so"
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
#if defined(BROKEN_FORK)
    .flags = 0,
#else
    .flags = SIMPREC_KERNEL_FLAG_BIT_EXACT, /* false for the unfused GEMM: BROKEN_WRONG_CLAIM */
#endif
    .description = "a deliberately broken kernel",
#if defined(BROKEN_SHORT_OUTPUT)
    .emulation_model = "correctly-rounded",
    .operand_count = 2,
    .operands = function_operands,
    .attributes = function_attributes,
#else
    .emulation_model = "sequential",
    .operand_count = 4,
    .operands = operands,
    .attributes = attributes,
#endif
    .attribute_count = 1,
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
