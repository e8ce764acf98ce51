"""Real attention kernels recorded on a GPU and compared with the emulation, bit by bit.

The recorders run next to PyTorch on a GPU machine and need nothing of simprec's C++ extension
(the package's source on PYTHONPATH is enough); the comparisons run the emulation on the CPU.
Each module has one concern; the scripts in scripts/ are their command lines.

    bits              bit patterns, digests, the share of bit-identical elements, ulp distances
    inputs            the recorded heads' inputs (PCG64 draws, rounded to bf16)
    shapes            the shapes PyTorch's kernels were recorded on
    layout            a recording folder: summary.json and one .npz per kernel and shape
    flex_compile      what torch.compile had compiled FlexAttention for at each recorded shape
    table             the comparison's table (plain text or markdown)
    compare_torch     PyTorch's recorded kernels against a numerics spec (compare_torch_recordings)
    record_torch      the recorder of PyTorch's flash, efficient and FlexAttention kernels
    dump_flex         the Triton code inductor generates for FlexAttention on a recorded shape
    triton_example    the Triton example kernel's recorded cases and its numerics spec
    compare_triton    the Triton example's recording against a numerics spec
    record_triton     the Triton example's recorder
    held_out          the held-out recording (validate_on_gpu's inputs)
    record_held_out   its recorder; extract_held_out keeps one head of it for the tests
    sdpa              PyTorch's SDPA backends by name
    sdpa_dump         inputs and outputs of every SDPA backend as .npy (tests/data/torch_sdpa)
    sdpa_bench        SDPA's timings in flash_bench's JSON lines; bench_table, their table
    npy_bits          two .npy files of bf16/fp16 bit patterns compared
    examples          the repository's example kernels the recorders import
    gemm_cases        the recorded GEMMs (cuBLAS matmul, _scaled_mm), their inputs and sets
    record_gemm       their recorder (record_gemm.py); compare_gemm, the comparison
"""
