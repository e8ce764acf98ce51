/* simprec plugin ABI: the whole contract between simprec and a kernel plugin.
 *
 * A plugin is a shared library that exports one C function, simprec_plugin_entry(). The host
 * calls it first (and only it) with the ABI version the host speaks; the plugin answers with a
 * description of itself: its ABI version, name, version and the kernels it offers. The host
 * refuses the plugin unless the major versions agree, and only then reads the rest of the
 * description or calls a kernel (version negotiation first, as in the Vulkan loader).
 *
 * Rules that keep the boundary stable (the pattern of OpenXLA's PJRT C API):
 *   - every struct begins with `struct_size`, which the writer of the struct sets to the
 *     SIMPREC_*_STRUCT_SIZE macro of the header it was compiled against;
 *   - fields are only ever appended; each addition bumps SIMPREC_PLUGIN_ABI_MINOR and is
 *     recorded in the changelog below; a reader uses a field only if struct_size covers it
 *     (SIMPREC_HAS_FIELD);
 *   - arrays hold pointers to structs, never structs, so a grown struct does not change the
 *     stride of an array compiled against an older header;
 *   - nothing C++ crosses the boundary: no exceptions (a plugin written in C++ catches
 *     everything in each exported function), no STL types, no ownership by destructor. Every
 *     pointer in a description stays valid until the library is unloaded; every pointer in
 *     call arguments is valid only during the call.
 *
 * Tensors cross as DLPack DLTensors in host memory (device.device_type == kDLCPU), C-contiguous
 * (strides NULL), byte_offset 0. The plugin owns whatever device memory it uses. The host
 * allocates outputs with the shapes the kernel kind implies (below) and the plugin fills them.
 * Values travel in a fixed storage type per simprec format, named separately by the format
 * string of each tensor (DLPack cannot name bf16-vs-fp16 bit patterns or the fp8 variants):
 *     fp64                      -> kDLFloat 64
 *     fp32, tf32                -> kDLFloat 32 (tf32 values have the low 13 bits clear)
 *     bf16, fp16                -> kDLUInt 16, the format's bit patterns
 *     e4m3fn e5m2 e4m3fnuz e5m2fnuz -> kDLUInt 8, the format's bit patterns
 *
 * Kernel kinds and their operands (names are part of the contract; shapes row-major):
 *   SIMPREC_KERNEL_MATMUL              D = A*B + C. Inputs A [M,K], B [K,N], C [M,N]
 *                                      (optional: absent means zero). Output D [M,N].
 *   SIMPREC_KERNEL_ATTENTION_FORWARD   O = softmax(scale * Q K^T [+ mask]) V. Inputs Q [B,H,Sq,D],
 *                                      K [B,Hk,Sk,D], V [B,Hk,Sk,Dv]. Outputs O [B,H,Sq,Dv],
 *                                      LSE [B,H,Sq] (fp32, optional).
 *   SIMPREC_KERNEL_ATTENTION_BACKWARD  Inputs Q, K, V, O, dO [B,H,Sq,Dv], LSE. Outputs dQ, dK, dV
 *                                      with the shapes of Q, K, V.
 *   SIMPREC_KERNEL_FUNCTION            y = f(x) elementwise on the device. Input x [N], output
 *                                      y [N]; f is named by the kernel attribute "function"
 *                                      (e.g. "exp2"). The function "div" takes the divisor in
 *                                      a second input d [N]: y = x / d.
 * Parameters of a call (tile sizes, causal flag, scale, mitigation name, beta, seed, ...) are a
 * generic list of named values; the kernel declares which it understands. The attention
 * parameters `simprec validate` passes and emulates:
 *   causal (bool)      key j is masked for query i when j > i: top-left alignment, as PyTorch's
 *                      is_causal. When Sq != Sk this differs from FlashAttention >= 2.1's
 *                      bottom-right alignment (j > i + Sk - Sq); such a kernel validates only
 *                      with Sq = Sk.
 *   scale (float64)    the softmax scale, used by the emulation exactly as passed (a double);
 *                      absent: 1.0 / sqrt((double)D), two correctly rounded double operations.
 *                      A kernel that rounds it (to fp32, say) computes with another scale.
 *   beta_rowmax (bool), beta, eps (float64)  the mitigation beta-rowmax:BETA:EPS
 *                      (beta finite and > 1, default 2; eps finite and >= 0, default 0.001)
 *   sr_p_bits (int64)  0: off; else the mitigation sr-p-tiled:BITS (BITS divides 32)
 *   seed (int64)       the random stream of stochastic rounding
 *
 * Attributes are fixed facts of a kernel that the emulation reads; the host refuses a kernel
 * naming any other (a typo would otherwise leave a fact out silently):
 *   matmul:            accumulator_format (the format D accumulates in; default D's)
 *   attention forward and backward:
 *                      format (the numerics' low-precision format; default Q's, must match it),
 *                      output_format (O's, or dQ/dK/dV's; must match the tensors),
 *                      block_rows, block_cols (the tile; default the numerics spec's),
 *                      exp2_function, exp_function, log_function, log2_function,
 *                      rcp_function, div_function (a function kernel of the same plugin whose
 *                      fp32 values the emulation uses for that function: exp2f, expf, logf,
 *                      log2f, 1.0f / x, x / d)
 *   function:          function (the function computed: exp2, exp, log, log2, rcp or div)
 * and any number of notes for people reading `simprec plugins list`, named "info.NAME" (the
 * host reads none of them), e.g. "info.instruction" = "ex2.approx.ftz.f32".
 * The emulation model a kernel declares is a numerics spec for attention kernels
 * ("torch-math,p_cast=bf16:rne"; `simprec numerics --list` shows what it can say), an
 * accumulation or tensor-core model name for matmul kernels ("sequential", "tc:sm90-mma-bf16"),
 * and "correctly-rounded" or a device_math strategy ("glibc", "sm90-fast-math", ...) for
 * function kernels.
 *
 * Changelog (SIMPREC_PLUGIN_ABI_MAJOR.MINOR):
 *   1.0  First version: entry function, plugin/kernel/operand/dimension/parameter descriptors,
 *        named values, run arguments.
 */
