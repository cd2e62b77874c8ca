"""The exception every sim_node.pybullet function raises (PyBullet's ``pybullet.error``), and
the warning stepSimulation gives when the physics cannot advance.

Named ``error`` as PyBullet's is, so ``except p.error`` ports unchanged; the message says what
was wrong and what is valid.
"""
__all__ = ["error", "PhysicsWarning"]


class error(Exception):     # noqa: N801 (PyBullet's name)
    """A PyBullet API call that cannot be done; the message says why."""


class PhysicsWarning(RuntimeWarning):
    """stepSimulation could not advance the physics (the engine's STATUS_UNSTABLE: PyBullet has
    no status to report it through); the message says when and where."""
