"""Batch simulation: one world run from many initial conditions (seed 000's klampt.sim.batch).

    results = batchSim(world, 5.0, {"robots[0].config[0]": [0.1, 0.2]}, ["robots[0].config"])
    pairs = monteCarloSim(world, 5.0, {"robots[0].config[0]": sampler}, 100, returnItems)

A run: the initial condition's items (access paths, ``sim_node.sim.access``) are set on the
world, a Simulator is built from it, ``simInit(sim, *args)`` is called, and the simulation
advances in outer steps of ``simDt`` (``ceil(duration / simDt)`` of them), calling
``simTerm(sim, *args)`` (True ends the run) and ``simStep(sim, *args)`` before each step.
``args`` is the initial condition's special item 'args' (a tuple; empty by default). The world
is put back as it was after every run.

batchSim and monteCarloSim run the simulations in parallel by default: on a pool of local
processes forked once per call (they inherit the world, the initial conditions and the
callbacks, so closures and lambdas work), each taking chunks of runs; or, with ``cluster``, on a
Dask distributed cluster, to which the world, the conditions and the callbacks go once,
serialised with cloudpickle. Every run starts from the same world state (the one before the
call, set again through the model setters) whatever process runs it, so the results are the
same bit for bit serially, on the pool and on a cluster (except ``wall_clock_time``), and
they come back in input order.
"""
from __future__ import annotations

import csv
import math
import multiprocessing
import numbers
import os
import pickle
import time

import numpy as np
from tqdm import tqdm

from sim_node.model.world import WorldModel
from sim_node.sim import access
from sim_node.sim.simulator import Simulator

ARGS = "args"          # the special initial-condition item: arguments of the callbacks
CHUNKS_PER_WORKER = 4  # runs are handed out in about this many chunks per worker (balance)


# -- world state -----------------------------------------------------------------------------
def getWorldSimState(world: WorldModel) -> dict:
    """A copy of everything a Simulator takes from the world's state, as access items:
    rigid object transforms and velocities, robot configurations and velocities. (The
    complete simulation state is Simulator.getState().)"""
    state = {}
    for i in range(world.numRigidObjects()):
        state[f"rigidObjects[{i}].transform"] = world.rigidObject(i).getTransform()
        state[f"rigidObjects[{i}].velocity"] = world.rigidObject(i).getVelocity()
    for r in range(world.numRobots()):
        state[f"robots[{r}].config"] = world.robot(r).getConfig()
        state[f"robots[{r}].velocity"] = world.robot(r).getVelocity()
    return state


def setWorldSimState(world: WorldModel, state: dict):
    """Set the world items of `state` (from getWorldSimState, or any access items). All or
    nothing: an item that fails puts the others back and raises."""
    _set_items(world, state.items())


def _set_items(world: WorldModel, items):
    saved = getWorldSimState(world)
    try:
        for path, value in items:
            access.set_item(world, path, value)
    except Exception:
        for path, value in saved.items():
            access.set_item(world, path, value)
        raise


# -- one run ---------------------------------------------------------------------------------
def _default_return_items(world: WorldModel) -> list:
    """Everything that varies in a simulation of `world`: time, and per robot config,
    velocity, commanded config and velocity and torque, per rigid object transform and
    velocity."""
    items = ["time"]
    for r in range(world.numRobots()):
        items += [f"robots[{r}].{field}" for field in
                  ("config", "velocity", "commandedConfig", "commandedVelocity", "torque")]
    for i in range(world.numRigidObjects()):
        items += [f"rigidObjects[{i}].transform", f"rigidObjects[{i}].velocity"]
    return items


