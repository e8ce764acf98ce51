"""Checks of the Python-level arguments the extension module cannot name well: each raises
TypeError or ValueError naming the argument, the value given and what was expected."""

import difflib
import functools
import inspect


def string_list(value, argument, example):
    """A list or tuple of str as a list. A lone str is refused, not split into characters."""
    if isinstance(value, str):
        raise TypeError(f"{argument}={value!r}: expected a list of strings such as "
                        f"[{example!r}], got a str (write [{value!r}])")
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"{argument}={value!r}: expected a list or tuple of strings such as "
                        f"[{example!r}], got {type(value).__name__}")
    for item in value:
        if not isinstance(item, str):
            raise TypeError(f"{argument}: expected strings such as {example!r}, got {item!r} "
                            f"({type(item).__name__})")
    return list(value)


def numerics_spec(numerics):
    """A numerics spec: a str (a preset, a line, a .toml file's path) or a path object."""
    import os
    if isinstance(numerics, os.PathLike):
        return os.fspath(numerics)
    if not isinstance(numerics, str):
        raise TypeError(f"numerics={numerics!r}: expected a numerics spec (a str such as 'fa2' "
                        f"or 'torch-math,format=fp16', or a .toml file's path), got "
                        f"{type(numerics).__name__}")
    return numerics


def shape_argument(shape, argument, expected):
    """A sequence of integers (`expected` names its meaning, e.g. "(B, H, N, d)") as a list."""
    import numbers
    if isinstance(shape, (str, bytes)) or not hasattr(shape, "__len__"):
        raise TypeError(f"{argument}={shape!r}: expected a tuple of integers {expected}, got "
                        f"{type(shape).__name__}")
    for size in shape:
        if isinstance(size, bool) or not isinstance(size, numbers.Integral):
            raise TypeError(f"{argument}={tuple(shape)!r}: expected a tuple of integers "
                            f"{expected}, got {size!r} ({type(size).__name__})")
    return [int(s) for s in shape]


def tile_argument(tile):
    """None, or (rows, columns) as a tuple of two ints."""
    if tile is None:
        return None
    import numbers
    if (isinstance(tile, (str, bytes)) or not hasattr(tile, "__len__") or len(tile) != 2
            or not all(isinstance(t, numbers.Integral) and not isinstance(t, bool)
                       for t in tile)):
        raise TypeError(f"tile={tile!r}: expected None or two integers (rows, columns) such as "
                        "(64, 64)")
    return (int(tile[0]), int(tile[1]))


def optional_str(value, argument, example):
    if value is not None and not isinstance(value, str):
        raise TypeError(f"{argument}={value!r}: expected a str such as {example!r} or None, got "
                        f"{type(value).__name__}")
    return value


def unknown_keywords(given, known, where, why=""):
    """TypeError for the first keyword of `given` that is not in `known`, with the nearest."""
    for name in given:
        if name not in known:
            near = difflib.get_close_matches(name, list(known), n=1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            raise TypeError(f"{where}: unexpected keyword argument {name!r}{hint}{why}; expected "
                            f"one of {', '.join(sorted(known))}")


def text(value, argument, example):
    """A str argument (a format's, a mode's, a model's name)."""
    if not isinstance(value, str):
        raise TypeError(f"{argument}={value!r}: expected a str such as {example!r}, got "
                        f"{type(value).__name__}")
    return value


def number(value, argument, expected, integer=False):
    """None, or a real number (an integer with integer=True; never a bool or a str) as a float
    (an int)."""
    import numbers
    if value is None:
        return None
    kind = numbers.Integral if integer else numbers.Real
    if isinstance(value, bool) or not isinstance(value, kind):
        raise TypeError(f"{argument}={value!r}: expected {expected} or None, got "
                        f"{type(value).__name__}")
    return int(value) if integer else float(value)


def flag(value, argument):
    """True or False (numpy's bools too), not any truthy object."""
    import numpy as np
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{argument}={value!r}: expected True or False, got "
                        f"{type(value).__name__}")
    return bool(value)


def named_keywords(function):
    """`function` with a misspelt keyword refused naming the nearest parameter (Python's own
    message names the keyword but not what was meant)."""
    signature = inspect.signature(function)

    @functools.wraps(function)
    def checked(*args, **kwargs):
        unknown = [k for k in kwargs if k not in signature.parameters]
        if unknown and not any(p.kind == p.VAR_KEYWORD for p in signature.parameters.values()):
            unknown_keywords(unknown, list(signature.parameters), function.__name__)
        return function(*args, **kwargs)
    return checked
