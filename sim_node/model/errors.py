"""Errors raised while loading robots, objects, terrains and world files, and the warning issued
when a harmless defect of a robot file was repaired."""
from __future__ import annotations


class _Located:
    """A message about a place in a model file: ``file:line: element: problem``.

    Attributes: ``source`` (file path or '<string>'), ``element`` (e.g. "joint 'elbow' <limit>"),
    ``problem`` and ``line`` (1-based, or None when unknown).
    """

    def __init__(self, source: str, element: str, problem: str, line: int | None = None):
        self.source = source
        self.element = element
        self.problem = problem
        self.line = line
        where = f"{source}:{line}" if line else source
        super().__init__(f"{where}: {element}: {problem}")


class ModelLoadError(_Located, ValueError):
    """A model file is malformed. The message names the file, the element and the problem."""


class URDFError(ModelLoadError):
    """A URDF file or string is malformed or unsupported."""


class WorldFileError(ModelLoadError):
    """A world file (YAML) is malformed."""


class URDFWarning(_Located, UserWarning):
    """A robot file had a harmless defect that was repaired while loading (README, "Loading robot
    files"). The message reads ``file:line: element: what was found and what was done``; the
    ``problem`` attribute says what was repaired and how."""
