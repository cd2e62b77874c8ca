"""PyBullet's getCameraImage on sim_node's CPU renderer (sim_node/sim/camera.py, the engine's
rasterizer): the same matrices, buffers and segmentation codes, with body unique ids and
PyBullet link indices.

Returns (width, height, rgba (h, w, 4) uint8, depth (h, w) float32, segmentation (h, w) int32)
as numpy arrays, as PyBullet 3.2.7 built with numpy does (pybullet.isNumpyEnabled() is 1 in
the wheel). The depth buffer is OpenGL's non-linear one: far * near / (far - (far - near) * d)
gives metres; 1.0 where nothing is seen. Segmentation: the body unique id, or uid +
((linkIndex + 1) << 24) with ER_SEGMENTATION_MASK_OBJECT_AND_LINKINDEX; -1 background.
One renderer serves both ER_TINY_RENDERER and ER_BULLET_HARDWARE_OPENGL; lightColor,
lightDistance, shadow, lightSpecularCoeff and projective textures are accepted and not drawn
(flat shading without specular or shadows, README "Camera (CPU renderer)").
"""
from __future__ import annotations

import numpy as np

from sim_node.pybullet.client import get_client
from sim_node.pybullet.errors import error
from sim_node.pybullet.queries import integer, number, vec
from sim_node.sim import camera as _camera

__all__ = ["getCameraImage", "isNumpyEnabled"]

_OBJECT_AND_LINKINDEX = 1          # pybullet.ER_SEGMENTATION_MASK_OBJECT_AND_LINKINDEX
_NO_SEGMENTATION_MASK = 4          # pybullet.ER_NO_SEGMENTATION_MASK
_LINK_SHIFT = 24
_DEFAULT_AMBIENT, _DEFAULT_DIFFUSE = 0.6, 0.35
# PyBullet's camera when getCameraImage gets no matrices (DIRECT: TinyRenderer's own camera,
# 1.5 m from the origin at yaw -80, pitch -10 degrees, z up; 90 degrees vertical, near 0.01,
# far 1000, aspect 640 / 480 whatever the image size). Measured on pybullet 3.2.7: these
# matrices give its default image pixel for pixel, at 320 x 240, 200 x 100 and 100 x 200.
_DEFAULT_VIEW = _camera.view_matrix_from_yaw_pitch_roll((0.0, 0.0, 0.0), 1.5, -80.0, -10.0,
                                                         0.0, 2)
_DEFAULT_PROJECTION = _camera.projection_matrix_fov(90.0, 640.0 / 480.0, 0.01, 1000.0)


def _segment_table(client) -> dict:
    """{renderer code (entity + ((RobotModel link + 1) << 24)): (uid, PyBullet link)}."""
    table = {}
    for uid, body in client.bodies.items():
        robot = body.entity
        entity = robot.getID()
        for link in robot.links():
            table[entity + ((link.getIndex() + 1) << _LINK_SHIFT)] = \
                client.locate(link.getID())
        table.setdefault(entity, (uid, -1))
    return table


def _segmentation(client, codes: np.ndarray, with_links: bool) -> np.ndarray:
    table = _segment_table(client)
    values, inverse = np.unique(codes, return_inverse=True)
    mapped = np.empty(len(values), dtype=np.int64)
    for k, code in enumerate(values):
        if code < 0 or int(code) not in table:
            mapped[k] = -1
            continue
        uid, link = table[int(code)]
        mapped[k] = uid + ((link + 1) << _LINK_SHIFT) if with_links else uid
    return mapped[inverse].reshape(codes.shape).astype(np.int32)


def getCameraImage(width, height, viewMatrix=None, projectionMatrix=None, lightDirection=None,
                   lightColor=None, lightDistance=None, shadow=None, lightAmbientCoeff=None,
                   lightDiffuseCoeff=None, lightSpecularCoeff=None, renderer=None, flags=0,
                   projectiveTextureView=None, projectiveTextureProj=None, physicsClientId=0):
    """Renders the bodies seen through viewMatrix / projectionMatrix (16 floats each,
    column-major, as computeViewMatrix / computeProjectionMatrixFOV give; both or neither:
    without the pair, PyBullet's DIRECT default camera, see _DEFAULT_VIEW) into a width x height image: (width, height, rgba, depth buffer,
    segmentation), see the module docstring. width, height in [1, 16384] and at most 2**24
    pixels."""
    fn = "getCameraImage"
    client = get_client(physicsClientId)
    w = integer(width, fn, "width")
    h = integer(height, fn, "height")
    if not (1 <= w <= 16384 and 1 <= h <= 16384 and w * h <= 1 << 24):
        raise error(f"{fn}: image {w} x {h}: width and height must be in [1, 16384] and "
                    f"width * height at most {1 << 24} pixels (4096 x 4096)")
    view = None if viewMatrix is None else vec(viewMatrix, 16, fn, "viewMatrix", 1e9)
    projection = None if projectionMatrix is None else \
        vec(projectionMatrix, 16, fn, "projectionMatrix", 1e12)
    if view is None or projection is None:
        # PyBullet uses the matrices only as a pair: a lone one is ignored
        view, projection = _DEFAULT_VIEW, _DEFAULT_PROJECTION
    light = None if lightDirection is None else vec(lightDirection, 3, fn, "lightDirection")
    if light is not None and not np.any(light):
        light = None            # PyBullet: a zero direction means the default light
    ambient = _DEFAULT_AMBIENT if lightAmbientCoeff is None else \
        number(lightAmbientCoeff, fn, "lightAmbientCoeff", 1e3)
    diffuse = _DEFAULT_DIFFUSE if lightDiffuseCoeff is None else \
        number(lightDiffuseCoeff, fn, "lightDiffuseCoeff", 1e3)
    for name, value, n in (("lightColor", lightColor, 3),
                           ("projectiveTextureView", projectiveTextureView, 16),
                           ("projectiveTextureProj", projectiveTextureProj, 16)):
        if value is not None:
            vec(value, n, fn, name)
    for name, value in (("lightDistance", lightDistance), ("shadow", shadow),
                        ("lightSpecularCoeff", lightSpecularCoeff)):
        if value is not None:
            number(value, fn, name)
    if renderer is not None:
        integer(renderer, fn, "renderer")
    flags = 0 if flags is None else integer(flags, fn, "flags")
    try:
        _, _, rgba, depth, codes = _camera.get_camera_image(
            client.sim, w, h, view, projection, lightDirection=light,
            lightAmbientCoeff=ambient, lightDiffuseCoeff=diffuse,
            flags=(flags & _NO_SEGMENTATION_MASK) | _OBJECT_AND_LINKINDEX)
    except ValueError as e:
        raise error(f"{fn}: {e}") from None
    if codes is None:
        segmentation = np.full((h, w), -1, dtype=np.int32)
    else:
        segmentation = _segmentation(client, codes, bool(flags & _OBJECT_AND_LINKINDEX))
    return w, h, rgba, depth, segmentation


def isNumpyEnabled(physicsClientId=0) -> int:
    """1: getCameraImage returns numpy arrays, as the pybullet wheel built with numpy does."""
    return 1
