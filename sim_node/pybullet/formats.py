"""loadSDF and loadMJCF: every model of an SDF or MJCF file as a body (PyBullet's API).

The files are read by sim_node.model.sdf and sim_node.model.mjcf (README "SDF and MJCF
(decisions)"); each model becomes a RobotModel through the world's one robot builder and is
added by the client. Nothing stays added when any model of the file fails to load. Bodies
start with every joint at 0, as in PyBullet (even outside a joint's limits: ant.xml's ankles).
"""
from __future__ import annotations

import math

import numpy as np

from sim_node.model.errors import ModelLoadError
from sim_node.model.mjcf import parse_mjcf
from sim_node.model.sdf import parse_sdf
from sim_node.pybullet.client import finite_float, get_client, warn_once
from sim_node.pybullet.connection import resolve_file
from sim_node.pybullet.errors import error

__all__ = ["loadSDF", "loadMJCF"]

MAX_GLOBAL_SCALING = 1e3        # as loadURDF


def loadSDF(sdfFileName, useMaximalCoordinates=0, globalScaling=1.0, physicsClientId=0):
    """Load every <model> of an SDF file; returns a tuple of body unique ids, one per model in
    document order. `globalScaling` multiplies every length (masses kept, inertias times its
    square, prismatic limits kept, as Bullet's importer); `useMaximalCoordinates` is accepted
    and ignored (sim_node's bodies are always reduced-coordinate trees)."""
    fn = "loadSDF"
    client = get_client(physicsClientId)
    path = resolve_file(client, _file_name(sdfFileName, fn, "sdfFileName"), fn)
    maximal = _flag_int(useMaximalCoordinates, fn, "useMaximalCoordinates")
    scale = finite_float(globalScaling, fn, "globalScaling")
    if not 0.0 < scale <= MAX_GLOBAL_SCALING:
        raise error(f"{fn}: globalScaling must be in (0, {MAX_GLOBAL_SCALING:g}], got {scale}")
    try:
        parsed = parse_sdf(path, scale)
    except ModelLoadError as exc:
        raise error(f"{fn}: {exc}") from None
    if maximal:
        warn_once(client, "useMaximalCoordinates", f"{fn}: useMaximalCoordinates is accepted "
                  "and ignored (sim_node simulates reduced coordinates)")
    models = [(body.urdf, body.fixed_base, body.R, body.p, {}) for body in parsed.bodies]
    return _add_all(client, fn, path, models, _sdf_limits,
                    dict(globalScaling=scale, maximal_coordinates=bool(maximal)))


def loadMJCF(mjcfFileName, flags=0, physicsClientId=0):
    """Load every top-level <body> and <worldbody> <geom> of an MJCF file; returns a tuple of
    body unique ids in document order. Masses as PyBullet computes them (every geom 1000 kg/m³;
    README "SDF and MJCF (decisions)"); links whose contype and conaffinity are 0 collide with
    nothing, as in PyBullet. `flags` (URDF_* values) are accepted; none changes what
    sim_node loads from an MJCF file."""
    fn = "loadMJCF"
    client = get_client(physicsClientId)
    path = resolve_file(client, _file_name(mjcfFileName, fn, "mjcfFileName"), fn)
    flags = _flag_int(flags, fn, "flags")
    try:
        parsed = parse_mjcf(path, pybullet_masses=True)
    except ModelLoadError as exc:
        raise error(f"{fn}: {exc}") from None
    models = [(body.urdf, body.fixed_base, body.R, body.p, body.collision_filters)
              for body in parsed.bodies]
    return _add_all(client, fn, path, models, _mjcf_limits, dict(flags=flags))