class _Run:
    """The settings of doSim; calling it runs one simulation of the world as it is after
    setting an initial condition on it (the caller puts the world back)."""

    def __init__(self, world, duration, returnItems, trace, simDt, simInit, simStep, simTerm):
        if not isinstance(world, WorldModel):
            raise TypeError(f"expected a WorldModel, got {type(world).__name__}")
        if not (isinstance(duration, numbers.Real) and 0.0 <= duration < math.inf):
            raise ValueError(f"duration must be a finite time >= 0 [s], got {duration!r}")
        if not (isinstance(simDt, numbers.Real) and 0.0 < simDt < math.inf):
            raise ValueError(f"simDt must be a positive finite time [s], got {simDt!r}")
        if returnItems is None:
            returnItems = _default_return_items(world)
        if isinstance(returnItems, str) or not all(isinstance(k, str) for k in returnItems):
            raise TypeError(f"returnItems must be a list of access paths (strings), got "
                            f"{returnItems!r}")
        for name, f in (("simInit", simInit), ("simStep", simStep), ("simTerm", simTerm)):
            if f is not None and not callable(f):
                raise TypeError(f"{name} must be callable or None, got {type(f).__name__}")
        self.world = world
        self.steps = max(0, math.ceil(duration / simDt - 1e-9))
        self.dt = float(simDt)
        self.items = list(returnItems)
        self.trace = bool(trace)
        self.init, self.step, self.term = simInit, simStep, simTerm

    def __call__(self, condition: dict) -> dict:
        if not isinstance(condition, dict):
            raise TypeError(f"an initial condition is a dict of access paths to values, got "
                            f"{type(condition).__name__}")
        args = condition.get(ARGS, ())
        if not isinstance(args, (tuple, list)):
            raise TypeError(f"initial condition '{ARGS}' must be a tuple of arguments for "
                            f"simInit/simStep/simTerm, got {type(args).__name__}")
        args = tuple(args)
        _set_items(self.world, ((k, v) for k, v in condition.items() if k != ARGS))
        start = time.perf_counter()
        sim = Simulator(self.world)
        if self.init is not None:
            self.init(sim, *args)
        readers = [(k, access.resolver(sim, k)) for k in self.items if k != "time"]
        if self.trace:
            result = self._traced(sim, args, readers)
        else:
            worst = self._simulate(sim, args)
            result = {k: read() for k, read in readers}
            result["status"] = sim.getStatusString(worst)
            result["time"] = sim.getTime()
        result["wall_clock_time"] = time.perf_counter() - start
        return result

    def _simulate(self, sim: Simulator, args: tuple) -> int:
        """Run the outer loop; the worst status code."""
        simulate, status, dt = sim.simulate, sim.getStatus, self.dt
        step, term = self.step, self.term
        worst = 0
        for _ in range(self.steps):
            if term is not None and term(sim, *args):
                return worst
            if step is not None:
                step(sim, *args)
            simulate(dt)
            s = status()
            if s > worst:
                worst = s
        return worst

    def _traced(self, sim: Simulator, args: tuple, readers: list) -> dict:
        """The outer loop recording every item at the start and after every step."""
        trace = {k: [read()] for k, read in readers}
        times, statuses = [sim.getTime()], [sim.getStatusString()]
        step, term = self.step, self.term
        for _ in range(self.steps):
            if term is not None and term(sim, *args):
                break
            if step is not None:
                step(sim, *args)
            sim.simulate(self.dt)
            for k, read in readers:
                trace[k].append(read())
            times.append(sim.getTime())
            statuses.append(sim.getStatusString())
        trace["status"] = statuses
        trace["time"] = times
        return trace


def doSim(world: WorldModel, duration: float, initialCondition: dict, returnItems=None,
          trace: bool = False, simDt: float = 0.01, simInit=None, simStep=None,
          simTerm=None) -> dict:
    """Simulate `world` from an initial condition for `duration` seconds.

    initialCondition: {access path: value} set on the world before the Simulator is built
        (e.g. {'robots[0].config[0]': 0.3}); the special item 'args' is a tuple passed to
        simInit(sim, *args), simStep(sim, *args) and simTerm(sim, *args).
    returnItems: access paths read from the Simulator at the end (default: everything that
        varies: time, per robot config, velocity,
        commandedConfig, commandedVelocity and torque, per rigid object transform and velocity).
    trace: if True, every item is a list of its values at the start (after simInit) and after
        every outer step, and 'status' and 'time' are lists too.
    simDt: the outer step [s] (the control period): simStep is called before each.
    simInit(sim, *args): configures the Simulator before the first step.
    simStep(sim, *args): called before every outer step (a controller).
    simTerm(sim, *args) -> bool: True ends the run before the next step.

    Returns {item: value} plus 'status' (the worst status string of the run), 'time' (the
    simulation time at the end [s]) and 'wall_clock_time' (the run's computing time [s]).
    The world is put back as it was before the call.
    """
    run = _Run(world, duration, returnItems, trace, simDt, simInit, simStep, simTerm)
    saved = getWorldSimState(world)
    try:
        return run(initialCondition)
    finally:
        setWorldSimState(world, saved)


# -- many runs -------------------------------------------------------------------------------
class _Job:
    """Runs of one _Run over a list of initial conditions, each from the world state `base`."""

    def __init__(self, run: _Run, conditions: list):
        self.run = run
        self.conditions = conditions
        self.base = getWorldSimState(run.world)

    def run_range(self, start: int, stop: int) -> list:
        """The results of runs start..stop-1; the world is left in the base state."""
        world = self.run.world
        results = []
        try:
            for i in range(start, stop):
                setWorldSimState(world, self.base)
                try:
                    results.append(self.run(self.conditions[i]))
                except Exception as e:
                    e.add_note(f"in batch run {i} of {len(self.conditions)}, initial condition "
                               f"{self.conditions[i]!r}")
                    raise
        finally:
            setWorldSimState(world, self.base)
        return results


