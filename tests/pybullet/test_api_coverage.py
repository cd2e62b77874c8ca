"""sim_node.pybullet covers the quickstart's functions as README's table says, in PyBullet's names.

The reference is the real pybullet 3.2.7 (test dependency) and the quickstart seed
(/work/shared/seeds/003_*, the copy under tests/data when that is absent): every function the
quickstart names is in README's "The PyBullet API" table; every row marked supported or partial
is a function of sim_node.pybullet; every function sim_node.pybullet shares with pybullet accepts
all of pybullet's keyword arguments, its required ones first and in pybullet's order.

PyBullet's functions are C functions without signatures, so their keyword names are found by
asking pybullet itself (`pybullet_signatures`): a name the function does not take fails argument
parsing with "'name' is an invalid keyword argument", before the function does anything; the
names asked about are every word of the quickstart, every keyword the wheel's scripts pass and
every parameter name of ours.
"""
import functools
import glob
import inspect
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

pb = pytest.importorskip("pybullet")

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tools"))
import pybullet_usage  # noqa: E402  (tools/ is not a package)

STATUSES = ("supported", "partial", "not supported")
ROW = re.compile(r"^\|\s*`(\w+)`\s*\|\s*(supported|partial|not supported)\s*\|", re.M)


def seed_text() -> str:
    paths = sorted(glob.glob("/work/shared/seeds/003_*.txt")) or sorted(
        glob.glob(str(REPO / "tests" / "data" / "seeds" / "003_*.txt")))
    if not paths:
        pytest.skip("the quickstart seed 003 is not on this machine")
    return Path(paths[0]).read_text()


def seed_functions() -> set:
    """pybullet functions the quickstart names: its camelCase words, its one-word headings
    (disconnect) and its calls (p.connect(...)) that are callables of pybullet."""
    text = seed_text()
    words = set(re.findall(r"\b[a-z]+[A-Z0-9]\w*\b", text))
    words |= set(re.findall(r"^([a-z]+)\s*$", text, flags=re.M))
    words |= set(re.findall(r"\.([a-z]\w*)\(", text))
    return {w for w in words if callable(getattr(pb, w, None)) and w != "error"}


def readme_section() -> str:
    """README's "The PyBullet API" section (up to the next level-2 heading)."""
    readme = (REPO / "README.md").read_text()
    start = readme.index("## The PyBullet API\n")
    end = readme.find("\n## ", start + 1)
    return readme[start:end if end > 0 else None]


def readme_table() -> dict:
    """function -> status from README's "The PyBullet API" section."""
    rows = ROW.findall(readme_section())
    names = [name for name, _ in rows]
    assert len(names) == len(set(names)), "a function is listed twice in README's table"
    return dict(rows)


# Run in a subprocess: pybullet's math helpers do not survive every value a probe gives them
# (getEulerFromQuaternion(0) crashes the interpreter), and pybullet must not be connected here.
PROBE = r"""
import json, re, sys
import pybullet as pb
MISSING = re.compile(r"missing required argument '(\w+)' \(pos (\d+)\)")
VALUES = ([0.0, 0.0, 0.0, 1.0], 0, "")   # parse as "O" (vectors), "i"/"d", "s"

def message(function, args, kwargs):
    try:
        function(*args, **kwargs)
        return ""
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"

def required(function):
    # PyBullet parses twice for some functions (current names, then legacy ones such as
    # bodyIndex): the positions are the same, so required arguments go positionally
    names, args = [], []
    while len(args) < 20:
        text = message(function, args, {})
        if "takes no keyword arguments" in message(function, args, {"physicsClientId": 0}):
            return None, None
        missing = MISSING.search(text)
        if missing is None or int(missing.group(2)) <= len(args):
            return names, args
        names.append(missing.group(1))
        for value in VALUES:
            after = message(function, args + [value], {})
            later = MISSING.search(after)
            if (later and int(later.group(2)) > len(args) + 1) or not after.startswith("TypeError"):
                break
        args.append(value)
    return names, args

def alias_of(function, names, args, candidate):
    # the required position `candidate` names when every required argument goes by keyword:
    # the first parse knows the current names (bodyUniqueId), the fallback the legacy ones
    for i in range(len(names)):
        kwargs = {n: a for j, (n, a) in enumerate(zip(names, args)) if j != i}
        text = message(function, [], {**kwargs, candidate: args[i]})
        if "invalid keyword argument" not in text and "missing required" not in text \
                and "given by name and position" not in text:
            return i
    return None

for line in sys.stdin:
    name, candidates, alias_candidates = json.loads(line)
    function = getattr(pb, name)
    names, args = required(function)
    if names is None:
        print(json.dumps([name, [], [], []]), flush=True)
        continue
    accepted = [c for c in candidates if c not in names
                and "is an invalid keyword argument" not in message(function, args, {c: 0})]
    aliases = [[n] for n in names]
    for c in alias_candidates:
        i = None if c in names or c in accepted else alias_of(function, names, args, c)
        if i is not None:
            aliases[i].append(c)
    if "is an invalid keyword argument" not in message(function, args, {"notAKeyword_": 0}):
        accepted = []       # it ignores keyword arguments (getDebugVisualizerCamera)
    print(json.dumps([name, names, aliases, accepted]), flush=True)
"""


