"""Connecting, stepping and the engine settings (PyBullet's connect ... setPhysicsEngineParameter).

A client is a WorldModel and its Simulator in this process (sim_node.pybullet.client). DIRECT
is the mode; GUI (GUI_MAIN_THREAD, GUI_SERVER) starts the live web viewer (sim_node.viewer,
found through the entry points of GUI_ENTRY_POINTS; it prints its URL) and sets client.viewer;
without one (not installed, or SIM_NODE_PYBULLET_GUI=headless) GUI runs headless after a
warning. SHARED_MEMORY_SERVER runs as DIRECT.
SHARED_MEMORY, UDP, TCP and the graphics-server modes connect to a physics server running
elsewhere, which sim_node does not have: connect returns -1 as PyBullet does when there is no
server to reach, so the usual ``if p.connect(p.SHARED_MEMORY) < 0: p.connect(p.GUI)`` ports.

PyBullet's defaults: gravity (0, 0, 0), fixed time step 1/240 s, no substeps.
"""
from __future__ import annotations

import os

from sim_node.pybullet import client as _client
from sim_node.pybullet.client import finite_float, finite_vector, get_client, warn_once
from sim_node.pybullet.errors import error
from sim_node.sim import bounds

__all__ = ["connect", "disconnect", "isConnected", "getConnectionInfo", "resetSimulation",
           "setGravity", "setTimeStep", "setPhysicsEngineParameter",
           "getPhysicsEngineParameters", "stepSimulation", "setRealTimeSimulation",
           "setAdditionalSearchPath", "setDefaultContactERP", "getAPIVersion", "setTimeOut",
           "syncBodyInfo"]

# PyBullet's connection modes (their values, as sim_node.pybullet.constants has them)
_GUI, _DIRECT, _SHARED_MEMORY, _UDP, _TCP = 1, 2, 3, 4, 5
_GUI_SERVER, _GUI_MAIN_THREAD, _SHARED_MEMORY_SERVER = 7, 8, 9
_LOCAL_GUI_MODES = (_GUI, _GUI_SERVER, _GUI_MAIN_THREAD)
_LOCAL_MODES = (_DIRECT, _SHARED_MEMORY_SERVER) + _LOCAL_GUI_MODES
API_VERSION = 202010061             # pybullet 3.2.7's getAPIVersion()
MAX_TIME_STEP = 1.0                 # [s] a step beyond this is not a physics step
MAX_SUB_STEPS = 1000

# setPhysicsEngineParameter: what maps, and what is accepted and ignored (README "The PyBullet
# API: bodies, joints, control (decisions)" says why for each)
_MAPPED = ("fixedTimeStep", "numSubSteps", "numSolverIterations", "solverResidualThreshold")
_IGNORED = ("useSplitImpulse", "splitImpulsePenetrationThreshold", "collisionFilterMode",
            "contactBreakingThreshold", "maxNumCmdPer1ms", "enableFileCaching",
            "restitutionVelocityThreshold", "erp", "contactERP", "frictionERP",
            "enableConeFriction", "deterministicOverlappingPairs", "allowedCcdPenetration",
            "jointFeedbackMode", "contactSlop", "enableSAT", "constraintSolverType",
            "globalCFM", "minimumSolverIslandSize", "reportSolverAnalytics",
            "warmStartingFactor", "sparseSdfVoxelSize", "numNonContactInnerIterations")


def connect(method, key=None, options="", hostName=None, port=None):
    """A new physics client; its id (0, 1, ...: the smallest free one), or -1 for the modes
    that reach an outside server (module docstring). `key`, `options`, `hostName`, `port`
    are accepted and ignored."""
    try:
        mode = int(method)
    except (TypeError, ValueError, OverflowError):
        raise error(f"connect: method must be a connection mode such as DIRECT, got "
                    f"{method!r}") from None
    if mode not in _LOCAL_MODES:
        if mode in (_SHARED_MEMORY, _UDP, _TCP) or 10 <= mode <= 20:
            return -1
        raise error(f"connect: unknown connection mode {mode}; sim_node runs DIRECT (2) and "
                    "GUI (1) in this process")
    from sim_node.pybullet import control

    client = _client.new_client(mode)
    client.options = str(options)
    client.pre_step.extend([control.apply_motors, control.sensors_before])
    client.post_step.extend([control.record_motors, control.sensors_after])
    if mode in _LOCAL_GUI_MODES and _attach_gui(client) is None:
        import warnings
        warnings.warn("connect: GUI is not available here; running DIRECT (no window)",
                      stacklevel=2)
    return client.id


# The live viewer of GUI mode is found through this entry-point group (sim_node.viewer
# declares it in setup.cfg) rather than imported: the viewer is a sibling layer of this one
GUI_ENTRY_POINTS = "sim_node.pybullet_gui"


