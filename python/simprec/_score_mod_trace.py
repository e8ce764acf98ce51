"""A score_mod callable written down as simprec's score_mod expression (docs/score_mod.md).

The callable runs once on traced values standing for score, b, h, q_idx and kv_idx: Python's
operators and the torch functions FlexAttention's score_mods use (torch.tanh, torch.exp,
torch.exp2, torch.log, torch.sqrt, torch.sigmoid, torch.abs, torch.where, torch.minimum,
torch.maximum, torch.clamp) record the expression, and a captured tensor indexed by them
(bias[b, h, q_idx, kv_idx], slopes[h]) becomes an array the expression reads by name. Python
computes its own constants first, as it does under torch.compile.
"""

from __future__ import annotations

import math

import numpy as np
import torch

_FUNCTIONS = {torch.tanh: "tanh", torch.exp: "exp", torch.exp2: "exp2", torch.log: "log",
              torch.sqrt: "sqrt", torch.sigmoid: "sigmoid", torch.abs: "abs"}
_METHODS = {"tanh", "exp", "exp2", "log", "sqrt", "sigmoid", "abs"}
# torch's arithmetic functions and Tensor operators, as the traced value's own operators.
_BINARY = {torch.add: "__add__", torch.sub: "__sub__", torch.mul: "__mul__",
           torch.div: "__truediv__", torch.Tensor.__add__: "__add__",
           torch.Tensor.__radd__: "__radd__", torch.Tensor.__sub__: "__sub__",
           torch.Tensor.__rsub__: "__rsub__", torch.Tensor.__mul__: "__mul__",
           torch.Tensor.__rmul__: "__rmul__", torch.Tensor.__truediv__: "__truediv__",
           torch.Tensor.__rtruediv__: "__rtruediv__"}


class _Trace:
    """The tensors a traced score_mod reads, named t0, t1, ... in order of first use."""

    def __init__(self):
        self.tensors = {}
        self._names = {}
        self._kept = []  # the tensors named, so that no id is reused while tracing

    def name_of(self, tensor):
        key = id(tensor)
        if key not in self._names:
            name = f"t{len(self._names)}"
            self._names[key] = name
            array = tensor.detach().cpu()
            if array.is_floating_point():
                array = array.float()
            self.tensors[name] = array.numpy()
            self._kept.append(tensor)
        return self._names[key]