def _add_all(client, fn: str, path: str, models, limits_of, info: dict) -> tuple:
    """Build every model, then add them all; on any failure nothing stays added."""
    taken, built = [], []
    for urdf, fixed_base, R, p, filters in models:
        try:
            robot = client.world.makeRobot(urdf, fixed_base, R=R, t=p, taken=taken)
        except (ModelLoadError, ValueError) as exc:
            raise error(f"{fn}: '{path}': model '{urdf.name}': {exc}") from None
        _zero_joints(robot)
        taken.append(robot.getName())
        built.append((robot, urdf, filters))
    uids = []
    try:
        for robot, urdf, filters in built:
            uid = client.add_body(robot, name=urdf.name.encode("utf-8"), fileName=path,
                                  joint_limits=limits_of(urdf), **info)
            uids.append(uid)
            _apply_filters(client, uid, filters)
    except BaseException:
        for uid in reversed(uids):
            client.remove_body(uid)
        raise
    return tuple(uids)


def _zero_joints(robot):
    """Every scalar joint at 0, PyBullet's initial state (the builder clamps 0 into limits)."""
    s = robot.structure
    q = np.array(robot.getConfig(), dtype=float)
    for name in s.joint_names:
        if s.joint_type[name] in ("revolute", "continuous", "prismatic"):
            q[s.joint_q_index[name]] = 0.0
    robot.setConfig(q)


def _mjcf_limits(urdf) -> dict:
    """getJointInfo's (lower, upper, maxForce, maxVelocity) as PyBullet reports an MJCF joint:
    the range, or (1, 0) without one; no force or velocity limit (0, 0)."""
    out = {}
    for name, joint in urdf.joints.items():
        if joint.limit is None:
            continue
        lower, upper = joint.limit.lower, joint.limit.upper
        out[name] = ((lower, upper) if math.isfinite(lower) else (1.0, 0.0)) + (0.0, 0.0)
    return out


def _sdf_limits(urdf) -> dict:
    """As PyBullet reports an SDF joint: its <limit> values, (0, -1) without position limits,
    0 for an absent effort or velocity."""
    out = {}
    for name, joint in urdf.joints.items():
        if joint.limit is None:
            continue
        lim = joint.limit
        position = (lim.lower, lim.upper) if math.isfinite(lim.lower) else (0.0, -1.0)
        out[name] = position + tuple(x if math.isfinite(x) else 0.0
                                     for x in (lim.effort, lim.velocity))
    return out


def _apply_filters(client, uid: int, filters: dict):
    """contype / conaffinity of 0 and 0 as a collision filter group / mask of 0 / 0 (the link
    collides with nothing, in PyBullet, MuJoCo and sim_node alike), through the public
    setCollisionFilterGroupMask. Other values are not applied: PyBullet lets links a, b
    collide when group_a & mask_b OR group_b & mask_a (checked on PyBullet 3.2.7), sim_node's
    filter needs both (AND); against bodies with default filters both rules agree with no
    filter, while PyBullet's mapping under the AND rule would drop contacts PyBullet keeps
    (its ant, contype 1 / conaffinity 0, would fall through the floor)."""
    silent = {link for link, (group, mask) in filters.items() if group == 0 and mask == 0}
    if not silent:
        return
    from sim_node.pybullet import queries

    set_mask = getattr(queries, "setCollisionFilterGroupMask", None)
    if set_mask is None:
        warn_once(client, "loadMJCF-filters", "loadMJCF: setCollisionFilterGroupMask is not "
                  "available yet: links with contype = conaffinity = 0 still collide")
        return
    body = client.body(uid)
    for k in range(-1, body.num_joints):
        if body.link(k).getName() in silent:
            set_mask(uid, k, 0, 0, physicsClientId=client.id)


def _file_name(value, function: str, what: str):
    """A file name as resolve_file takes it; error for bytes that are not UTF-8 and for NUL
    characters (the operating system refuses them)."""
    if isinstance(value, bytes):
        try:
            value = value.decode("utf-8")
        except UnicodeDecodeError:
            raise error(f"{function}: {what} must be UTF-8 text, got {value!r}") from None
    if isinstance(value, str) and "\x00" in value:
        raise error(f"{function}: {what} contains a NUL character")
    return value


def _flag_int(value, function: str, what: str) -> int:
    if isinstance(value, (bool, int, np.integer)):
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    raise error(f"{function}: {what} must be an integer, got {value!r}")