#ifndef SIMPREC_PLUGIN_H_
#define SIMPREC_PLUGIN_H_

#include <stddef.h>
#include <stdint.h>

#include <dlpack/dlpack.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SIMPREC_PLUGIN_ABI_MAJOR 1
#define SIMPREC_PLUGIN_ABI_MINOR 0

/* The one symbol a plugin exports. */
#define SIMPREC_PLUGIN_ENTRY_SYMBOL "simprec_plugin_entry"

#ifdef __cplusplus
#define SIMPREC_PLUGIN_EXPORT extern "C" __attribute__((visibility("default")))
#else
#define SIMPREC_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* Size of a struct up to and including `last_field`: what struct_size is set to. */
#define SIMPREC_STRUCT_SIZE(type, last_field) \
  (offsetof(type, last_field) + sizeof(((type*)0)->last_field))
/* Whether a struct received across the boundary contains `field`. */
#define SIMPREC_HAS_FIELD(pointer, type, field) \
  ((pointer)->struct_size >= SIMPREC_STRUCT_SIZE(type, field))

/* ---- status codes: every call returns one; anything but SIMPREC_OK comes with a message ---- */
typedef int32_t SimprecStatus;
#define SIMPREC_OK 0
#define SIMPREC_ERROR_INVALID_ARGUMENT 1 /* bad shape, format, parameter or operand */
#define SIMPREC_ERROR_UNSUPPORTED 2      /* valid request the plugin does not implement */
#define SIMPREC_ERROR_DEVICE 3           /* no device, out of device memory, launch failure */
#define SIMPREC_ERROR_INTERNAL 4         /* a bug in the plugin */

/* ---- what a kernel computes ---- */
#define SIMPREC_KERNEL_MATMUL 1
#define SIMPREC_KERNEL_ATTENTION_FORWARD 2
#define SIMPREC_KERNEL_ATTENTION_BACKWARD 3
#define SIMPREC_KERNEL_FUNCTION 4

/* Kernel flags. */
#define SIMPREC_KERNEL_FLAG_BIT_EXACT 1u /* the emulation model reproduces every output bit */

/* Operand directions and flags. */
#define SIMPREC_OPERAND_INPUT 1
#define SIMPREC_OPERAND_OUTPUT 2
#define SIMPREC_OPERAND_FLAG_OPTIONAL 1u

/* Types of named values. */
#define SIMPREC_VALUE_INT64 1
#define SIMPREC_VALUE_FLOAT64 2
#define SIMPREC_VALUE_STRING 3
#define SIMPREC_VALUE_BOOL 4 /* stored in int64_value, 0 or 1 */

/* A named value: a call parameter or a fixed kernel attribute. */
typedef struct SimprecNamedValue {
  size_t struct_size;
  const char* name;
  uint32_t type; /* SIMPREC_VALUE_* */
  uint32_t reserved;
  union {
    int64_t int64_value;
    double float64_value;
    const char* string_value;
  };
} SimprecNamedValue;
#define SIMPREC_NAMED_VALUE_STRUCT_SIZE SIMPREC_STRUCT_SIZE(SimprecNamedValue, int64_value)

