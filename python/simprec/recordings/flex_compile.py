"""What torch.compile had compiled FlexAttention for when a recorded shape ran: the call history
the kernel model's compile policy needs (torch-flex's flex_compile=automatic-dynamic, in
lib/attention/models/torch-flex.toml), given to it as the compiled_for option."""


def compiled_for_of(summary, name):
    """The lengths and head dimension, as the text SQxSKxD, that the FlexAttention graph running
    the recorded shape `name` was first compiled for; "auto" (the shape's own) for a recording
    made with --flex-compile static, which compiled every shape for its lengths. The causal shapes
    pass a block mask, a graph of its own with a first compilation of its own."""
    if summary.get("flex_compile") == "static":
        return "auto"
    first_sizes = {}
    for n, e in summary["shapes"].items():
        if "flex" in e["kernels"]:
            first_sizes.setdefault(bool(e["causal"]), (e["Sq"], e["Sk"], e["d"]))
    return "x".join(str(x) for x in first_sizes[bool(summary["shapes"][name]["causal"])])
