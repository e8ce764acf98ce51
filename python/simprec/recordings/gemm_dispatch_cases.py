"""The GEMMs of the dispatch sweep (tests/data/gemm/dispatch): many shapes, one setting each of
the families cuBLAS splits K for, recorded to learn how the library cuts K and to check that rule
on shapes it was not fitted on.

Per case the recording keeps the kernels launched with their grid (a split-K kernel's grid
counts the pieces), a digest of the whole output and the bits of a few output rows. The operands
are gemm_cases' (gemm_cases.operand_bits, same seed), so the comparison draws them again.

Which shapes are held out is fixed here, before any recording: the pair of (M, N) index i and K
index j is held out when (i + j) % 3 == 0.
"""

from simprec.recordings import gemm_cases

MN = ((16, 16), (32, 64), (64, 64), (64, 128), (96, 96), (128, 128), (128, 256), (192, 192),
      (256, 256), (48, 80), (384, 128), (512, 512))
K = (2048, 4096, 6144, 8192, 10000, 12288, 16384, 20480, 24576, 32768, 49152, 65536)

# (family, settings): the default reduction flag ("on") for torch.matmul; e4m3 tensor-wise
# _scaled_mm with a bf16 output, fast accumulation on and off.
SETTINGS = (
    {"family": "matmul", "dtype": "bf16", "reduction": "on"},
    {"family": "matmul", "dtype": "fp16", "reduction": "on"},
    {"family": "scaled_mm", "a_format": "e4m3", "b_format": "e4m3", "scaling": "tensor",
     "out_dtype": "bf16", "fast_accum": True},
    {"family": "scaled_mm", "a_format": "e4m3", "b_format": "e4m3", "scaling": "tensor",
     "out_dtype": "bf16", "fast_accum": False},
)

# Outputs kept per case (whole rows, gemm_cases.kept_rows' spread); the digest covers all.
OUTPUTS_KEPT = 512


def held_out(i, j):
    return (i + j) % 3 == 0


def cases():
    """Every case of the sweep as gemm_cases' dicts (family, shape, held_out, settings, name)."""
    out = []
    for i, (m, n) in enumerate(MN):
        for j, k in enumerate(K):
            for setting in SETTINGS:
                case = dict(setting, shape=(m, n, k), held_out=held_out(i, j))
                case["name"] = gemm_cases.case_name(case)
                out.append(case)
    return out


def kept_rows(m, n):
    return gemm_cases.kept_rows(m, n, OUTPUTS_KEPT)
