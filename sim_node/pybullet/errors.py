"""The exception every sim_node.pybullet function raises (PyBullet's ``pybullet.error``).

Named ``error`` as PyBullet's is, so ``except p.error`` ports unchanged; the message says what
was wrong and what is valid.
"""
__all__ = ["error"]


class error(Exception):     # noqa: N801 (PyBullet's name)
    """A PyBullet API call that cannot be done; the message says why."""