@functools.lru_cache(maxsize=None)
def pybullet_signatures(names: tuple, candidates: frozenset,
                        alias_candidates: frozenset = frozenset()) -> dict:
    """name -> (required argument names in order, the names each required position also goes
    by, set of every accepted keyword name), asked of pybullet in a subprocess; a function
    that crashes the probe maps to None. Several functions take a required argument under two
    names (PyBullet parses twice: setJointMotorControl2(bodyUniqueId=...) and (bodyIndex=...));
    alias_candidates are the names tried as such."""
    result, remaining = {}, list(names)
    aliases = sorted(alias_candidates | {"bodyUniqueId", "bodyIndex", "objectUniqueId"})
    while remaining:
        lines = "".join(json.dumps([n, sorted(candidates), aliases]) + "\n" for n in remaining)
        done = subprocess.run([sys.executable, "-c", PROBE], input=lines, capture_output=True,
                              text=True, timeout=600)
        answered = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("[")]
        for name, required, names_of, accepted in answered:
            result[name] = (required, [set(a) for a in names_of],
                            set(accepted).union(*names_of))
        remaining = remaining[len(answered):]
        if remaining:                       # the next one crashed the probe
            assert done.returncode < 0, f"the probe failed:\n{done.stderr[-2000:]}"
            result[remaining.pop(0)] = None
    return result


@functools.lru_cache(maxsize=1)
def candidate_keywords() -> frozenset:
    """Every identifier the quickstart and the wheel's scripts use: a superset of pybullet's
    keyword names as far as its documents and users show them."""
    words = set(re.findall(r"\b[a-zA-Z_]\w*\b", seed_text()))
    for path in pybullet_usage.corpus_files():
        words |= set(re.findall(r"\b([a-zA-Z_]\w*)\s*=", path.read_text(errors="replace")))
    return frozenset(w for w in words if len(w) > 1)


def ours():
    return pytest.importorskip("sim_node.pybullet")


def test_every_quickstart_function_is_in_the_readme_table():
    table = readme_table()
    missing = sorted(seed_functions() - set(table))
    assert not missing, f"README's PyBullet table lacks these quickstart functions: {missing}"


def test_the_table_lists_only_pybullet_functions():
    unknown = sorted(n for n in readme_table() if not callable(getattr(pb, n, None)))
    assert not unknown, f"not functions of pybullet 3.2.7: {unknown}"


def test_supported_and_partial_rows_are_functions_of_sim_node_pybullet():
    module = ours()
    absent = sorted(n for n, status in readme_table().items()
                    if status != "not supported" and not callable(getattr(module, n, None)))
    assert not absent, f"README says supported/partial but sim_node.pybullet lacks: {absent}"


def test_the_quickstart_functions_sim_node_lacks_are_marked_not_supported():
    module, table = ours(), readme_table()
    unmarked = sorted(n for n in seed_functions()
                      if not hasattr(module, n) and table.get(n) != "not supported")
    assert not unmarked, f"absent from sim_node.pybullet and not marked 'not supported': {unmarked}"


def shared_functions() -> list:
    module = ours()
    return sorted(n for n in dir(pb) if not n.startswith("_") and n != "error"
                  and callable(getattr(pb, n)) and callable(getattr(module, n, None)))


# Differences of signature the other parts of issue 14 still have, reported to the lead; an
# entry that no longer fails must be removed (as a strict xfail would)
KNOWN_GAPS = {
}