def batchSim(world: WorldModel, duration: float, initialConditions, returnItems,
             simDt: float = 0.01, simInit=None, simStep=None, simTerm=None, *,
             processes: int | None = None, progress: bool = True, cluster=None) -> list:
    """doSim for each initial condition; the list of results, in input order.

    initialConditions: a list of initial-condition dicts, or a dict mapping items to lists of
        values (all of one length: run i takes element i of each).
    Other arguments as doSim's; and
    processes: local worker processes (None: os.cpu_count(); 1: serially in this process).
    progress: show a tqdm progress bar (only when stderr is a terminal).
    cluster: run on a Dask distributed cluster instead: a scheduler address ('tcp://...'), a
        cluster object or a distributed.Client.
    """
    conditions = _condition_list(initialConditions)
    run = _Run(world, duration, returnItems, False, simDt, simInit, simStep, simTerm)
    return _run_all(_Job(run, conditions), processes, progress, cluster, "batchSim")


def monteCarloSim(world: WorldModel, duration: float, initialConditionSamplers: dict, N: int,
                  returnItems, simDt: float = 0.01, simInit=None, simStep=None, simTerm=None,
                  *, processes: int | None = None, progress: bool = True,
                  cluster=None) -> list:
    """N runs from sampled initial conditions: a list of N (initialCondition, result) pairs.

    initialConditionSamplers: {item: sampler}, each sampler a zero-argument callable giving a
        value of the item ('args' included). They are called here, run after run, in dict
        order, so the conditions (and results) depend only on the samplers' state.
    Other arguments as batchSim's.
    """
    if not isinstance(initialConditionSamplers, dict):
        raise TypeError(f"initialConditionSamplers must be a dict of item -> sampler, got "
                        f"{type(initialConditionSamplers).__name__}")
    for item, sampler in initialConditionSamplers.items():
        if not callable(sampler):
            raise TypeError(f"the sampler of {item!r} must be a zero-argument callable, got "
                            f"{type(sampler).__name__}")
    if isinstance(N, bool) or not isinstance(N, int) or N < 0:
        raise ValueError(f"N must be a non-negative integer, got {N!r}")
    run = _Run(world, duration, returnItems, False, simDt, simInit, simStep, simTerm)
    conditions = [{item: sampler() for item, sampler in initialConditionSamplers.items()}
                  for _ in range(N)]
    results = _run_all(_Job(run, conditions), processes, progress, cluster, "monteCarloSim")
    return list(zip(conditions, results))


def _condition_list(initialConditions) -> list:
    if isinstance(initialConditions, dict):
        lengths = {k: len(v) for k, v in initialConditions.items()}
        if len(set(lengths.values())) > 1:
            raise ValueError(f"initialConditions: every item needs the same number of values, "
                             f"got {lengths}")
        n = next(iter(lengths.values()), 0)
        return [{k: v[i] for k, v in initialConditions.items()} for i in range(n)]
    conditions = list(initialConditions)
    for i, condition in enumerate(conditions):
        if not isinstance(condition, dict):
            raise TypeError(f"initialConditions[{i}]: expected a dict of access paths to "
                            f"values, got {type(condition).__name__}")
    return conditions


def _run_all(job: _Job, processes, progress: bool, cluster, what: str) -> list:
    n = len(job.conditions)
    if processes is None:
        processes = os.cpu_count() or 1
    if isinstance(processes, bool) or not isinstance(processes, int) or processes < 1:
        raise ValueError(f"processes must be a positive integer or None, got {processes!r}")
    if "fork" not in multiprocessing.get_all_start_methods():
        processes = 1       # the pool relies on fork to share the world and the callbacks
    with tqdm(total=n, desc=what, unit="sim", disable=None if progress else True) as bar:
        if cluster is not None:
            return _on_cluster(job, cluster, bar)
        chunks = _chunks(n, processes)
        if processes == 1 or len(chunks) <= 1:
            results = []
            for i in range(n):
                results += job.run_range(i, i + 1)
                bar.update(1)
            return results
        return _on_pool(job, chunks, min(processes, len(chunks)), bar)


def _chunks(n: int, workers: int) -> list:
    size = max(1, math.ceil(n / (CHUNKS_PER_WORKER * workers)))
    return [(start, min(n, start + size)) for start in range(0, n, size)]


