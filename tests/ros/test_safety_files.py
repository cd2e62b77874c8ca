"""Files named by a client (sim_node/ros/client_files.py), in process: the data-directory rule
for written files (every escape the issue measured or a client can try: absolute paths,
``..``, symlinks out at any component, non-regular targets, control characters; nothing
created when refused) and the read rule (regular files under the size cap, decided on the
opened descriptor: /dev/zero, a FIFO with no writer, a directory, a huge sparse file).
Hypothesis: no client path text escapes the data directory or raises anything but
ClientFileError."""
from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sim_node.ros.client_files import (ClientFileError, DataDir, default_data_dir,
                                       read_regular_file)


@pytest.fixture
def place(tmp_path):
    """(the DataDir, an outside directory holding a victim file)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim").write_bytes(b"precious")
    return DataDir(tmp_path / "data"), outside


def tree(path: Path) -> set:
    return {str(p.relative_to(path)) for p in path.rglob("*")} if path.exists() else set()


def test_default_data_dir_follows_ros_home(monkeypatch, tmp_path):
    monkeypatch.setenv("ROS_HOME", str(tmp_path / "rh"))
    assert default_data_dir() == tmp_path / "rh" / "sim_node"
    monkeypatch.delenv("ROS_HOME")
    assert default_data_dir() == Path.home() / ".ros" / "sim_node"


def test_relative_and_inside_absolute_paths_are_written_in_the_data_directory(place):
    data, _ = place
    written = data.write_file("runs/one/state.bin", b"abc", "path")
    assert written == Path(os.path.realpath(data.root)) / "runs" / "one" / "state.bin"
    assert written.read_bytes() == b"abc"
    again = data.write_file(str(data.root / "runs" / "one" / "state.bin"), b"new", "path")
    assert again == written and written.read_bytes() == b"new"       # a regular file: replaced
    assert tree(data.root) == {"runs", "runs/one", "runs/one/state.bin"}   # no temporary left


@pytest.mark.parametrize("text, message", [
    ("{outside}/victim", "outside the data directory"),         # absolute elsewhere
    ("../outside/victim", "contains '..'"),
    ("a/../../outside/victim", "contains '..'"),
    ("bad\nname", "control character U+000A"),
    ("esc\x1b[31m", "control character U+001B"),
    ("nul\x00", "control character U+0000"),
    ("c1\x85", "control character U+0085"),
    ("", "the path is empty"),
    (".", "names the data directory itself"),
])
def test_paths_leaving_the_data_directory_or_with_control_characters_are_refused(
        place, text, message):
    data, outside = place
    with pytest.raises(ClientFileError, match=re.escape(message)):
        data.write_file(text.format(outside=outside), b"evil", "path")
    with pytest.raises(ClientFileError, match=re.escape(message)):
        data.new_directory(text.format(outside=outside), "directory")
    assert (outside / "victim").read_bytes() == b"precious" and tree(outside) == {"victim"}
    assert tree(data.root) == set()


def test_a_symlink_out_at_any_component_is_refused_and_nothing_is_written(place):
    data, outside = place
    data.root.mkdir(parents=True)
    (data.root / "out").symlink_to(outside)                     # a directory component
    (data.root / "deep").mkdir()
    (data.root / "deep" / "out").symlink_to(outside)
    (data.root / "victim_link").symlink_to(outside / "victim")  # the final component
    for text in ("out/victim", "out/new", "deep/out/new", "out/sub/new"):
        with pytest.raises(ClientFileError, match="leads outside the data directory"):
            data.write_file(text, b"evil", "path")
    with pytest.raises(ClientFileError, match="is a symbolic link"):
        data.write_file("victim_link", b"evil", "path")
    with pytest.raises(ClientFileError, match="leads outside"):
        data.new_directory("out/bag", "directory")
    assert (outside / "victim").read_bytes() == b"precious" and tree(outside) == {"victim"}
    with pytest.raises(ClientFileError, match="leading outside"):
        data.resolve("victim_link", "path")


def test_a_symlink_that_stays_inside_is_followed(place):
    data, _ = place
    (data.root / "real").mkdir(parents=True)
    (data.root / "alias").symlink_to(data.root / "real")
    written = data.write_file("alias/state.bin", b"x", "path")
    assert written.parent == Path(os.path.realpath(data.root / "real"))
    assert (data.root / "real" / "state.bin").read_bytes() == b"x"


def test_existing_non_regular_targets_are_refused(place):
    data, _ = place
    (data.root / "adir").mkdir(parents=True)
    os.mkfifo(data.root / "fifo")
    (data.root / "file").write_bytes(b"")
    with pytest.raises(ClientFileError, match="is a directory; only a regular file"):
        data.write_file("adir", b"x", "path")
    with pytest.raises(ClientFileError, match="is a FIFO; only a regular file"):
        data.write_file("fifo", b"x", "path")
    with pytest.raises(ClientFileError, match="is not a regular file, not a directory"):
        data.write_file("file/below", b"x", "path")
    with pytest.raises(ClientFileError, match="exists already"):
        data.new_directory("adir", "directory")
    assert tree(data.root) == {"adir", "fifo", "file"}


def test_reading_refuses_devices_fifos_directories_and_oversized_files_without_reading(
        tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)                         # no writer: a blocking open would wait forever
    sparse = tmp_path / "sparse.bin"
    with open(sparse, "wb") as out:
        out.truncate(300 * 1024 * 1024)     # 300 MB, no disk blocks
    for path, message in ((Path("/dev/zero"), "is a character device"),
                          (fifo, "is a FIFO"), (tmp_path, "is a directory"),
                          (sparse, "314572800 bytes, more than the limit of 268435456"),
                          (tmp_path / "missing", "no file")):
        with pytest.raises(ClientFileError, match=message):
            read_regular_file(path, 256 * 1024 * 1024, "path")
    small = tmp_path / "small"
    small.write_bytes(b"12345")
    assert read_regular_file(small, 5, "path") == b"12345"
    with pytest.raises(ClientFileError, match="5 bytes, more than the limit of 4"):
        read_regular_file(small, 4, "path")


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.one_of(st.sampled_from(["..", ".", "", "a", "out", "runs", "/", "~",
                                           "\x00", "\n", "x" * 300]),
                          st.text(max_size=12)), min_size=1, max_size=6),
       st.booleans())
def test_no_client_path_escapes_the_data_directory(place, parts, absolute):
    data, outside = place
    data.root.mkdir(parents=True, exist_ok=True)
    if not (data.root / "out").is_symlink():
        (data.root / "out").symlink_to(outside)
    text = ("/" if absolute else "") + "/".join(parts)
    real_root = Path(os.path.realpath(data.root))
    try:
        written = data.write_file(text, b"fuzz", "path")
    except ClientFileError:
        pass
    else:
        assert Path(os.path.realpath(written)).is_relative_to(real_root)
    assert (outside / "victim").read_bytes() == b"precious" and tree(outside) == {"victim"}