/* One operand of a kernel, as the kernel accepts it. */
typedef struct SimprecOperandSpec {
  size_t struct_size;
  const char* name;    /* the kind's operand name: "A", "D", "Q", "LSE", "x", ... */
  uint32_t direction;  /* SIMPREC_OPERAND_INPUT or SIMPREC_OPERAND_OUTPUT */
  uint32_t flags;      /* SIMPREC_OPERAND_FLAG_* */
  const char* formats; /* comma-separated simprec format names accepted: "bf16,fp16" */
  const char* shape;   /* comma-separated dimensions, each a symbol or an integer: "M,K" */
} SimprecOperandSpec;
#define SIMPREC_OPERAND_SPEC_STRUCT_SIZE SIMPREC_STRUCT_SIZE(SimprecOperandSpec, shape)

/* Constraints on one shape symbol; a symbol shared by operands must have one value. */
typedef struct SimprecDimensionSpec {
  size_t struct_size;
  const char* symbol;  /* "M" */
  int64_t min;         /* smallest accepted value (>= 1) */
  int64_t max;         /* largest accepted value; 0: no limit */
  int64_t multiple_of; /* accepted values are multiples of this (1: any) */
} SimprecDimensionSpec;
#define SIMPREC_DIMENSION_SPEC_STRUCT_SIZE SIMPREC_STRUCT_SIZE(SimprecDimensionSpec, multiple_of)

/* A parameter the kernel understands in SimprecRunArgs.parameters. */
typedef struct SimprecParameterSpec {
  size_t struct_size;
  const char* name;
  uint32_t type;             /* SIMPREC_VALUE_* */
  uint32_t required;         /* 1: the call fails without it */
  const char* default_value; /* as text, for display; NULL: none */
  const char* description;   /* NULL allowed */
} SimprecParameterSpec;
#define SIMPREC_PARAMETER_SPEC_STRUCT_SIZE SIMPREC_STRUCT_SIZE(SimprecParameterSpec, description)

/* One tensor of a call. */
typedef struct SimprecTensor {
  size_t struct_size;
  const char* name;   /* operand name from the kernel's SimprecOperandSpec */
  const char* format; /* simprec format name of the values: "bf16", "fp32", "e4m3fn" */
  DLTensor* tensor;   /* host memory; outputs are allocated by the host */
} SimprecTensor;
#define SIMPREC_TENSOR_STRUCT_SIZE SIMPREC_STRUCT_SIZE(SimprecTensor, tensor)

struct SimprecKernel;

/* Arguments of one kernel call. */
typedef struct SimprecRunArgs {
  size_t struct_size;
  const struct SimprecKernel* kernel; /* the descriptor being run */
  size_t tensor_count;
  const SimprecTensor* const* tensors; /* inputs present and all outputs, any order */
  size_t parameter_count;
  const SimprecNamedValue* const* parameters;
  char* error;       /* on failure the plugin writes a NUL-terminated message here ... */
  size_t error_size; /* ... of at most this many bytes including the NUL */
} SimprecRunArgs;
#define SIMPREC_RUN_ARGS_STRUCT_SIZE SIMPREC_STRUCT_SIZE(SimprecRunArgs, error_size)

typedef SimprecStatus (*SimprecRunFunction)(const SimprecRunArgs* args);

/* One kernel the plugin offers. */
typedef struct SimprecKernel {
  size_t struct_size;
  const char* name;        /* unique within the plugin: "gemm_f32" */
  uint32_t kind;           /* SIMPREC_KERNEL_* */
  uint32_t flags;          /* SIMPREC_KERNEL_FLAG_* */
  const char* description; /* NULL allowed */
  /* The simprec emulation that claims to reproduce this kernel, e.g. "sequential",
   * "tc:sm90-mma-bf16", "fa2", "torch-math,p_cast=bf16:rne" (see above); NULL: none.
   * Bit-exactness is claimed by the flag. */
  const char* emulation_model;
  size_t operand_count;
  const SimprecOperandSpec* const* operands;
  size_t dimension_count;
  const SimprecDimensionSpec* const* dimensions; /* symbols without an entry: any size >= 1 */
  size_t parameter_count;
  const SimprecParameterSpec* const* parameters;
  /* Fixed facts the emulation needs (the names listed above, no others), e.g. matmul
   * "accumulator_format" = "fp32", function "function" = "exp2". */
  size_t attribute_count;
  const SimprecNamedValue* const* attributes;
  SimprecRunFunction run;
} SimprecKernel;
#define SIMPREC_KERNEL_STRUCT_SIZE SIMPREC_STRUCT_SIZE(SimprecKernel, run)

/* The plugin's description of itself. */
typedef struct SimprecPlugin {
  size_t struct_size;
  uint32_t abi_major; /* SIMPREC_PLUGIN_ABI_MAJOR the plugin was built with */
  uint32_t abi_minor;
  const char* name;        /* "cpu_reference" */
  const char* version;     /* the plugin's own version: "1.2.0" */
  const char* description; /* NULL allowed */
  size_t kernel_count;
  const SimprecKernel* const* kernels;
  /* Called once before the library is unloaded (release device memory...). NULL allowed. */
  void (*shutdown)(void);
} SimprecPlugin;
#define SIMPREC_PLUGIN_STRUCT_SIZE SIMPREC_STRUCT_SIZE(SimprecPlugin, shutdown)

