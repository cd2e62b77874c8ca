"""xacro robot descriptions (``.xacro``, ``.urdf.xacro``), expanded by the ``xacro`` package (PyPI,
the ROS tool itself; it needs no ROS install).

``$(find NAME)`` resolves through sim_node's package search (sim_node.model.packages) instead of
ament: xacro resolves it in one function, ``xacro.substitution_args._eval_find(pkg)`` (reached
from ``$(find ...)`` and, under the name ``find``, from ``$(eval ...)`` expressions); while a file
is expanded that function is replaced by ours, under a lock, and restored afterwards. xacro keeps
its state in module globals, hence the lock: expansions run one at a time.

Errors (xacro's own, XML errors, undefined arguments, missing includes or packages) become
``URDFError`` naming the file xacro was processing and the line where xacro gives one.
"""
from __future__ import annotations

import re
import threading
import xml.parsers.expat
from contextlib import contextmanager
from pathlib import Path

from sim_node.model.errors import URDFError
from sim_node.model.packages import PackageSearch

_LOCK = threading.RLock()


def is_xacro(path) -> bool:
    return str(path).lower().endswith(".xacro")


class _PackageNotFound(Exception):
    def __init__(self, name: str, searched: list):
        super().__init__(f"$(find {name}): package '{name}' not found in: " + "; ".join(searched))


@contextmanager
def _find_hook(search: PackageSearch):
    from xacro import substitution_args

    def find(name):
        directory = search.find(name)
        if directory is None:
            raise _PackageNotFound(name, search.candidates(name)[1])
        return str(directory)

    original = substitution_args._eval_find
    original_eval = substitution_args._eval_dict.get("find")
    substitution_args._eval_find = find
    substitution_args._eval_dict["find"] = find
    try:
        yield
    finally:
        substitution_args._eval_find = original
        substitution_args._eval_dict["find"] = original_eval


def expand(path: Path, args: dict | None, search: PackageSearch) -> str:
    """The URDF XML that xacro makes of the file at `path` with arguments `args`
    ({name: value}, values converted with str)."""
    import xacro

    mappings = {str(k): str(v) for k, v in (args or {}).items()}
    path = Path(path).resolve()
    with _LOCK, _find_hook(search):
        try:
            document = xacro.process_file(str(path), mappings=mappings)
            return document.toxml()
        except xml.parsers.expat.ExpatError as exc:
            raise URDFError(_current_file(path), "XML (xacro)",
                            xml.parsers.expat.ErrorString(exc.code), exc.lineno) from None
        except RecursionError:
            raise URDFError(_current_file(path), "xacro",
                            "macros or includes nest too deeply (recursion)") from None
        except Exception as exc:  # xacro raises its own and plain Python exceptions alike
            raise URDFError(_current_file(path), "xacro", _describe(exc)) from None
        finally:
            xacro.all_includes.clear()     # xacro appends every include here and never clears


_PLAIN_SUBSTITUTIONS = re.compile(r"\$\((?!(?:env|optenv|find)\s)")


def resolve_substitutions(text: str, search: PackageSearch) -> str:
    """`text` with the substitution args ``$(env X)``, ``$(optenv X default)``, ``$(find pkg)``
    expanded as xacro would. Others (``$(arg ...)``, ``$(eval ...)``, which would evaluate an
    expression from a plain URDF) are refused. Raises ValueError naming the problem."""
    from xacro import substitution_args

    if _PLAIN_SUBSTITUTIONS.search(text):
        raise ValueError("only $(env ...), $(optenv ...) and $(find ...) are expanded in a URDF; "
                         "use a .xacro file for the others")
    with _LOCK, _find_hook(search):
        try:
            return substitution_args.resolve_args(text, context={"arg": {}})
        except Exception as exc:
            raise ValueError(_describe(exc)) from None


def _current_file(default: Path) -> str:
    import xacro

    stack = [f for f in (xacro.filestack or []) if f]
    return str(stack[-1]) if stack else str(default)


def _describe(exc: Exception) -> str:
    name = type(exc).__name__
    text = str(exc) or name
    if name == "ArgException":
        return f"Undefined substitution argument {text} (pass it in xacro_args)"
    if text.startswith("Undefined substitution argument"):
        return f"{text} (pass it in xacro_args)"
    if isinstance(exc, (NameError, SyntaxError, TypeError, ZeroDivisionError)):
        return f"cannot evaluate an expression: {text}"
    return text