class Traced:
    """A value of a score_mod being traced: its expression and kind (float, int or bool)."""

    __slots__ = ("text", "kind", "trace")

    def __init__(self, text, kind, trace):
        self.text, self.kind, self.trace = text, kind, trace

    # What torch's flex_attention code and score_mods ask of their arguments.
    @property
    def device(self):
        return torch.device("cpu")

    @property
    def dtype(self):
        return {"float": torch.float32, "int": torch.int32, "bool": torch.bool}[self.kind]

    def __repr__(self):
        return f"Traced({self.text!r})"

    def __bool__(self):
        raise TypeError("score_mod: a traced value has no truth value (its branches depend on "
                        "the score or the indices); write torch.where(condition, a, b)")

    __hash__ = object.__hash__

    def _make(self, text, kind):
        return Traced(text, kind, self.trace)

    def _operand(self, x):
        return operand(x, self.trace)

    def _binary(self, other, op, kind=None, reverse=False):
        o = self._operand(other)
        if o is NotImplemented:
            return NotImplemented
        a, b = (o, self) if reverse else (self, o)
        if kind is None:
            kinds = {a.kind, b.kind}
            kind = "float" if "float" in kinds or op == "/" else "int" if "int" in kinds else "bool"
        return self._make(f"({a.text} {op} {b.text})", kind)

    def __add__(self, o): return self._binary(o, "+")
    def __radd__(self, o): return self._binary(o, "+", reverse=True)
    def __sub__(self, o): return self._binary(o, "-")
    def __rsub__(self, o): return self._binary(o, "-", reverse=True)
    def __mul__(self, o): return self._binary(o, "*")
    def __rmul__(self, o): return self._binary(o, "*", reverse=True)
    def __truediv__(self, o): return self._binary(o, "/")
    def __rtruediv__(self, o): return self._binary(o, "/", reverse=True)
    def __floordiv__(self, o): return self._binary(o, "//")
    def __rfloordiv__(self, o): return self._binary(o, "//", reverse=True)
    def __mod__(self, o): return self._binary(o, "%")
    def __rmod__(self, o): return self._binary(o, "%", reverse=True)
    def __and__(self, o): return self._binary(o, "&", "bool")
    def __rand__(self, o): return self._binary(o, "&", "bool", reverse=True)
    def __or__(self, o): return self._binary(o, "|", "bool")
    def __ror__(self, o): return self._binary(o, "|", "bool", reverse=True)
    def __lt__(self, o): return self._binary(o, "<", "bool")
    def __le__(self, o): return self._binary(o, "<=", "bool")
    def __gt__(self, o): return self._binary(o, ">", "bool")
    def __ge__(self, o): return self._binary(o, ">=", "bool")
    def __eq__(self, o): return self._binary(o, "==", "bool")
    def __ne__(self, o): return self._binary(o, "!=", "bool")

    def __pow__(self, exponent):
        if exponent != 2:
            raise ValueError(f"score_mod: ** {exponent!r}; simprec emulates ** 2 (x * x, as "
                             "Inductor computes it)")
        return self._make(f"({self.text} ** 2)", self.kind)

    def __neg__(self): return self._make(f"(-{self.text})", self.kind)
    def __pos__(self): return self
    def __abs__(self): return self._make(f"abs({self.text})", self.kind)

    def __invert__(self):
        if self.kind != "bool":
            raise ValueError("score_mod: ~ of a number; simprec emulates ~ of booleans")
        return self._make(f"(~{self.text})", "bool")

    def __getattr__(self, name):
        if name in _METHODS:
            kind = self.kind if name == "abs" else "float"
            return lambda: self._make(f"{name}({self.text})", kind)
        raise AttributeError(f"score_mod: the traced value has no attribute {name!r} (simprec "
                             f"traces Python's operators, {', '.join(sorted(_METHODS))}, "
                             "float(), to(float32) and the torch functions of "
                             "docs/score_mod.md)")

    def float(self):
        return self._make(f"float({self.text})", "float")

    def to(self, *args, **kwargs):
        dtype = kwargs.get("dtype", args[0] if args else None)
        if dtype in (torch.float32, torch.float) or isinstance(dtype, torch.device):
            return self.float() if dtype in (torch.float32, torch.float) else self
        raise ValueError(f"score_mod: .to({dtype}); simprec emulates float32 score arithmetic")

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        trace = next(x.trace for x in _flat(args, kwargs) if isinstance(x, Traced))
        name = _FUNCTIONS.get(func)
        if name is not None and len(args) == 1 and not kwargs:
            x = operand(args[0], trace)
            return Traced(f"{name}({x.text})", x.kind if name == "abs" else "float", trace)
        if func is torch.where and len(args) == 3 and not kwargs:
            c, a, b = (operand(x, trace) for x in args)
            kind = "float" if "float" in (a.kind, b.kind) else a.kind
            return Traced(f"where({c.text}, {a.text}, {b.text})", kind, trace)
        if func in (torch.minimum, torch.maximum) and len(args) == 2 and not kwargs:
            a, b = (operand(x, trace) for x in args)
            kind = "float" if "float" in (a.kind, b.kind) else a.kind
            return Traced(f"{func.__name__}({a.text}, {b.text})", kind, trace)
        if func is torch.clamp:
            # As where()s: the same values, and clamp's derivative (the gradient where
            # min <= x <= max, else 0).
            x = operand(args[0], trace)
            low = kwargs.get("min", args[1] if len(args) > 1 else None)
            high = kwargs.get("max", args[2] if len(args) > 2 else None)
            if high is not None:
                h = operand(high, trace)
                x = Traced(f"where({x.text} > {h.text}, {h.text}, {x.text})", "float", trace)
            if low is not None:
                lo = operand(low, trace)
                x = Traced(f"where({operand(args[0], trace).text} < {lo.text}, {lo.text}, "
                           f"{x.text})", "float", trace)
            return x
        if func is torch.Tensor.__getitem__:
            return _load(args[0], args[1], trace)
        if func in (torch.Tensor.to, torch.Tensor.float) and isinstance(args[0], Traced):
            return args[0].to(*args[1:], **kwargs) if func is torch.Tensor.to else args[0].float()
        binary = _BINARY.get(func)
        if binary is not None and len(args) == 2 and not kwargs:
            a, b = args
            if isinstance(a, Traced):
                return getattr(a, binary)(b)
            return getattr(operand(a, trace), binary)(b)
        raise ValueError(f"score_mod: {getattr(func, '__name__', func)} is not among what "
                         "simprec emulates (docs/score_mod.md lists the operations)")


