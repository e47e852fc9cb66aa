"""The atomic writer survives a power loss, not only a crash of the process: what it renames
onto the target is on the disk before the rename, and the rename is on the disk before the
writer returns (``io/atomic.py``). A power loss cannot be staged here, so these tests record
the order in which the writer calls ``os.fsync`` and ``os.replace``, naming each flushed
descriptor by the file or folder it is open on. A writer killed mid-way leaves its temporary
beside the target: the next writer of that target cleans it up."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from onnx_upsample import UpsampleError
from onnx_upsample.io.atomic import atomic_path, copy_atomically

Identity = tuple[int, int]


def _identity(path: str | Path) -> Identity:
    info = os.stat(path)
    return info.st_dev, info.st_ino


@pytest.fixture
def events(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, object]]:
    """("fsync", (device, inode)) and ("replace", source, target), in call order."""
    recorded: list[tuple[str, object]] = []
    fsync, replace = os.fsync, os.replace

    def recording_fsync(fd: int) -> None:
        info = os.fstat(fd)
        recorded.append(("fsync", (info.st_dev, info.st_ino)))
        fsync(fd)

    def recording_replace(source: str | Path, target: str | Path) -> None:
        recorded.append(("replace", (str(source), str(target))))
        replace(source, target)

    monkeypatch.setattr(os, "fsync", recording_fsync)
    monkeypatch.setattr(os, "replace", recording_replace)
    return recorded


def _position(events: list[tuple[str, object]], event: tuple[str, object]) -> int:
    assert event in events, f"{event} never happened: {events}"
    return events.index(event)


def test_a_file_is_on_the_disk_before_its_rename_and_the_rename_before_return(
        tmp_path: Path, events: list[tuple[str, object]]) -> None:
    target = tmp_path / "out.npy"
    target.write_bytes(b"the previous output")
    with atomic_path(str(target)) as temporary, open(temporary, "wb") as stream:
        np.save(stream, np.arange(5))
    assert np.array_equal(np.load(target), np.arange(5))
    renames = [e for e in events if e[0] == "replace"]
    assert len(renames) == 1 and renames[0][1][1] == str(target)  # type: ignore[index]
    rename = events.index(renames[0])
    # the renamed file is the temporary: its inode is the target's now
    assert _position(events, ("fsync", _identity(target))) < rename
    assert _position(events, ("fsync", _identity(tmp_path))) > rename


def test_a_store_is_on_the_disk_file_by_file_before_it_replaces_the_old_one(
        tmp_path: Path, events: list[tuple[str, object]]) -> None:
    target = tmp_path / "out.zarr"
    target.mkdir()
    (target / "zarr.json").write_text("{}")  # an old store, replaced
    with atomic_path(str(target), directory=True) as temporary:
        Path(temporary, "zarr.json").write_text('{"new": true}')
        Path(temporary, "c", "0").mkdir(parents=True)
        Path(temporary, "c", "0", "0").write_bytes(b"chunk")
    assert (target / "zarr.json").read_text() == '{"new": true}'
    into_place = _position(events, ("replace", (temporary, str(target))))
    for path in (target / "zarr.json", target / "c" / "0" / "0", target / "c" / "0",
                 target / "c", target):
        assert _position(events, ("fsync", _identity(path))) < into_place, path
    assert _position(events, ("fsync", _identity(tmp_path))) > into_place
    assert not any(p.name.endswith(".old") for p in tmp_path.iterdir())


def test_a_copy_is_on_the_disk_before_its_rename(tmp_path: Path,
                                                 events: list[tuple[str, object]]) -> None:
    source = tmp_path / "weights.bin"
    source.write_bytes(b"external data")
    target = tmp_path / "copy" / "weights.bin"
    copy_atomically(str(source), str(target))
    assert target.read_bytes() == b"external data"
    rename = next(i for i, e in enumerate(events) if e[0] == "replace")
    assert _position(events, ("fsync", _identity(target))) < rename
    assert _position(events, ("fsync", _identity(target.parent))) > rename


def test_a_failed_flush_leaves_the_target_as_it_was(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A disk that cannot take the data (EIO at fsync) is a failed write, worded as one, and
    the previous output keeps its name."""
    from onnx_upsample import UpsampleError

    def failing_fsync(fd: int) -> None:
        raise OSError(5, "Input/output error")

    target = tmp_path / "out.npy"
    target.write_bytes(b"the previous output")
    monkeypatch.setattr(os, "fsync", failing_fsync)
    with pytest.raises(UpsampleError, match=r"cannot write .*out\.npy.*Input/output error"):
        with atomic_path(str(target)) as temporary, open(temporary, "wb") as stream:
            np.save(stream, np.arange(5))
    assert target.read_bytes() == b"the previous output"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.npy"]