def _collect(n: int, finished, bar) -> list:
    """Results in input order from (start, results of the chunk at start) as they finish."""
    results = [None] * n
    for start, chunk in finished:
        results[start:start + len(chunk)] = chunk
        bar.update(len(chunk))
    return results


def _on_pool(job: _Job, chunks: list, workers: int, bar) -> list:
    # forked workers inherit the job as their initializer's argument (fork pickles nothing)
    context = multiprocessing.get_context("fork")
    with context.Pool(workers, initializer=_start_worker, initargs=(job,)) as pool:
        return _collect(len(job.conditions), pool.imap_unordered(_fork_chunk, chunks), bar)


_worker_job: _Job | None = None     # in a pool worker: the job it runs chunks of


def _start_worker(job: _Job):
    global _worker_job
    _worker_job = job
    # one simulation per worker process: the engine's OpenMP batch kernels (a callback may use
    # them) and anything started from the worker run one thread each
    for variable in ("SIM_NODE_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[variable] = "1"


def _fork_chunk(bounds: tuple) -> tuple:
    start, stop = bounds
    return start, _worker_job.run_range(start, stop)


def _on_cluster(job: _Job, cluster, bar) -> list:
    import distributed

    payload = _dumps(job)
    own = not isinstance(cluster, distributed.Client)
    client = distributed.Client(cluster) if own else cluster
    futures = []
    try:
        shared = client.scatter(payload, broadcast=True)
        workers = max(1, sum(client.nthreads().values()))
        futures = [client.submit(_cluster_chunk, shared, start, stop, pure=False)
                   for start, stop in _chunks(len(job.conditions), workers)]
        finished = (f.result() for f in distributed.as_completed(futures))
        return _collect(len(job.conditions), finished, bar)
    finally:
        client.cancel(futures)
        if own:
            client.close()


def _cluster_chunk(payload: bytes, start: int, stop: int) -> tuple:
    # each chunk unpickles its own copy of the job (worker threads never share a world)
    return start, pickle.loads(payload).run_range(start, stop)


def _dumps(job: _Job) -> bytes:
    """The job pickled with cloudpickle (callbacks by value where they are not importable)."""
    import cloudpickle

    return cloudpickle.dumps(job, protocol=pickle.HIGHEST_PROTOCOL)


# -- CSV -------------------------------------------------------------------------------------
def _columns(state: dict) -> list:
    """Header names: the key for a number or string, key[i] per entry of its flat form."""
    header = []
    for key, value in state.items():
        if isinstance(value, (str, numbers.Number)) or (isinstance(value, np.ndarray)
                                                         and value.ndim == 0):
            header.append(key)
        else:
            header += [f"{key}[{i}]" for i in range(len(access.flatten(value)))]
    return header


def _row(state: dict) -> list:
    return [x for value in state.values() for x in access.flatten(value)]


def saveStateHeaderCSV(state: dict, f):
    """Write the CSV header line of a state dict to the text stream f: one column per number
    ('key', or 'key[i]' for entry i of the flat form of a vector, transform or pair; see
    sim_node.sim.access)."""
    csv.writer(f).writerow(_columns(state))


def saveStateCSV(state: dict, f):
    """Write a state dict as one CSV line (its values flattened, in key order) to f."""
    csv.writer(f).writerow(_row(state))


def saveStatesCSV(states: list, f):
    """Write a list of state dicts with the same items to f: the header, then one line each.
    Nothing is written if the states differ in their items or sizes."""
    states = list(states)
    if not states:
        return
    header = _columns(states[0])
    rows = []
    for i, state in enumerate(states):
        if list(state) != list(states[0]) or len(_columns(state)) != len(header):
            raise ValueError(f"saveStatesCSV: state {i} has items {list(state)} (sizes "
                             f"{len(_columns(state))}), state 0 {list(states[0])} ({len(header)})")
        rows.append(_row(state))
    writer = csv.writer(f)
    writer.writerow(header)
    writer.writerows(rows)


def saveStateTrajectoryCSV(stateTraj: dict, f):
    """Write a trajectory (dict of item -> list of values, as doSim(trace=True) returns) to f:
    a header, then one line per sample with its index 'iter' first. Entries that are not lists
    (such as 'wall_clock_time', one value per run) are not columns."""
    series = {k: v for k, v in stateTraj.items() if isinstance(v, list)}
    lengths = {k: len(v) for k, v in series.items()}
    if len(set(lengths.values())) > 1:
        raise ValueError(f"saveStateTrajectoryCSV: every item needs one value per sample, got "
                         f"lengths {lengths}")
    samples = [{"iter": i, **{k: v[i] for k, v in series.items()}}
               for i in range(next(iter(lengths.values()), 0))]
    saveStatesCSV(samples, f)
