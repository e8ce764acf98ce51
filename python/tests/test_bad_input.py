"""Bad input never crashes the interpreter: a battery of bad calls runs in a child interpreter,
each must raise ValueError or TypeError (or, for sizes that are merely empty, succeed), and the
child must exit normally."""

import subprocess
import sys
import textwrap

BATTERY = textwrap.dedent(r'''
    import numpy as np
    import torch
    import simprec
    import simprec.torch as storch

    f32 = np.zeros((2, 16, 8), dtype=np.float32)
    calls = {
        "round None": lambda: simprec.round(None, "bf16"),
        "round strings": lambda: simprec.round(["a", "b"], "bf16"),
        "round object": lambda: simprec.round(object(), "bf16"),
        "round negative seed": lambda: simprec.round(f32, "bf16", "sr", seed=-1),
        "round big-endian": lambda: simprec.round(np.zeros(3, dtype=">f4"), "bf16"),
        "round e11m60": lambda: simprec.round(f32, "e11m60"),
        "round e1m1": lambda: simprec.round(f32, "e1m1"),
        "round sr_bits 33": lambda: simprec.round(f32, "bf16", "sr", sr_bits=33),
        "round read-only out": lambda: simprec.round(f32, "bf16", out=np.frombuffer(
            bytes(f32.nbytes), dtype=np.float32).reshape(f32.shape)),
        "decode float": lambda: simprec.decode(f32, "bf16"),
        "decode bad dtype": lambda: simprec.decode(np.zeros(3, np.uint16), "bf16",
                                                   dtype="float16"),
        "add shapes": lambda: simprec.add(np.zeros(3), np.zeros(4), "bf16"),
        "fma missing": lambda: simprec.fma(np.zeros(3), np.zeros(3), None, "bf16"),
        "matmul 1-D": lambda: simprec.matmul(np.zeros(4, np.float32), np.zeros(4, np.float32)),
        "matmul batch": lambda: simprec.matmul(np.zeros((2, 4, 8), np.float32),
                                               np.zeros((3, 8, 4), np.float32)),
        "matmul C shape": lambda: simprec.matmul(np.zeros((4, 8), np.float32),
                                                 np.zeros((8, 4), np.float32),
                                                 np.zeros((3, 3), np.float32)),
        "attention 1-D": lambda: simprec.attention(np.zeros(8), np.zeros(8), np.zeros(8)),
        "attention empty N": lambda: simprec.attention(np.zeros((1, 0, 8)), np.zeros((1, 0, 8)),
                                                       np.zeros((1, 0, 8))),
        "attention empty d": lambda: simprec.attention(np.zeros((1, 4, 0)), np.zeros((1, 4, 0)),
                                                       np.zeros((1, 4, 0))),
        "attention do shape": lambda: simprec.attention(f32, f32, f32, np.zeros((2, 16, 4))),
        "attention lse only": lambda: simprec.attention(f32, f32, f32, f32, lse=np.zeros((2, 16))),
        "attention bad set": lambda: simprec.attention(f32, f32, f32, set=["nowhere=bf16:rne"]),
        "attention bad mitigation": lambda: simprec.attention(f32, f32, f32,
                                                              mitigations=["beta-rowmax:-1"]),
        "attention bad format": lambda: simprec.attention(f32, f32, f32, format="bf15"),
        "attention bad scale": lambda: simprec.attention(f32, f32, f32, scale=-1.0),
        "attention input_format fp32": lambda: simprec.attention(f32, f32, f32,
                                                                 input_format="fp32"),
        "attention bad target": lambda: simprec.attention(f32, f32, f32, attribute=True,
                                                          attribute_target="x"),
        "generate huge": lambda: simprec.generate("normal", (2**31, 2**31, 2**31, 2**31)),
        "generate zero": lambda: simprec.generate("normal", (1, 1, 0, 8)),
        "experiment missing": lambda: simprec.run_experiment("/nonexistent/x.toml", check=True),
        "torch int": lambda: storch.attention(torch.zeros(1, 4, 8, dtype=torch.int64),
                                              torch.zeros(1, 4, 8), torch.zeros(1, 4, 8)),
        "torch 1-D": lambda: storch.attention(torch.zeros(8), torch.zeros(8), torch.zeros(8)),
        "linear int": lambda: storch.linear(torch.zeros(2, 4, dtype=torch.int64),
                                            torch.zeros(3, 4)),
        "linear 1-D weight": lambda: storch.linear(torch.zeros(2, 4), torch.zeros(4)),
        "linear no model": lambda: storch.linear(torch.zeros(2, 4), torch.zeros(3, 4)),
        "linear huge promote": lambda: storch.linear(torch.zeros(2, 4).bfloat16(),
                                                     torch.zeros(3, 4).bfloat16(),
                                                     promote_every=-1),
        "matmul strings": lambda: storch.matmul("a", torch.zeros(2, 2)),
        "emulate no module": lambda: storch.emulate(None, linear="bf16").__enter__(),
        "recipe history": lambda: storch.DelayedScaling(amax_history_len=2.5),
        "validate no fn output": lambda: simprec.validate(lambda q, k, v: None,
                                                          generate="normal",
                                                          shape=(1, 1, 8, 8), verbose=False),
        "validate bad name": lambda: simprec.validate(lambda q, k, v: {"X": q},
                                                      generate="normal", shape=(1, 1, 8, 8),
                                                      verbose=False),
    }
    raised = 0
    for name, call in calls.items():
        try:
            call()
        except (ValueError, TypeError, FileNotFoundError) as e:
            assert str(e), name
            raised += 1
        else:
            print("NO ERROR:", name)
    # Empty arrays are fine where nothing is computed from their sizes.
    assert simprec.round(np.zeros(0, np.float32), "bf16").shape == (0,)
    assert simprec.decode(np.zeros(0, np.uint8), "e4m3fn").shape == (0,)
    print("raised", raised, "of", len(calls))
''')


def test_bad_calls_raise_and_never_crash(tmp_path):
    script = tmp_path / "battery.py"
    script.write_text(BATTERY)
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert "NO ERROR" not in r.stdout, r.stdout
    count = BATTERY.count('": lambda')
    assert lines[-1] == f"raised {count} of {count}", r.stdout
