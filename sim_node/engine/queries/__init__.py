"""Queries on the scene: they read a SceneModel and the SceneData a step (or a refresh) left,
and write neither; each module one query, each with an ``out=`` form where callers poll.

    contacts.pyx   the last step's contacts, body pairs and contact feedback as arrays
    aabb.pyx       the bodies' world bounding boxes
    render.pyx     z-buffer rasterization of instanced triangles (the camera's RGB, depth, ids)

Ray casts, closest points and rendering belong here too (DESIGN.md §1: raycast, distance,
render); sensor emulators reach them through the Simulator, never directly.
"""
