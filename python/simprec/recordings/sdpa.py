"""PyTorch's scaled-dot-product-attention backends by the names the recorders give them."""

_BACKENDS = {"flash": "FLASH_ATTENTION", "efficient": "EFFICIENT_ATTENTION",
             "cudnn": "CUDNN_ATTENTION", "math": "MATH"}


def backend(name):
    """torch.nn.attention.SDPBackend of `name` (flash, efficient, cudnn, math)."""
    from torch.nn.attention import SDPBackend
    if name not in _BACKENDS:
        raise ValueError(f"SDPA backend {name!r}: expected one of {', '.join(_BACKENDS)}")
    return getattr(SDPBackend, _BACKENDS[name])
