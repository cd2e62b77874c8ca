"""Files named in a client's request (DESIGN.md §8): where they may be written, how they are read.

Written files (save_state to a file, a recording started by ~/record) go under the node's data
directory (parameter ``data_dir``; default ``$ROS_HOME/sim_node``, ``~/.ros/sim_node`` when
ROS_HOME is unset):
- a relative path resolves inside it; an absolute path must lie inside it;
- a path leaving it is refused: a ``..`` component, an absolute path elsewhere, a component
  that is a symlink resolving outside it (symlinks that stay inside are followed);
- names with control characters (U+0000-U+001F, U+007F-U+009F) are refused;
- an existing target that is not a regular file (a directory, FIFO, device, a symlink) is
  refused; missing parent directories are created inside it;
- files are written to a temporary file beside the target and renamed over it, so the final
  component is never followed and a reader never sees half a file.
Nothing is created when a request is refused. What the operator passes at start (``world:=``,
``record:=``) is not a client's request and may name any path.

Read files (restore_state from a file, spawn_entity by path): regular files only, at most
``max_read_size`` bytes (default 256 MB). The file is opened without blocking (a FIFO cannot
hold the open) and checked with fstat on the opened descriptor before anything is read, so
/dev/zero, a FIFO, a directory or a huge sparse file is refused at once. A relative path to
read resolves inside the data directory, like a written one.
"""
from __future__ import annotations

import errno
import os
import stat
import unicodedata
from pathlib import Path, PurePosixPath

DEFAULT_MAX_READ_SIZE = 256 * 1024 * 1024     # [bytes]
_TEMPORARY_PREFIX = ".sim_node-"
NAME_MAX, PATH_MAX = 255, 4096      # [bytes] Linux limits of a name and a path


class ClientFileError(ValueError):
    """A client's path that is refused or a file that cannot be used (the message says why)."""


def default_data_dir() -> Path:
    """$ROS_HOME/sim_node, or ~/.ros/sim_node when ROS_HOME is unset or empty."""
    ros_home = os.environ.get("ROS_HOME", "")
    return (Path(ros_home).expanduser() if ros_home else Path.home() / ".ros") / "sim_node"


def check_name(text: str, what: str):
    """ClientFileError if a client's path text is empty or holds control characters."""
    if not text:
        raise ClientFileError(f"{what}: the path is empty")
    for k, char in enumerate(text):
        if unicodedata.category(char) == "Cc":
            raise ClientFileError(f"{what}: '{text.encode('unicode_escape').decode()}' holds "
                                  f"the control character U+{ord(char):04X} at {k}; names "
                                  f"must not contain control characters")


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISLNK, "a symbolic link")):
        if test(mode):
            return name
    return "not a regular file"