def _attach_gui(client):
    """Attach a live viewer to a GUI client: the first entry point of GUI_ENTRY_POINTS whose
    attach(client) returns a hook (it sets client.viewer); None when there is none (viewer
    not installed, SIM_NODE_PYBULLET_GUI=headless) or it failed (then with a warning)."""
    from importlib.metadata import entry_points

    for entry in entry_points(group=GUI_ENTRY_POINTS):
        try:
            hook = entry.load()(client)
        except (ImportError, OSError, ValueError) as exc:
            import warnings
            warnings.warn(f"connect: the GUI viewer '{entry.name}' did not start ({exc})",
                          stacklevel=3)
            continue
        if hook is not None:
            return hook
    return None


def disconnect(physicsClientId=0):
    client = get_client(physicsClientId)
    if client.viewer is not None and hasattr(client.viewer, "close"):
        client.viewer.close()           # a GUI client's live viewer: its server and thread
        client.viewer = None
    _client.drop_client(client.id)


def isConnected(physicsClientId=0) -> int:
    try:
        get_client(physicsClientId)
    except error:
        return 0
    return 1


def getConnectionInfo(physicsClientId=0) -> dict:
    try:
        client = get_client(physicsClientId)
    except error:
        return {"isConnected": 0, "connectionMethod": 0}
    return {"isConnected": 1, "connectionMethod": client.mode}


def resetSimulation(flags=0, physicsClientId=0):
    """Remove every body (ids restart at 0) and saved states, gravity back to 0; the time step,
    substeps, search paths and step hooks stay, as in PyBullet."""
    client = get_client(physicsClientId)
    client.reset()
    client._rebuilt()


def setGravity(gravX, gravY, gravZ, physicsClientId=0):
    client = get_client(physicsClientId)
    g = finite_vector((gravX, gravY, gravZ), 3, "setGravity", "gravity")
    if abs(g).max() > bounds.MAX_GRAVITY:
        raise error(f"setGravity: each component must be within +-{bounds.MAX_GRAVITY:g} m/s^2, "
                    f"got {g.tolist()}")
    client.set_gravity(g)


def setTimeStep(timeStep, physicsClientId=0):
    client = get_client(physicsClientId)
    client.time_step = _time_step(timeStep, "setTimeStep")
    client.apply_time_step()


def _time_step(value, function: str) -> float:
    dt = finite_float(value, function, "timeStep")
    if not 0.0 < dt <= MAX_TIME_STEP:
        raise error(f"{function}: the time step must be in (0, {MAX_TIME_STEP:g}] s, got {dt}")
    return dt


def setPhysicsEngineParameter(fixedTimeStep=None, numSolverIterations=None,
                              useSplitImpulse=None, splitImpulsePenetrationThreshold=None,
                              numSubSteps=None, collisionFilterMode=None,
                              contactBreakingThreshold=None, maxNumCmdPer1ms=None,
                              enableFileCaching=None, restitutionVelocityThreshold=None,
                              erp=None, contactERP=None, frictionERP=None,
                              enableConeFriction=None, deterministicOverlappingPairs=None,
                              allowedCcdPenetration=None, jointFeedbackMode=None,
                              solverResidualThreshold=None, contactSlop=None, enableSAT=None,
                              constraintSolverType=None, globalCFM=None,
                              minimumSolverIslandSize=None, reportSolverAnalytics=None,
                              warmStartingFactor=None, sparseSdfVoxelSize=None,
                              numNonContactInnerIterations=None, physicsClientId=0):
    """fixedTimeStep (setTimeStep), numSubSteps (physics substeps per step), numSolverIterations
    (the contact solver's iteration cap), solverResidualThreshold (its tolerance) map; the
    other parameters concern Bullet's own solver: they are checked (finite numbers),
    accepted and ignored, with a one-time warning naming each. All arguments are checked
    before anything is applied."""
    client = get_client(physicsClientId)
    given = {k: v for k, v in locals().items()
             if k not in ("client", "physicsClientId") and v is not None}
    fn = "setPhysicsEngineParameter"
    updates = {}
    if fixedTimeStep is not None:
        updates["time_step"] = _time_step(fixedTimeStep, fn)
    if numSubSteps is not None:
        n = _integer(numSubSteps, fn, "numSubSteps")
        if not 0 <= n <= MAX_SUB_STEPS:
            raise error(f"{fn}: numSubSteps must be in [0, {MAX_SUB_STEPS}], got {n}")
        updates["num_sub_steps"] = n
    if numSolverIterations is not None:
        n = _integer(numSolverIterations, fn, "numSolverIterations")
        if not 1 <= n <= 100000:
            raise error(f"{fn}: numSolverIterations must be in [1, 100000], got {n}")
        updates["iterations"] = n
    if solverResidualThreshold is not None:
        tol = finite_float(solverResidualThreshold, fn, "solverResidualThreshold")
        if not tol > 0:
            raise error(f"{fn}: solverResidualThreshold must be > 0, got {tol}")
        updates["tolerance"] = tol
    ignored = {}
    for name in _IGNORED:
        if name in given:
            ignored[name] = finite_float(given[name], fn, name)
    # -- everything valid: apply
    if "time_step" in updates:
        client.time_step = updates["time_step"]
    if "num_sub_steps" in updates:
        client.num_sub_steps = updates["num_sub_steps"]
    client.apply_time_step()
    for key, name in (("iterations", "max_iterations"), ("tolerance", "tolerance")):
        if key in updates:
            client.solver_options[name] = updates[key]
            setattr(client.sim.engine, name, updates[key])
    client.engine_parameters.update(ignored)
    for name in ignored:
        warn_once(client, f"param:{name}", f"setPhysicsEngineParameter: {name} is a Bullet "
                  "solver setting with no counterpart in sim_node's engine; accepted and "
                  "ignored")


