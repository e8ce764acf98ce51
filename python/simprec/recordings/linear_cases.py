"""The linear layers recorded on the GPU (tests/data/linear): torch.nn.functional.linear in bf16
and fp16, with and without a bias, forward and backward (the output, dX, dW and the bias's
gradient), on shapes where cuBLAS's kernels and their split of K differ between the three GEMMs.

The operands are drawn on the CPU from the seed and the shape (numpy only), as the GEMM
recordings' are (gemm_cases.operand_bits): x (M x K), W (N x K), the bias (N) and the output's
gradient dY (M x N). Which shapes are held out is fixed here, before any recording.
"""
from simprec.recordings import gemm_cases

SEED = 20261130

# (M tokens, K in_features, N out_features).
FIT = ((256, 256, 256), (512, 1024, 256), (128, 4096, 512), (2048, 256, 1024))
HELD_OUT = ((64, 768, 3072), (4096, 512, 128), (96, 2048, 160))
DTYPES = ("bf16", "fp16")

# Rows kept of each output (whole rows, gemm_cases.kept_rows' spread); digests cover all.
OUTPUTS_KEPT = 2048


def case_name(case):
    m, k, n = case["shape"]
    return f"linear.{case['dtype']}.{'bias' if case['bias'] else 'nobias'}.{m}x{k}x{n}"


def cases():
    out = []
    for shapes, held_out in ((FIT, False), (HELD_OUT, True)):
        for shape in shapes:
            for dtype in DTYPES:
                for bias in (True, False):
                    case = {"shape": shape, "dtype": dtype, "bias": bias, "held_out": held_out}
                    case["name"] = case_name(case)
                    out.append(case)
    return out


def operands(seed, case):
    """(x, W, bias, dY) encodings (uint16) of a case; bias None without one."""
    m, k, n = case["shape"]
    fmt = case["dtype"]
    # gemm_cases draws (rows, K) per operand from a stream named by (M, N, K, operand): reuse it
    # with shapes that name each tensor.
    x = gemm_cases.operand_bits(seed, (m, n, k), "a", fmt)
    w = gemm_cases.operand_bits(seed, (m, n, k), "w", fmt)
    dy = gemm_cases.operand_bits(seed, (m, k, n), "a", fmt)
    bias = gemm_cases.operand_bits(seed, (1, n, 1), "w", fmt).reshape(n) if case["bias"] else None
    return x, w, bias, dy


def kept_rows(rows, cols):
    return gemm_cases.kept_rows(rows, cols, OUTPUTS_KEPT)
