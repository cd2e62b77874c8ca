"""Saved simulation states of save_state / restore_state: the bytes of Simulator.getState(),
kept in memory by an id string and/or written to a file.

Memory: one state per id (saving again under an id replaces it), held until the node exits.
Files: exactly the state bytes (what Simulator.setState reads), written to a temporary file
beside the target and renamed over it, so a reader never sees half a state. Relative paths are
relative to the node's working directory.
"""
from __future__ import annotations

import os
import threading
from pathlib import Path


class StateStoreError(ValueError):
    """A save or load that cannot be done (the message says why)."""


class StateStore:
    def __init__(self):
        self._states: dict[str, bytes] = {}
        self._lock = threading.Lock()

    def save(self, state: bytes, state_id: str = "", path: str = ""):
        """Keep `state` under state_id and/or write it to path (at least one non-empty)."""
        if not state_id and not path:
            raise StateStoreError("give an id (kept in memory) and/or a path (a file) to save to")
        if path:
            target = Path(path).expanduser()
            temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
            try:
                temporary.write_bytes(state)
                os.replace(temporary, target)
            except OSError as error:
                temporary.unlink(missing_ok=True)
                raise StateStoreError(f"cannot write the state to {target}: {error}") from None
        if state_id:
            with self._lock:
                self._states[state_id] = state

    def load(self, state_id: str = "", path: str = "") -> bytes:
        """The state saved under state_id, or read from path (exactly one non-empty)."""
        if bool(state_id) == bool(path):
            raise StateStoreError("give either an id or a path to restore from, not "
                                  f"{'both' if state_id else 'neither'}")
        if state_id:
            with self._lock:
                if state_id not in self._states:
                    known = ", ".join(f"'{k}'" for k in sorted(self._states)) or "none"
                    raise StateStoreError(f"no state saved under id '{state_id}'; ids: {known}")
                return self._states[state_id]
        try:
            return Path(path).expanduser().read_bytes()
        except OSError as error:
            raise StateStoreError(f"cannot read a state from {path}: {error}") from None
