"""tanh on the GPU at every fp32 argument, as measure.py measures the other functions (its
digests, README.md): `cu_tanh` (CUDA's tanhf, libdevice, nvcc -arch=sm_90), `fm_tanh` (the same
with --use_fast_math) and `tr_tanh` (Triton's libdevice.tanh, what Inductor emits for torch.tanh
in a compiled score_mod). Writes OUT/tanh_digests.npz (digests and Triton's PTX) and the PTX of
the CUDA versions, OUT/tanh_cu.ptx and OUT/tanh_fm.ptx, from which the model was read.

    python3 scripts/device_functions/measure_tanh.py OUT
"""
import os
import sys

import cupy as cp
import numpy as np
import torch
import triton
import triton.language as tl
from triton.language.extra.cuda import libdevice

C = 1 << 28
DIGEST = r"""__device__ void add(unsigned long long* s, unsigned i, float f) {
 unsigned v = __float_as_uint(f); if ((v & 0x7fffffffu) > 0x7f800000u) v = 0x7fc00000u;
 unsigned long long z = ((unsigned long long)i << 32) | v;
 z ^= z >> 30; z *= 0xbf58476d1ce4e5b9ULL; z ^= z >> 27; z *= 0x94d049bb133111ebULL; z ^= z >> 31;
 for (int o = 16; o; o >>= 1) z += __shfl_xor_sync(~0u, z, o);
 if (threadIdx.x % 32 == 0) atomicAdd(s + (i >> 16), z); }
extern "C" __global__ void f_tanh(unsigned i, float* a, unsigned long long* s)
 { unsigned j = blockIdx.x * 256 + threadIdx.x; i += j; add(s, i, tanhf(__uint_as_float(i))); }
extern "C" __global__ void f_y(unsigned i, float* a, unsigned long long* s)
 { unsigned j = blockIdx.x * 256 + threadIdx.x; i += j; add(s, i, a[j]); }
"""


@triton.jit
def _tanh(Y, x0):
    i = tl.program_id(0) * 1024 + tl.arange(0, 1024)
    x = (x0 + i).to(tl.uint32).to(tl.float32, bitcast=True)
    tl.store(Y + i, libdevice.tanh(x))


def main(out):
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "tanh.cu"), "w") as f:
        f.write(DIGEST)
    modules = {}
    for m, flag in ("cu", ""), ("fm", "--use_fast_math"):
        ptx = os.path.join(out, f"tanh_{m}.ptx")
        if os.system(f"nvcc -arch=sm_90 -ptx {flag} {out}/tanh.cu -o {ptx}") != 0:
            raise SystemExit("nvcc failed")
        modules[m] = cp.RawModule(path=ptx)
    sums = {n: cp.zeros(1 << 16, cp.uint64) for n in ("cu_tanh", "fm_tanh", "tr_tanh")}
    y = cp.zeros(C, cp.float32)
    kernel = None
    for x0 in range(0, 1 << 32, C):
        for m in "cu", "fm":
            modules[m].get_function("f_tanh")((C // 256,), (256,), (np.uint32(x0), y, sums[m + "_tanh"]))
        kernel = _tanh[(C // 1024,)](torch.as_tensor(y, device="cuda"), x0)
        torch.cuda.synchronize()
        modules["cu"].get_function("f_y")((C // 256,), (256,), (np.uint32(x0), y, sums["tr_tanh"]))
    cp.cuda.Device().synchronize()
    np.savez(os.path.join(out, "tanh_digests"), **{k: v.get() for k, v in sums.items()},
             v=[triton.__version__, kernel.asm["ptx"]])


if __name__ == "__main__":
    main(sys.argv[1])
