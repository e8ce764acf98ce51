// The GEMM presets: the kernels recorded on an H200 (tests/data/gemm; PyTorch 2.11, cuBLASLt
// 13.1), each as assignments over the defaults, read through the same keys as a spec. What the
// recordings showed is in docs/gemm.md ("Measured").
#include "lib/gemm/gemm_numerics.hpp"

namespace simprec::gemm {

std::span<const GemmPreset> gemm_presets() {
  static const GemmPreset presets[] = {
      {"chain", "the instruction chain over the whole of K, fp32 out (simprec.matmul)",
       "instruction=tc:sm90-wgmma-bf16"},
      {"cublas-bf16", "torch.matmul on bf16: cuBLAS's wgmma kernel, K not split",
       "instruction=tc:sm90-wgmma-bf16,out=bf16"},
      {"cublas-bf16-splitk",
       "torch.matmul on bf16 where cuBLAS runs a split-K kernel (give its tile and cluster)",
       "instruction=tc:sm90-wgmma-bf16,split_k=cublas-sm90,out=bf16"},
      {"cublas-fp16", "torch.matmul on fp16: cuBLAS's wgmma kernel, K not split",
       "instruction=tc:sm90-wgmma-fp16,out=fp16"},
      {"cublas-fp16-splitk",
       "torch.matmul on fp16 where cuBLAS runs a split-K kernel (give its tile and cluster)",
       "instruction=tc:sm90-wgmma-fp16,split_k=cublas-sm90,out=fp16"},
      {"cublaslt-fp16-sm80",
       "torch.matmul on fp16 with split-K not allowed (cuBLASLt's sm80 mma.sync kernel)",
       "instruction=tc:sm90-mma-fp16,out=fp16"},
      {"scaled-mm-e4m3",
       "torch._scaled_mm e4m3 x e4m3, tensor-wise scales, use_fast_accum=False (promoted every "
       "128)",
       "instruction=tc:sm90-wgmma-e4m3,promote=128,scaling=tensor,out=bf16"},
      {"scaled-mm-e4m3-fast", "torch._scaled_mm e4m3 x e4m3, tensor-wise, use_fast_accum=True",
       "instruction=tc:sm90-wgmma-e4m3,scaling=tensor,out=bf16"},
      {"scaled-mm-e4m3-rowwise",
       "torch._scaled_mm e4m3 x e4m3, row-wise scales (scale_b, then scale_a), "
       "use_fast_accum=False",
       "instruction=tc:sm90-wgmma-e4m3,promote=128,scaling=row,scale_order=b-then-a,out=bf16"},
      {"scaled-mm-e4m3-rowwise-fast",
       "torch._scaled_mm e4m3 x e4m3, row-wise scales, use_fast_accum=True",
       "instruction=tc:sm90-wgmma-e4m3,scaling=row,scale_order=b-then-a,out=bf16"},
      {"scaled-mm-e5m2-e4m3",
       "torch._scaled_mm e5m2 x e4m3, tensor-wise scales, use_fast_accum=False",
       "instruction=tc:sm90-wgmma-e5m2-e4m3,promote=128,scaling=tensor,out=bf16"},
      {"scaled-mm-e5m2-e4m3-fast",
       "torch._scaled_mm e5m2 x e4m3, tensor-wise scales, use_fast_accum=True",
       "instruction=tc:sm90-wgmma-e5m2-e4m3,scaling=tensor,out=bf16"},
      {"scaled-mm-e5m2-e4m3-rowwise",
       "torch._scaled_mm e5m2 x e4m3, row-wise scales, use_fast_accum=False",
       "instruction=tc:sm90-wgmma-e5m2-e4m3,promote=128,scaling=row,scale_order=b-then-a,"
       "out=bf16"},
      {"scaled-mm-e5m2-e4m3-rowwise-fast",
       "torch._scaled_mm e5m2 x e4m3, row-wise scales, use_fast_accum=True",
       "instruction=tc:sm90-wgmma-e5m2-e4m3,scaling=row,scale_order=b-then-a,out=bf16"},
      {"mxfp8-e4m3",
       "MXFP8 e4m3 x e4m3 with E8M0 scales per 32 elements of K on sm_100's block-scaled MMA "
       "(not recorded: unverified)",
       "instruction=tc:sm100-tcgen05-e4m3,block_scales=mxfp8,out=bf16"},
      {"nvfp4",
       "NVFP4 e2m1 x e2m1 with e4m3 scales per 16 elements of K and fp32 tensor scales as alpha "
       "(not recorded: unverified)",
       "instruction=tc:sm100-tcgen05-e2m1,block_scales=nvfp4,scaling=tensor,out=bf16"},
  };
  return presets;
}

}  // namespace simprec::gemm