/* Arguments of the entry function. The host fills the first part; the plugin sets `plugin`
 * to its description (built for the newest version it supports that has the host's major), or
 * fails with a message (e.g. it supports only other major versions). Describing must not
 * need a device: a plugin whose device is missing describes itself and fails its runs. */
typedef struct SimprecEntryArgs {
  size_t struct_size;
  uint32_t host_abi_major;
  uint32_t host_abi_minor;
  const SimprecPlugin* plugin; /* out */
  char* error;
  size_t error_size;
} SimprecEntryArgs;
#define SIMPREC_ENTRY_ARGS_STRUCT_SIZE SIMPREC_STRUCT_SIZE(SimprecEntryArgs, error_size)

typedef SimprecStatus (*SimprecEntryFunction)(SimprecEntryArgs* args);

/* What every plugin defines:
 *   SIMPREC_PLUGIN_EXPORT SimprecStatus simprec_plugin_entry(SimprecEntryArgs* args);
 */

/* ---- sizes and offsets of the ABI on x86-64, asserted so that they cannot drift ---- */
#if defined(__cplusplus)
#define SIMPREC_PLUGIN_STATIC_ASSERT(condition, message) static_assert(condition, message)
#else
#define SIMPREC_PLUGIN_STATIC_ASSERT(condition, message) _Static_assert(condition, message)
#endif

#if defined(__x86_64__)
SIMPREC_PLUGIN_STATIC_ASSERT(sizeof(SimprecNamedValue) == 32, "SimprecNamedValue size");
SIMPREC_PLUGIN_STATIC_ASSERT(SIMPREC_NAMED_VALUE_STRUCT_SIZE == 32, "SimprecNamedValue");
SIMPREC_PLUGIN_STATIC_ASSERT(sizeof(SimprecOperandSpec) == 40, "SimprecOperandSpec size");
SIMPREC_PLUGIN_STATIC_ASSERT(SIMPREC_OPERAND_SPEC_STRUCT_SIZE == 40, "SimprecOperandSpec");
SIMPREC_PLUGIN_STATIC_ASSERT(sizeof(SimprecDimensionSpec) == 40, "SimprecDimensionSpec size");
SIMPREC_PLUGIN_STATIC_ASSERT(SIMPREC_DIMENSION_SPEC_STRUCT_SIZE == 40, "SimprecDimensionSpec");
SIMPREC_PLUGIN_STATIC_ASSERT(sizeof(SimprecParameterSpec) == 40, "SimprecParameterSpec size");
SIMPREC_PLUGIN_STATIC_ASSERT(SIMPREC_PARAMETER_SPEC_STRUCT_SIZE == 40, "SimprecParameterSpec");
SIMPREC_PLUGIN_STATIC_ASSERT(sizeof(SimprecTensor) == 32, "SimprecTensor size");
SIMPREC_PLUGIN_STATIC_ASSERT(SIMPREC_TENSOR_STRUCT_SIZE == 32, "SimprecTensor");
SIMPREC_PLUGIN_STATIC_ASSERT(sizeof(SimprecRunArgs) == 64, "SimprecRunArgs size");
SIMPREC_PLUGIN_STATIC_ASSERT(SIMPREC_RUN_ARGS_STRUCT_SIZE == 64, "SimprecRunArgs");
SIMPREC_PLUGIN_STATIC_ASSERT(sizeof(SimprecKernel) == 112, "SimprecKernel size");
SIMPREC_PLUGIN_STATIC_ASSERT(SIMPREC_KERNEL_STRUCT_SIZE == 112, "SimprecKernel");
SIMPREC_PLUGIN_STATIC_ASSERT(sizeof(SimprecPlugin) == 64, "SimprecPlugin size");
SIMPREC_PLUGIN_STATIC_ASSERT(SIMPREC_PLUGIN_STRUCT_SIZE == 64, "SimprecPlugin");
SIMPREC_PLUGIN_STATIC_ASSERT(sizeof(SimprecEntryArgs) == 40, "SimprecEntryArgs size");
SIMPREC_PLUGIN_STATIC_ASSERT(SIMPREC_ENTRY_ARGS_STRUCT_SIZE == 40, "SimprecEntryArgs");
SIMPREC_PLUGIN_STATIC_ASSERT(offsetof(SimprecKernel, run) == 104, "SimprecKernel.run offset");
SIMPREC_PLUGIN_STATIC_ASSERT(offsetof(SimprecPlugin, kernels) == 48, "SimprecPlugin.kernels");
#endif

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SIMPREC_PLUGIN_H_ */