class DataDir:
    """The node's data directory (module docstring). root: the directory (created with the
    first file written into it)."""

    def __init__(self, root):
        self.root = Path(root).expanduser().absolute()

    def _real_root(self) -> Path:
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise ClientFileError(f"the data directory {self.root} cannot be created: "
                                  f"{error.strerror}") from None
        return Path(os.path.realpath(self.root))

    def _components(self, text: str, what: str) -> list[str]:
        # the path's components relative to the data directory (lexically)
        check_name(text, what)
        path = PurePosixPath(text)
        if path.is_absolute():
            for root in {self.root, Path(os.path.realpath(self.root))}:
                if path.is_relative_to(root):
                    path = path.relative_to(root)
                    break
            else:
                raise ClientFileError(f"{what}: {text} is outside the data directory "
                                      f"{self.root}; give a path inside it or relative to it")
        parts = [p for p in path.parts if p != "."]
        if ".." in parts:
            raise ClientFileError(f"{what}: '{text}' contains '..'; paths must stay inside the "
                                  f"data directory {self.root}")
        if not parts:
            raise ClientFileError(f"{what}: '{text}' names the data directory itself, not a "
                                  f"file in it")
        for part in parts:      # refused before anything is created
            if len(os.fsencode(part)) > NAME_MAX - len(_TEMPORARY_PREFIX) - 12:
                raise ClientFileError(f"{what}: the name '{part[:40]}...' is too long (at "
                                      f"most {NAME_MAX - len(_TEMPORARY_PREFIX) - 12} bytes)")
        if len(os.fsencode(str(self.root))) + len(os.fsencode(text)) > PATH_MAX:
            raise ClientFileError(f"{what}: the path is too long (at most {PATH_MAX} bytes "
                                  f"with the data directory)")
        return parts

    def _parent(self, parts: list[str], what: str, text: str, create: bool) -> Path:
        """The real path of the directory holding parts[-1] inside the data directory, its
        missing components created when `create`."""
        real_root = self._real_root()
        current = real_root
        for part in parts[:-1]:
            candidate = current / part
            try:
                mode = os.lstat(candidate).st_mode
            except OSError as error:
                if error.errno != errno.ENOENT:     # a name too long, a loop, no permission
                    raise ClientFileError(f"{what}: cannot use {candidate}: "
                                          f"{error.strerror}") from None
                if not create:
                    raise ClientFileError(f"{what}: no directory {candidate}") from None
                try:
                    os.mkdir(candidate, 0o755)
                except OSError as error:
                    raise ClientFileError(f"{what}: cannot create {candidate}: "
                                          f"{error.strerror}") from None
                current = candidate
                continue
            if stat.S_ISLNK(mode):
                resolved = Path(os.path.realpath(candidate))
                if not resolved.is_relative_to(real_root):
                    raise ClientFileError(f"{what}: '{text}' goes through the symlink "
                                          f"{candidate}, which leads outside the data "
                                          f"directory {self.root}")
                try:
                    candidate, mode = resolved, os.stat(resolved).st_mode
                except OSError as error:
                    raise ClientFileError(f"{what}: the symlink {candidate} leads nowhere "
                                          f"usable: {error.strerror}") from None
            if not stat.S_ISDIR(mode):
                raise ClientFileError(f"{what}: {candidate} is {_kind(mode)}, not a directory")
            current = candidate
        return current

    def resolve(self, text: str, what: str) -> Path:
        """The real path a client's relative or absolute `text` names inside the data
        directory, for reading (nothing is created; the final component may be a symlink
        that stays inside)."""
        parts = self._components(text, what)
        parent = self._parent(parts, what, text, create=False)
        target = parent / parts[-1]
        if os.path.islink(target):
            resolved = Path(os.path.realpath(target))
            if not resolved.is_relative_to(self._real_root()):
                raise ClientFileError(f"{what}: {target} is a symlink leading outside the data "
                                      f"directory {self.root}")
            return resolved
        return target

    def write_file(self, text: str, data: bytes, what: str) -> Path:
        """Write `data` to the file a client's path names (module docstring); its path."""
        parts = self._components(text, what)
        parent = self._parent(parts, what, text, create=True)
        name = parts[-1]
        try:
            directory = os.open(parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError as error:
            raise ClientFileError(f"{what}: cannot open {parent}: {error.strerror}") from None
        temporary = f"{_TEMPORARY_PREFIX}{os.getpid()}-{name}"
        try:
            self._check_inside(directory, what)
            try:
                mode = os.stat(name, dir_fd=directory, follow_symlinks=False).st_mode
            except FileNotFoundError:
                mode = None
            if mode is not None and not stat.S_ISREG(mode):
                raise ClientFileError(f"{what}: {parent / name} exists and is {_kind(mode)}; "
                                      f"only a regular file is replaced")
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                         | os.O_CLOEXEC, 0o644, dir_fd=directory)
            try:
                with os.fdopen(fd, "wb", closefd=False) as out:
                    out.write(data)
                os.fsync(fd)
            finally:
                os.close(fd)
            # rename replaces the final component itself, never what a symlink points to
            os.replace(temporary, name, src_dir_fd=directory, dst_dir_fd=directory)
        except OSError as error:
            try:
                os.unlink(temporary, dir_fd=directory)
            except OSError:
                pass
            raise ClientFileError(f"{what}: cannot write {parent / name}: "
                                  f"{error.strerror or error}") from None
        finally:
            os.close(directory)
        return parent / name

    def new_directory(self, text: str, what: str) -> Path:
        """Create the directory a client's path names (it must not exist); its path."""
        parts = self._components(text, what)
        parent = self._parent(parts, what, text, create=True)
        target = parent / parts[-1]
        try:
            os.mkdir(target, 0o755)
        except FileExistsError:
            raise ClientFileError(f"{what}: {target} exists already (a new directory is "
                                  f"created, never reused)") from None
        except OSError as error:
            raise ClientFileError(f"{what}: cannot create {target}: {error.strerror}") from None
        return target

    def _check_inside(self, directory_fd: int, what: str):
        # the opened directory itself (whatever happened to its path since): inside the root
        real = Path(os.path.realpath(f"/proc/self/fd/{directory_fd}"))
        if not real.is_relative_to(self._real_root()):
            raise ClientFileError(f"{what}: the directory moved outside the data directory "
                                  f"{self.root}")


def read_regular_file(path, max_size: int, what: str) -> bytes:
    """The bytes of a regular file of at most max_size bytes (module docstring); otherwise
    ClientFileError, decided on the opened descriptor before reading."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as error:
        if error.errno == errno.ENOENT:
            raise ClientFileError(f"{what}: no file {path}") from None
        raise ClientFileError(f"{what}: cannot open {path}: {error.strerror}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ClientFileError(f"{what}: {path} is {_kind(info.st_mode)}; only regular "
                                  f"files are read")
        if info.st_size > max_size:
            raise ClientFileError(f"{what}: {path} has {info.st_size} bytes, more than the "
                                  f"limit of {max_size} (parameter max_read_size)")
        chunks, total = [], 0
        while True:
            chunk = os.read(fd, min(1 << 20, max_size + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > max_size:        # grew while being read
                raise ClientFileError(f"{what}: {path} has more than {max_size} bytes (the "
                                      f"limit, parameter max_read_size)")
        return b"".join(chunks)
    except OSError as error:
        raise ClientFileError(f"{what}: cannot read {path}: {error.strerror}") from None
    finally:
        os.close(fd)
