"""The held-out recording of FlexAttention (torch.compile) and PyTorch's SDPA flash backend
(tests/data/torch_held_out; docs/torch_kernels.md, "Held out"): the inputs of
examples/python/validate_on_gpu.py, simprec's own generator (normal and repeated-max,
B = 2, H = 4, N = 512, d = 64, seed 1, rounded to bf16), scale 1/8, plain and causal, each run
twice (the second run gives the run-to-run agreement). record_held_out records every output on
the GPU; extract_held_out keeps one head of them for the tests. A capture's keys are
KERNEL.KIND.causalC.runR.OUTPUT."""

SHAPE = [2, 4, 512, 64]
SEED = 1
SCALE = 0.125
HEAD = (1, 3)  # the head extract_held_out keeps
KERNELS = ("flex", "sdpa")


def capture_file(kernel):
    """The name of a kernel's capture in the recording folder."""
    return f"capture_{kernel}.npz"
