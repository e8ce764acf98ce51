"""matmul on the tensor-core models: bit-identical to `simprec mma`, exact where the sum is."""

import numpy as np
import pytest

import simprec


def test_matmul_is_bit_identical_to_the_cli(cli, tmp_path):
    rng = np.random.default_rng(3)
    a = simprec.round(rng.normal(size=(2, 32, 48)).astype(np.float32), "bf16", encode=True)
    b = simprec.round(rng.normal(size=(48, 24)).astype(np.float32), "bf16", encode=True)
    c = rng.normal(size=(2, 32, 24)).astype(np.float32)
    for name, array in (("a", a), ("b", b), ("c", c)):
        np.save(tmp_path / f"{name}.npy", array)
    for model in ("tc:sm90-mma-bf16", "tc:sm90-wgmma-bf16"):
        cli("mma", "--model", model, "--a", tmp_path / "a.npy", "--b", tmp_path / "b.npy",
            "--c", tmp_path / "c.npy", "--out", tmp_path / "d.npy")
        expected = np.load(tmp_path / "d.npy")
        d = simprec.matmul(a, b, c, model=model)
        assert d.dtype == np.float32 and d.shape == (2, 32, 24)
        assert np.array_equal(d.view(np.uint32), expected.view(np.uint32))


def test_matmul_of_small_integers_is_exact():
    # Products and sums of small integers are exact in fp32, whatever the model truncates.
    rng = np.random.default_rng(4)
    a = rng.integers(-8, 8, size=(16, 64)).astype(np.float32)
    b = rng.integers(-8, 8, size=(64, 8)).astype(np.float32)
    for model in ("tc:sm90-mma-bf16", "tc:sm90-mma-fp16"):
        d = simprec.matmul(a, b, model=model)
        assert np.array_equal(d, (a.astype(np.int64) @ b.astype(np.int64)).astype(np.float32))


def test_matmul_errors():
    a = np.ones((4, 8), dtype=np.float32)
    with pytest.raises(ValueError, match="model: .*tc:nope"):
        simprec.matmul(a, a.T.copy(), model="tc:nope")
    with pytest.raises(ValueError, match="K differs"):
        simprec.matmul(a, a, model="tc:sm90-mma-bf16")
    with pytest.raises(ValueError, match=r"A\[0\] = 0.1.* is not representable in bf16"):
        simprec.matmul(np.full((4, 8), 0.1, dtype=np.float32), a.T.copy())
    with pytest.raises(TypeError, match="b: dtype complex128 is not accepted"):
        simprec.matmul(a, np.ones((8, 4), dtype=np.complex128))
    with pytest.raises(ValueError, match="a: expected a C-contiguous array"):
        simprec.matmul(np.ones((8, 4), dtype=np.float32).T, a.T.copy())
    assert any(m["name"] == "tc:sm90-mma-bf16" and m["verified"]
               for m in simprec.tensor_core_models())


def test_matmul_takes_each_operand_in_its_own_format():
    # tc:sm90-wgmma-e5m2-e4m3: A e5m2, B e4m3. 1024 is an e5m2 value (not e4m3's), 1.125 an e4m3
    # value (not e5m2's); the sum 1025.125 has the 14 significant bits the fp8 wgmma keeps.
    a = np.array([[1024.0, 1.0]], dtype=np.float32)
    b = np.array([[1.0], [1.125]], dtype=np.float32)
    d = simprec.matmul(a, b, model="tc:sm90-wgmma-e5m2-e4m3")
    assert d[0, 0] == 1025.125
    with pytest.raises(ValueError, match=r"A\[0\] = 1024 is not representable in e4m3fn"):
        simprec.matmul(a, b, model="tc:sm90-wgmma-e4m3-e5m2")
    with pytest.raises(ValueError, match=r"B\[1\] = 1.125 is not representable in e5m2"):
        simprec.matmul(np.ones((1, 2), np.float32), b, model="tc:sm90-wgmma-e4m3-e5m2")
    mixed = next(m for m in simprec.tensor_core_models()
                 if m["name"] == "tc:sm90-wgmma-e5m2-e4m3")
    assert (mixed["input_a"], mixed["input_b"], mixed["input"]) == ("e5m2", "e4m3fn",
                                                                     "e5m2.e4m3fn")
