"""Reset scopes: which part of a simulation a reset puts back (Simulator.reset(scope)).

Scopes are bits, combinable (the values of simulation_interfaces/ResetSimulation):
    SPAWNED  removes the entities added since the Simulator was made (spawned) and puts back
             the world's own entities removed since (in their initial state, with their
             plugins restarted; in world ID order after the remaining entities of their kind)
    STATE    puts every entity back to its initial state (added ones: as added), restarts
             controllers and plugins, keeps the time
    TIME     sets the time to 0 and restarts controllers and plugins (their schedules are in
             sim time), keeping poses and velocities, robots holding their current
             configuration
    TIME | STATE is Simulator.reset() without a scope. ALL = TIME | STATE | SPAWNED. Surface
    and padding settings are kept.
"""
from __future__ import annotations

import enum

from sim_node.model.robot import RobotModel
from sim_node.model.world import RigidObjectModel


class ResetScope(enum.IntFlag):
    TIME = 1
    STATE = 2
    SPAWNED = 4
    ALL = TIME | STATE | SPAWNED


def model_state(entity):
    """The state an entity's model holds (robots: q, v; rigid objects: R, t, w, v; terrains:
    None)."""
    if isinstance(entity, RobotModel):
        return entity.getConfig(), entity.getVelocity()
    if isinstance(entity, RigidObjectModel):
        return (*entity.getTransform(), *entity.getVelocity())
    return None


def restore_model_state(entity, state):
    if isinstance(entity, RobotModel):
        entity.setConfig(state[0])
        entity.setVelocity(state[1])
    elif isinstance(entity, RigidObjectModel):
        entity.setTransform(state[0], state[1])
        entity.setVelocity(state[2], state[3])


class WorldOrigin:
    """The world's own entities and their model states when a Simulator was made: what
    SPAWNED puts back."""

    def __init__(self, entities: list):
        self.entities = [(entity, model_state(entity)) for entity in entities]

    def contains(self, entity) -> bool:
        return any(e is entity for e, _ in self.entities)


def check_scope(scope) -> ResetScope:
    """scope as a ResetScope; ValueError naming unknown bits and the valid scopes."""
    value = int(scope)
    if value <= 0 or value & ~int(ResetScope.ALL):
        raise ValueError(f"reset scope {value} is not valid: TIME ({int(ResetScope.TIME)}), "
                         f"STATE ({int(ResetScope.STATE)}), SPAWNED ({int(ResetScope.SPAWNED)})"
                         f" or a sum of them (ALL = {int(ResetScope.ALL)})")
    return ResetScope(value)


def reset_scope(sim, scope, origin: WorldOrigin, entities: list):
    """Reset `sim` within `scope` (module docstring); origin: the world's own entities;
    entities: the world's entities now, in world ID order."""
    scope = check_scope(scope)
    if scope & ResetScope.SPAWNED:
        for entity in reversed([e for e in entities if not origin.contains(e)]):
            sim.removeEntity(entity)
        present = {id(e) for e in entities}
        for entity, state in origin.entities:
            if id(entity) not in present:
                restore_model_state(entity, state)
                sim.addEntity(entity)
    if scope & ResetScope.STATE and scope & ResetScope.TIME:
        sim.reset()
    elif scope & ResetScope.STATE:
        t = sim.getTime()
        sim.reset()
        sim.setTime(t)
    elif scope & ResetScope.TIME:
        reset_time(sim)


def reset_time(sim):
    """Time 0, controllers and plugins restarted; poses and velocities kept, robots holding
    their configuration."""
    world = sim.getWorld()
    robots = [(world.robot(r), sim.getActualConfig(r), sim.getActualVelocity(r))
              for r in range(world.numRobots())]
    objects = [(obj, body.getObjectTransform(), body.getVelocity())
               for obj, body in ((world.rigidObject(i), sim.body(world.rigidObject(i)))
                                 for i in range(world.numRigidObjects()))]
    sim.reset()
    for robot, q, v in robots:
        sim.setActualConfig(robot, q)
        sim.setActualVelocity(robot, v)
        sim.controller(robot).setPIDCommand(q)
    for obj, transform, velocity in objects:
        body = sim.body(obj)
        body.setObjectTransform(*transform)
        body.setVelocity(*velocity)