def test_our_functions_take_pybullets_keyword_arguments():
    """For each function both have: pybullet's keyword names (those among the quickstart's and
    the scripts' words, and our own parameter names) are among ours, its required arguments
    lead our positional parameters in its order, and ours requires nothing pybullet does not."""
    module = ours()
    names = tuple(n for n in shared_functions() if n != "connect")   # probing would connect
    params = {n: inspect.signature(getattr(module, n)).parameters for n in names}
    candidates = candidate_keywords() | {p for ps in params.values() for p in ps}
    theirs = pybullet_signatures(names, candidates, frozenset(p for ps in params.values()
                                                              for p in ps))
    problems = {}
    for name in names:
        problems[name] = found = []
        if theirs[name] is None:
            found.append("pybullet's arguments could not be probed")
            continue
        required, aliases, keywords = theirs[name]
        ps = params[name]
        if any(p.kind is p.VAR_KEYWORD for p in ps.values()):
            found.append("takes **kwargs (PyBullet's names must be spelled out)")
            continue
        lacking = sorted(keywords - set(ps))
        if lacking:
            found.append(f"lacks pybullet's keyword(s) {lacking}")
        positional = [p.name for p in ps.values()
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        if len(positional) < len(required) or any(
                positional[i] not in aliases[i] for i in range(len(required))):
            found.append(f"positional parameters {positional[:len(required)]} should start "
                         f"with pybullet's required {[sorted(a) for a in aliases]}")
        extra = [p.name for p in ps.values() if p.default is p.empty
                 and p.kind is not p.VAR_POSITIONAL and p.name not in set().union(*aliases)]
        if extra:
            found.append(f"requires {extra}, which pybullet does not")
    unexpected = [f"{n}: {'; '.join(f)}" for n, f in problems.items() if f and n not in KNOWN_GAPS]
    assert not unexpected, "\n".join(unexpected)
    fixed = sorted(n for n in KNOWN_GAPS if n in problems and not problems[n])
    assert not fixed, f"fixed: remove {fixed} from KNOWN_GAPS (and README's table notes)"


def test_connect_takes_pybullets_arguments():
    module = ours()
    if not hasattr(module, "connect"):
        pytest.skip("sim_node.pybullet has no connect yet")
    params = inspect.signature(module.connect).parameters
    assert list(params)[0] == "method"
    # connect(method, key=..., hostName=..., port=..., options=...): measured on pybullet 3.2.7
    # with method DIRECT (its docstring's "hostname" is rejected as an invalid keyword)
    assert {"key", "options", "hostName", "port"} <= set(params)


def test_the_probe_finds_pybullets_keywords():
    """The probe itself, on keyword lists that pybullet's docstrings and the quickstart state."""
    names = ("loadURDF", "stepSimulation", "setJointMotorControl2", "getLinkState",
             "calculateInverseKinematics", "getEulerFromQuaternion", "getDebugVisualizerCamera")
    found = pybullet_signatures(names, candidate_keywords() | {"notAKeyword"})
    assert found["loadURDF"] == (["fileName"], [{"fileName"}], {
        "fileName", "basePosition", "baseOrientation", "useMaximalCoordinates", "useFixedBase",
        "flags", "globalScaling", "physicsClientId"})
    assert found["stepSimulation"] == ([], [], {"physicsClientId"})
    # 3.2.7 takes setJointMotorControl2's body as bodyUniqueId or (legacy) bodyIndex
    required, aliases, keywords = found["setJointMotorControl2"]
    assert required == ["bodyIndex", "jointIndex", "controlMode"]
    assert aliases == [{"bodyIndex", "bodyUniqueId"}, {"jointIndex"}, {"controlMode"}]
    assert {"maxVelocity", "positionGain", "bodyUniqueId"} <= keywords
    assert found["getLinkState"][2] == {"bodyUniqueId", "linkIndex", "computeLinkVelocity",
                                        "computeForwardKinematics", "physicsClientId"}
    assert {"maxNumIterations", "residualThreshold", "restPoses", "bodyUniqueId"} <= found[
        "calculateInverseKinematics"][2]
    assert found["getDebugVisualizerCamera"] == ([], [], set())
    assert found["getEulerFromQuaternion"] == (["quaternion"], [{"quaternion"}],
                                               {"quaternion", "physicsClientId"})


def test_readme_statuses_are_known_words():
    for line in readme_section().splitlines():
        if line.startswith("| `"):
            assert ROW.match(line), f"README table row with an unknown status: {line}"


def test_usage_ranking_counts_files_then_calls(tmp_path):
    """tools/pybullet_usage.py: one vote per file that calls a function, ties by total calls."""
    (tmp_path / "a.py").write_text("p.loadURDF('x')\np.loadURDF('y')\nself._p.stepSimulation()\n")
    (tmp_path / "b.py").write_text("bc.stepSimulation()\nloadURDF = 3\np.getNumJoints(0)\n")
    (tmp_path / "c.py").write_text("p.getNumJoints(1)\n# p.loadURDF is a word here\n")
    ranking = pybullet_usage.ranking(sorted(tmp_path.glob("*.py")),
                                     {"loadURDF", "stepSimulation", "getNumJoints"})
    assert ranking == [("getNumJoints", 2, 2), ("stepSimulation", 2, 2), ("loadURDF", 1, 2)]


def test_the_top_60_of_the_scripts_are_in_the_readme_table():
    top = [name for name, _, _ in pybullet_usage.ranking()[:60]]
    assert len(top) == 60 and top[0] == "loadURDF"
    missing = sorted(set(top) - set(readme_table()))
    assert not missing, f"README's PyBullet table lacks these most-used functions: {missing}"