def _flat(args, kwargs):
    for x in list(args) + list(kwargs.values()):
        if isinstance(x, (tuple, list)):
            yield from x
        else:
            yield x


def _load(tensor, index, trace):
    if not isinstance(tensor, torch.Tensor):
        raise ValueError(f"score_mod: indexing a {type(tensor).__name__}; expected a tensor")
    index = index if isinstance(index, tuple) else (index,)
    if len(index) != tensor.dim():
        raise ValueError(f"score_mod: a tensor of {tensor.dim()} dimensions indexed with "
                         f"{len(index)} indices; simprec reads one element per score")
    parts = []
    for i in index:
        o = operand(i, trace)
        if o.kind != "int":
            raise ValueError(f"score_mod: the index {o.text} is not an integer")
        parts.append(o.text)
    kind = ("bool" if tensor.dtype == torch.bool else
            "float" if tensor.is_floating_point() else "int")
    return Traced(f"{trace.name_of(tensor)}[{', '.join(parts)}]", kind, trace)


def operand(x, trace):
    """A Python number, bool, 0-d tensor or traced value as a traced value."""
    if isinstance(x, Traced):
        return x
    if isinstance(x, (bool, np.bool_)):
        return Traced("True" if x else "False", "bool", trace)
    if isinstance(x, (int, np.integer)):
        return Traced(repr(int(x)) if x >= 0 else f"({int(x)})", "int", trace)
    if isinstance(x, (float, np.floating)):
        x = float(x)
        if math.isnan(x):
            raise ValueError("score_mod: a NaN constant")
        text = "inf" if x == math.inf else "(-inf)" if x == -math.inf else repr(x)
        return Traced(text if x >= 0 else f"({text})", "float", trace)
    if isinstance(x, torch.Tensor) and x.dim() == 0:
        kind = "bool" if x.dtype == torch.bool else "float" if x.is_floating_point() else "int"
        return Traced(trace.name_of(x), kind, trace)
    if isinstance(x, torch.Tensor):
        raise ValueError(f"score_mod: a tensor of shape {tuple(x.shape)} used whole; index it "
                         "by b, h, q_idx or kv_idx (one element per score)")
    return NotImplemented


def trace_score_mod(score_mod):
    """(expression, tensors) of score_mod(score, b, h, q_idx, kv_idx)."""
    trace = _Trace()
    args = (Traced("score", "float", trace), Traced("b", "int", trace),
            Traced("h", "int", trace), Traced("q_idx", "int", trace),
            Traced("kv_idx", "int", trace))
    try:
        result = score_mod(*args)
    except (TypeError, ValueError) as error:
        raise ValueError(f"score_mod={score_mod!r}: {error}") from error
    traced = operand(result, trace)
    if traced is NotImplemented:
        raise ValueError(f"score_mod={score_mod!r} returned {type(result).__name__}; expected "
                         "the modified score")
    return traced.text, trace.tensors
