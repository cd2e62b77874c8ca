"""Run a list of sim_node.math calls through klampt.math in a subprocess (klampt never enters
the test process) and compare the results, return forms included.

A call is (module, function, args). The klampt side records (type name, value) per call, with
tuples and lists kept apart, so that a list where Klamp't returns a tuple is caught too.
"""
import json
import math

from klampt_reference import run_klampt

SCRIPT = """
from klampt.math import vectorops, so3, se3, so2
MODULES = dict(vectorops=vectorops, so3=so3, se3=se3, so2=so2)
def form(x):
    if isinstance(x, (list, tuple)):
        return [type(x).__name__, [form(v) for v in x]]
    if hasattr(x, "tolist") and getattr(x, "ndim", 0) > 0:
        return ["ndarray", form(x.tolist())]
    if isinstance(x, bool):
        return ["bool", x]
    if isinstance(x, (int, float)):
        return ["number", float(x)]
    if isinstance(x, str):
        return ["str", x]
    return ["error", type(x).__name__]
CALLS = json.load(open(CALLS_PATH))
out = []
for module, name, args in CALLS:
    if name.startswith("interpolator:"):
        f = getattr(MODULES[module], "interpolator")(*args[:-1])
        out.append(form(f(args[-1])))
        continue
    fn = getattr(MODULES[module], name)
    if name == "from_ndarray":
        args = [np.array(args[0])]
    try:
        out.append(form(fn(*args)))
    except Exception as e:
        out.append(["raised", type(e).__name__])
emit(out)
"""


def klampt_results(calls, tmp_path):
    """klampt's (form, value) for each call, as form() above builds it (the calls pass
    through a JSON file: a command line would be too long)."""
    path = tmp_path / "calls.json"
    path.write_text(json.dumps(calls))
    return run_klampt(f"CALLS_PATH = {str(path)!r}\n" + SCRIPT, tmp_path)


def form(x):
    """The same (type name, value) description of one of our results."""
    if isinstance(x, (list, tuple)):
        return [type(x).__name__, [form(v) for v in x]]
    if hasattr(x, "tolist") and getattr(x, "ndim", 0) > 0:
        return ["ndarray", form(x.tolist())]
    if isinstance(x, bool):
        return ["bool", x]
    if isinstance(x, (int, float)):
        return ["number", float(x)]
    if isinstance(x, str):
        return ["str", x]
    return ["error", type(x).__name__]


def call_ours(modules, module, name, args):
    import numpy as np
    if name.startswith("interpolator:"):
        return form(getattr(modules[module], "interpolator")(*args[:-1])(args[-1]))
    if name == "from_ndarray":
        args = [np.array(args[0])]
    return form(getattr(modules[module], name)(*args))


def mismatch(ours, ref, tol=1e-12, path="") -> str | None:
    """Where two forms differ (type, length, or a number by more than tol, absolute for
    |x| <= 1 and relative beyond), or None."""
    if ours[0] != ref[0]:
        return f"{path}: {ours[0]} where klampt gives {ref[0]}"
    if ours[0] in ("list", "tuple", "ndarray"):
        a, b = (ours[1], ref[1]) if ours[0] != "ndarray" else (ours[1][1], ref[1][1])
        if len(a) != len(b):
            return f"{path}: length {len(a)} where klampt gives {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            m = mismatch(x, y, tol, f"{path}[{i}]")
            if m:
                return m
        return None
    if ours[0] == "number":
        x, y = ours[1], ref[1]
        if math.isnan(x) and math.isnan(y):
            return None
        if not abs(x - y) <= tol * max(1.0, abs(y)):
            return f"{path}: {x!r} where klampt gives {y!r} (difference {abs(x - y):.3g})"
        return None
    return None if ours[1] == ref[1] else f"{path}: {ours[1]!r} != {ref[1]!r}"
