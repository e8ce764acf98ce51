"""Record how cuBLAS dispatches GEMMs over many shapes on a GPU: the kernels each call launches,
with their grids (a split-K kernel's grid counts the pieces of K), and a few output rows.

    PYTHONPATH=python python3 scripts/record_gemm_dispatch.py OUT_DIR [--only SUBSTRING]

The cases are simprec.recordings.gemm_dispatch_cases' (shapes, settings, the held-out shapes);
the operands gemm_cases' (drawn from the seed and the shape on the CPU, so the comparison draws
them again). Writes

    OUT_DIR/gemm.npz       per case, NAME: the bits of gemm_dispatch_cases.kept_rows' rows
    OUT_DIR/summary.json   versions, the device and per case its settings, the launches
                           (kernel name, grid, block), the run-to-run agreement, SHA-256 digests
                           of the whole output and of the inputs, or the error
"""

from simprec.recordings import gemm_dispatch_cases
from simprec.recordings.record_gemm import arguments, record


def main(argv=None):
    from simprec.recordings import gemm_cases
    args = arguments(argv, __doc__, "record_gemm_dispatch")
    return record(args.out, gemm_cases.SEED, gemm_dispatch_cases.cases(), args.only,
                  gemm_dispatch_cases.OUTPUTS_KEPT)
