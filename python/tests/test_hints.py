"""A mistyped numerics spec item gets the close names through the package (issue 33): the spec is
checked by the one C++ parser that `simprec numerics`, `simprec attention`, `simprec validate` and
experiment files use, and its message reaches Python as a ValueError."""

import re

import numpy as np
import pytest

import simprec

SPEC_HINTS = [
    ("fa2,p_cast=bf16:rnee", "unknown rounding mode 'rnee'; did you mean 'rne'?"),
    ("fa3", "unknown preset 'fa3'; did you mean 'fa2' or 'fa3-fp8'?"),
    ("torch-math,out_format=bf16",
     "unknown site or option 'out_format'; did you mean 'o_out' or 'grad_out'?"),
    ("fa2,algorithm=flsh", "unknown algorithm 'flsh'; did you mean 'flash'?"),
]


@pytest.mark.parametrize("spec, expected", SPEC_HINTS)
def test_canonical_numerics_names_the_close_items(spec, expected):
    with pytest.raises(ValueError, match=re.escape(expected)):
        simprec.canonical_numerics(spec)


@pytest.mark.parametrize("spec, expected", SPEC_HINTS)
def test_attention_names_the_close_items(spec, expected):
    q = np.zeros((1, 1, 4, 4), dtype=np.float32)
    with pytest.raises(ValueError, match=re.escape(expected)):
        simprec.attention(q, q, q, numerics=spec)


def test_validate_names_the_close_items():
    with pytest.raises(ValueError, match=re.escape("did you mean 'fa2' or 'fa3-fp8'?")):
        simprec.validate(lambda q, k, v: q, numerics="fa3", generate="normal",
                         shape=(1, 1, 8, 8), verbose=False)