def _integer(value, function: str, what: str) -> int:
    x = finite_float(value, function, what)
    if x != int(x):
        raise error(f"{function}: {what} must be an integer, got {value!r}")
    return int(x)


def getPhysicsEngineParameters(physicsClientId=0) -> dict:
    """PyBullet's dict: fixedTimeStep, numSubSteps, numSolverIterations (the engine's
    contact-solver iteration cap), useRealTimeSimulation (as set; it has no effect, as in
    PyBullet's DIRECT mode), gravityAcceleration{X,Y,Z}, numNonContactInnerIterations."""
    client = get_client(physicsClientId)
    gx, gy, gz = client.gravity
    return {"fixedTimeStep": client.time_step, "numSubSteps": client.num_sub_steps,
            "numSolverIterations": int(client.sim.engine.max_iterations),
            "useRealTimeSimulation": int(client.real_time),
            "gravityAccelerationX": gx, "gravityAccelerationY": gy, "gravityAccelerationZ": gz,
            "numNonContactInnerIterations":
                int(client.engine_parameters.get("numNonContactInnerIterations", 1))}


def stepSimulation(physicsClientId=0):
    """One step of fixedTimeStep (in numSubSteps substeps when set); returns () as PyBullet."""
    get_client(physicsClientId).step()
    return ()


def setRealTimeSimulation(enableRealTimeSimulation, physicsClientId=0):
    """Recorded (getPhysicsEngineParameters reports it) and otherwise ignored, as PyBullet does
    in DIRECT mode: stepSimulation steps."""
    client = get_client(physicsClientId)
    flag = finite_float(enableRealTimeSimulation, "setRealTimeSimulation",
                        "enableRealTimeSimulation")
    client.real_time = bool(flag)


def setAdditionalSearchPath(path, physicsClientId=0):
    """A directory loadURDF (and the other loaders) search for relative file names, after the
    current directory; the latest added is searched first."""
    client = get_client(physicsClientId)
    if isinstance(path, bytes):
        path = path.decode()
    if not isinstance(path, (str, os.PathLike)):
        raise error(f"setAdditionalSearchPath: path must be a string, got {path!r}")
    path = os.fspath(path)
    if path in client.search_paths:
        client.search_paths.remove(path)
    client.search_paths.insert(0, path)


def setDefaultContactERP(defaultContactERP, physicsClientId=0):
    """Accepted and ignored (Bullet's contact error reduction; sim_node's contacts have their
    own boundary-layer stiffness), with a one-time warning."""
    client = get_client(physicsClientId)
    erp = finite_float(defaultContactERP, "setDefaultContactERP", "defaultContactERP")
    client.engine_parameters["defaultContactERP"] = erp
    warn_once(client, "param:defaultContactERP", "setDefaultContactERP: Bullet's contact ERP "
              "has no counterpart in sim_node's engine; accepted and ignored")


def getAPIVersion(physicsClientId=0) -> int:
    return API_VERSION


def setTimeOut(timeOutInSeconds, physicsClientId=0):
    """Accepted (a finite number) with no effect: every call runs in this process, none waits
    for a server (PyBullet's time-out is for its network and shared-memory clients)."""
    get_client(physicsClientId)
    finite_float(timeOutInSeconds, "setTimeOut", "timeOutInSeconds")


def syncBodyInfo(physicsClientId=0):
    """Nothing to synchronise: no other client changes this one's bodies."""
    get_client(physicsClientId)


def resolve_file(client, file_name, function: str) -> str:
    """An existing file: file_name as given (absolute, or relative to the current directory),
    else in the client's search paths (setAdditionalSearchPath); error listing where it
    looked."""
    if isinstance(file_name, bytes):
        file_name = file_name.decode()
    if not isinstance(file_name, (str, os.PathLike)):
        raise error(f"{function}: fileName must be a string, got {file_name!r}")
    name = os.fspath(file_name)
    if os.path.isfile(name):
        return name
    if not os.path.isabs(name):
        for base in client.search_paths:
            candidate = os.path.join(base, name)
            if os.path.isfile(candidate):
                return candidate
    where = ", ".join([os.getcwd()] + client.search_paths)
    raise error(f"{function}: cannot find '{name}' (looked in: {where}); "
                "setAdditionalSearchPath adds a directory")
