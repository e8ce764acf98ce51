"""The shapes PyTorch's attention kernels were recorded on (record_torch): the main set
(tests/data/torch_kernels) and the held-out set (tests/data/torch_held_out_sweep). A shape is
(B, H, Sq, Sk, d, causal, kind), kind one of inputs.KIND_IDS."""

# name: (B, H, Sq, Sk, d, causal, kind). Chosen to cover the dispatch: one key block against
# many, head dimensions 64/96/128, N not a multiple of any tile, Sq != Sk both ways, causal,
# few heads (the split-KV heuristic compares batch x heads x query tiles with the SM count)
# against many, and the three input kinds.
SHAPES = {
    "b1h1_n128_d64": (1, 1, 128, 128, 64, False, "normal"),
    "b2h2_n128_d64": (2, 2, 128, 128, 64, False, "normal"),
    "b1h1_n512_d64": (1, 1, 512, 512, 64, False, "normal"),
    "b1h2_n1024_d64": (1, 2, 1024, 1024, 64, False, "normal"),
    "b1h1_n2048_d64": (1, 1, 2048, 2048, 64, False, "normal"),
    "b2h4_n1000_d64": (2, 4, 1000, 1000, 64, False, "normal"),
    "b1h1_n512_d96": (1, 1, 512, 512, 96, False, "normal"),
    "b1h2_n1024_d96": (1, 2, 1024, 1024, 96, False, "normal"),
    "b1h1_n512_d128": (1, 1, 512, 512, 128, False, "normal"),
    "b1h2_n1024_d128": (1, 2, 1024, 1024, 128, False, "normal"),
    "b1h1_n2048_d128": (1, 1, 2048, 2048, 128, False, "normal"),
    "b1h1_n1000_d128": (1, 1, 1000, 1000, 128, False, "normal"),
    "b1h1_n512_d64_causal": (1, 1, 512, 512, 64, True, "normal"),
    "b1h2_n1024_d64_causal": (1, 2, 1024, 1024, 64, True, "normal"),
    "b1h1_n1024_d128_causal": (1, 1, 1024, 1024, 128, True, "normal"),
    "b1h1_n777_d96_causal": (1, 1, 777, 777, 96, True, "normal"),
    "b1h1_q256_k1024_d64": (1, 1, 256, 1024, 64, False, "normal"),
    "b1h1_q1024_k256_d64": (1, 1, 1024, 256, 64, False, "normal"),
    "b1h1_q256_k1024_d128_causal": (1, 1, 256, 1024, 128, True, "normal"),
    "b1h1_q200_k600_d128": (1, 1, 200, 600, 128, False, "normal"),
    "b1h1_q64_k2048_d128": (1, 1, 64, 2048, 128, False, "normal"),
    "b1h1_q16_k4096_d64": (1, 1, 16, 4096, 64, False, "normal"),
    "b4h16_n1024_d64": (4, 16, 1024, 1024, 64, False, "normal"),
    "b8h16_n512_d128": (8, 16, 512, 512, 128, False, "normal"),
    "b4h8_n2048_d128_causal": (4, 8, 2048, 2048, 128, True, "normal"),
    "b2h8_n4096_d64": (2, 8, 4096, 4096, 64, False, "normal"),
    "b1h1_n4096_d128_causal": (1, 1, 4096, 4096, 128, True, "normal"),
    "b1h4_n1024_d64_repmax": (1, 4, 1024, 1024, 64, False, "repeated-max"),
    "b1h2_n1024_d128_repmax": (1, 2, 1024, 1024, 128, False, "repeated-max"),
    "b1h1_n2048_d128_causal_repmax": (1, 1, 2048, 2048, 128, True, "repeated-max"),
    "b2h2_n512_d96_lowrank": (2, 2, 512, 512, 96, False, "low-rank"),
    "b1h1_n1536_d64_lowrank": (1, 1, 1536, 1536, 64, False, "low-rank"),
}
# Shapes none of the presets was described from: many key blocks without a split (the row sum's
# rescale), lengths no tile divides under a statically compiled FlexAttention, split-KV with
# uneven splits, Sq != Sk, and the three input kinds.
HELD_OUT_SHAPES = {
    "b4h8_n1536_d128": (4, 8, 1536, 1536, 128, False, "normal"),
    "b2h16_n1200_d64": (2, 16, 1200, 1200, 64, False, "normal"),
    "b1h2_n1111_d64_causal": (1, 2, 1111, 1111, 64, True, "normal"),
    "b1h3_n900_d96": (1, 3, 900, 900, 96, False, "normal"),
    "b1h1_q333_k2222_d128": (1, 1, 333, 2222, 128, False, "normal"),
    "b3h5_n700_d128_causal_repmax": (3, 5, 700, 700, 128, True, "repeated-max"),
    "b2h4_n1280_d64_lowrank": (2, 4, 1280, 1280, 64, False, "low-rank"),
    "b1h1_q48_k3000_d64": (1, 1, 48, 3000, 64, False, "normal"),
}
SHAPE_SETS = {"main": SHAPES, "held-out": HELD_OUT_SHAPES}
