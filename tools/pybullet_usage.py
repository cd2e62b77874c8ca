"""Rank PyBullet's functions by how many of bullet3's Python scripts call them (issue 14's top 60).

The corpus is the Python that the pybullet 3.2.7 wheel installs: bullet3's example scripts
(`pybullet_examples`), its gym environments and their examples (`pybullet_envs`), `pybullet_robots`
and `pybullet_utils`. A function counts once per file that calls it as an attribute
(`p.loadURDF(`, `self._p.loadURDF(`, `bullet_client.loadURDF(` ...), so one script calling a
function in a loop weighs as much as one calling it once. Ties rank by total calls, then name.

    ./dev python tools/pybullet_usage.py [N]     # the top N (default 60) with counts, whether
                                                 # sim_node.pybullet has each and README's status
"""
import collections
import importlib.util
import re
import sys
from pathlib import Path

PACKAGES = ("pybullet_examples", "pybullet_envs", "pybullet_robots", "pybullet_utils")


def corpus_files() -> list:
    """The .py files of the wheel's packages (absent packages are skipped)."""
    files = []
    for package in PACKAGES:
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            continue
        for root in spec.submodule_search_locations:
            files += sorted(p for p in Path(root).rglob("*.py") if "__pycache__" not in p.parts)
    return files


def pybullet_functions() -> set:
    """Every public callable of the real pybullet module."""
    import pybullet
    return {name for name in dir(pybullet) if not name.startswith("_")
            and callable(getattr(pybullet, name)) and name != "error"}


def ranking(files=None, functions=None) -> list:
    """[(name, files_calling, total_calls)], most used first."""
    files = corpus_files() if files is None else files
    functions = pybullet_functions() if functions is None else functions
    call = re.compile(r"\.\s*([A-Za-z_]\w*)\s*\(")
    in_files, calls = collections.Counter(), collections.Counter()
    for path in files:
        names = [n for n in call.findall(Path(path).read_text(errors="replace")) if n in functions]
        calls.update(names)
        in_files.update(set(names))
    return sorted(((n, in_files[n], calls[n]) for n in in_files),
                  key=lambda row: (-row[1], -row[2], row[0]))


def readme_statuses() -> dict:
    """function -> status (supported / partial / not supported) from README's PyBullet table."""
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    start = readme.find("## The PyBullet API\n")
    if start < 0:
        return {}
    end = readme.find("\n## ", start + 1)
    row = re.compile(r"^\|\s*`(\w+)`\s*\|\s*(supported|partial|not supported)\s*\|", re.M)
    return dict(row.findall(readme[start:end if end > 0 else None]))


def main(argv):
    top = int(argv[1]) if len(argv) > 1 else 60
    try:
        import sim_node.pybullet as ours
    except ImportError:
        ours = None
    rows, statuses = ranking()[:top], readme_statuses()
    print(f"{'rank':>4}  {'function':36} {'files':>5} {'calls':>6}  {'has':4} README")
    for rank, (name, n_files, n_calls) in enumerate(rows, 1):
        has = "-" if ours is None else ("yes" if hasattr(ours, name) else "no")
        print(f"{rank:>4}  {name:36} {n_files:>5} {n_calls:>6}  {has:4} {statuses.get(name, '-')}")
    counts = collections.Counter(statuses.get(name, "-") for name, _, _ in rows)
    print(", ".join(f"{status}: {n}" for status, n in sorted(counts.items())))


if __name__ == "__main__":
    main(sys.argv)