def _gone_pid() -> int:
    """The ID of a process that has exited."""
    import subprocess
    import sys

    return int(subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                              capture_output=True, text=True, check=True).stdout)


def test_a_killed_writers_leftovers_are_cleaned_by_the_next(tmp_path: Path) -> None:
    """A directory write killed mid-way leaves its temporary (named with its process's ID)
    beside the target, and maybe the old target moved aside; the next writer of that target
    removes the first and puts the second back, and leaves a running writer's temporary and
    folders not named as ours alone."""
    import os

    from onnx_upsample.io.atomic import remove_leftovers

    target = tmp_path / "out.zarr"
    gone = _gone_pid()
    killed = tmp_path / f".out.zarr.onnx-upsample-{gone}-abc.tmp"
    (killed / "c").mkdir(parents=True)
    aside = tmp_path / f".out.zarr.onnx-upsample-{gone}-def.tmp.old"
    aside.mkdir()
    (aside / "zarr.json").write_text("{}")
    running = tmp_path / f".out.zarr.onnx-upsample-{os.getppid()}-ghi.tmp"  # pytest's parent
    running.mkdir()
    theirs = tmp_path / ".out.zarr.onnx-upsample-mine.tmp"
    theirs.mkdir()
    assert remove_leftovers(target) == [killed]
    assert (target / "zarr.json").is_file() and not aside.exists()  # the old store, back
    assert running.is_dir() and theirs.is_dir()
    aside.mkdir()  # an aside beside a target that exists: the new one had taken its name
    assert remove_leftovers(target) == [aside]


def test_a_directory_write_removes_what_a_killed_one_left(tmp_path: Path) -> None:
    from onnx_upsample.io.atomic import atomic_path

    killed = tmp_path / f".out.zarr.onnx-upsample-{_gone_pid()}-abc.tmp"
    killed.mkdir()
    with atomic_path(str(tmp_path / "out.zarr"), directory=True) as temporary:
        (Path(temporary) / "zarr.json").write_text("{}")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.zarr"]


def test_a_store_that_cannot_take_its_place_leaves_the_old_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The old store is moved aside before the new one takes its name: when that second
    rename fails (a full disk), the old store is put back, not left hidden."""
    target = tmp_path / "out.zarr"
    target.mkdir()
    (target / "zarr.json").write_text("old")
    replace = os.replace
    calls = []

    def failing_second(source: str, destination: str) -> None:
        calls.append(source)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        replace(source, destination)

    monkeypatch.setattr(os, "replace", failing_second)
    with pytest.raises(UpsampleError, match="No space left"), atomic_path(
            str(target), directory=True) as temporary:
        (Path(temporary) / "zarr.json").write_text("new")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.zarr"]
    assert (target / "zarr.json").read_text() == "old"


def test_a_leftover_named_with_this_process_id_is_another_process_s(tmp_path: Path) -> None:
    """A container's entry point gets the same process ID at every start: a leftover named
    with this process's ID that this process is not writing is a killed writer's."""
    from onnx_upsample.io.atomic import remove_leftovers

    leftover = tmp_path / f".out.zarr.onnx-upsample-{os.getpid()}-abc.tmp"
    leftover.mkdir()
    target = tmp_path / "out.zarr"
    with atomic_path(str(target), directory=True) as temporary:
        assert remove_leftovers(target) == []  # its own temporary is in progress
        assert Path(temporary).is_dir()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.zarr"]
