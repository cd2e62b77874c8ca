"""Saved simulation states of save_state / restore_state: the bytes of Simulator.getState(),
kept in memory by an id string and/or written to a file.

Memory: one state per id (saving again under an id replaces it), held until the node exits; at
most MAX_SAVED_STATES ids (a client cannot fill the node's memory with states).
Files: exactly the state bytes (what Simulator.setState reads), written under the node's data
directory by the rules of sim_node/ros/client_files.py (relative paths inside it; paths leaving
it, control characters and existing non-regular files refused; a temporary file renamed over
the target). Restoring reads a regular file of at most max_read_size bytes: a relative path
inside the data directory, an absolute one anywhere.
"""
from __future__ import annotations

import threading

from sim_node.ros.client_files import (DEFAULT_MAX_READ_SIZE, ClientFileError, DataDir,
                                       check_name, read_regular_file)

MAX_SAVED_STATES = 100
MAX_ID_LENGTH = 256         # [characters]


class StateStoreError(ValueError):
    """A save or load that cannot be done (the message says why)."""


def _check_id(state_id: str):
    if len(state_id) > MAX_ID_LENGTH:
        raise StateStoreError(f"id: {len(state_id)} characters, more than {MAX_ID_LENGTH}")


class StateStore:
    """data_dir: the DataDir files are written in; max_read_size [bytes] of a state file."""

    def __init__(self, data_dir: DataDir, max_read_size: int = DEFAULT_MAX_READ_SIZE):
        self._states: dict[str, bytes] = {}
        self._lock = threading.Lock()
        self.data_dir = data_dir
        self.max_read_size = max_read_size

    def save(self, state: bytes, state_id: str = "", path: str = "") -> str:
        """Keep `state` under state_id and/or write it to path (at least one non-empty);
        the absolute path written ('' for none)."""
        if not state_id and not path:
            raise StateStoreError("give an id (kept in memory) and/or a path (a file) to save to")
        if state_id:
            _check_id(state_id)
            with self._lock:
                if state_id not in self._states and len(self._states) >= MAX_SAVED_STATES:
                    raise StateStoreError(f"{MAX_SAVED_STATES} states are kept already (the "
                                          f"limit): save under one of their ids to replace it")
        written = ""
        if path:
            try:
                written = str(self.data_dir.write_file(path, state, "path"))
            except ClientFileError as error:
                raise StateStoreError(str(error)) from None
        if state_id:
            with self._lock:
                self._states[state_id] = state
        return written

    def load(self, state_id: str = "", path: str = "") -> bytes:
        """The state saved under state_id, or read from path (exactly one non-empty)."""
        if bool(state_id) == bool(path):
            raise StateStoreError("give either an id or a path to restore from, not "
                                  f"{'both' if state_id else 'neither'}")
        if state_id:
            with self._lock:
                if state_id not in self._states:
                    known = sorted(self._states)
                    shown = ", ".join(f"'{k}'" for k in known[:20]) or "none"
                    more = f" and {len(known) - 20} more" if len(known) > 20 else ""
                    raise StateStoreError(f"no state saved under id '{state_id[:MAX_ID_LENGTH]}'"
                                          f"; ids: {shown}{more}")
                return self._states[state_id]
        try:
            check_name(path, "path")
            target = path if path.startswith("/") else self.data_dir.resolve(path, "path")
            return read_regular_file(target, self.max_read_size, "path")
        except ClientFileError as error:
            raise StateStoreError(str(error)) from None
