"""How torch.compile compiled FlexAttention for a recorded shape: the policy behind the
flex_compile option the comparison gives torch-flex (it decides where the kernel contracts the
exponent argument into an fma, docs/torch_kernels.md)."""


def flex_compile_of(summary, name):
    """How torch.compile compiled FlexAttention for a recorded shape. A recording made with
    --flex-compile static compiled every shape for its lengths. Otherwise (plain torch.compile,
    the main recordings) automatic dynamic shapes apply: a graph's first call is compiled for
    its lengths (static) and, once a length has changed, recompiled for symbolic lengths
    (dynamic). The causal shapes pass a block mask, a graph of its own whose first call is
    static too."""
    if summary.get("flex_compile") == "static":
        return "static"
    names = [n for n in summary["shapes"] if "flex" in summary["shapes"][n]["kernels"]]
    first_sizes = {}
    for n in names:
        e = summary["shapes"][n]
        first_sizes.setdefault(bool(e["causal"]), (e["Sq"], e["Sk"], e["d"]))
    e = summary["shapes"][name]
    compiled_for = first_sizes[bool(e["causal"])]
    return "static" if (e["Sq"], e["Sk"], e["d"]) == compiled_for else "dynamic"
