"""The one atomic writer: every file the package writes goes through this module.

A writer gets a hidden temporary path beside its target and the temporary is renamed onto the
target only once it is complete, so an interrupted or failed run never leaves a half-written
output under the target's name. The temporary is created private (``mkstemp``); before the
rename it is given the permissions a plain ``open`` would have given it.

A rename is atomic for the processes that look at the folder, not for the disk: after a power
loss the file system may hold the new name with none of the data written before it (the data
and the rename reach the disk in any order). So the finished temporary is flushed to the disk
first (``fsync``: every file and folder of a temporary store), then renamed, then the folder
that holds the name is flushed, so that the rename itself is on the disk before the writer
returns: after a crash the target is the old output or the whole new one.
"""

from __future__ import annotations

import contextlib
import errno
import glob
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

from .._errors import UpsampleError

__all__ = ["ZARR_MARKERS", "atomic_path", "check_output_path", "copy_atomically",
           "is_zarr_store", "reason", "remove_leftovers", "same_file",
           "set_default_permissions"]

# The files that make a directory a zarr store. They live here, not in formats.py, because
# the writer must recognise a store before it replaces a directory with a new one, and
# formats.py imports this module (never the other way round).
ZARR_MARKERS = ("zarr.json", ".zarray", ".zgroup")


# The temporaries this process is writing now: a leftover named with this process's ID is
# not one of them when the ID was another's, a process that was killed (a container's
# entry point gets the same ID at every start).
_writing: set[str] = set()


def is_zarr_store(path: Path) -> bool:
    """Whether ``path`` is a zarr store (a directory holding one of its marker files)."""
    return path.is_dir() and any((path / marker).exists() for marker in ZARR_MARKERS)


def _prefix(target: Path) -> str:
    """The name every temporary of ``target`` starts with."""
    return f".{target.name}.onnx-upsample-"


def reason(error: BaseException) -> str:
    """An exception as one line: its message, or its class name when it has none.

    Parameters
    ----------
    error : BaseException
        The exception to describe.

    Returns
    -------
    str
        The message with its whitespace collapsed, or the exception's class name.
    """
    text = " ".join(str(error).split())
    return text or type(error).__name__


@contextlib.contextmanager
def atomic_path(target: str, directory: bool = False,
                replaces: Callable[[Path], bool] = is_zarr_store,
                replaces_what: str = "a zarr store") -> Iterator[str]:
    """A hidden temporary path beside ``target``, renamed to it only if the block succeeds.

    Parameters
    ----------
    target : str
        The file (or, with ``directory``, the directory) to write.
    directory : bool
        Create a temporary directory rather than a file (its name holds this process's ID,
        which tells a later writer of the same target whether it is still being written);
        the leftovers of a writer of the same target that was killed are removed first
        (:func:`remove_leftovers`).
    replaces, replaces_what : callable, str
        For a directory: which existing ``target`` it may replace, and what that is called
        in the refusal (a zarr store by default).

    Yields
    ------
    str
        The temporary path to write to.

    Raises
    ------
    UpsampleError
        The target's folder does not exist, the temporary cannot be created, or the target
        cannot be replaced. On any failure (an exception, Ctrl-C) the temporary file or
        directory is removed and ``target`` is left as it was.
    """
    target_path = Path(target).absolute()
    parent = target_path.parent
    _check_folder(target)
    prefix = _prefix(target_path)
    try:
        if directory:
            remove_leftovers(target_path)
            temporary = tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-", suffix=".tmp",
                                         dir=parent)
        else:
            handle, temporary = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=parent)
            os.close(handle)
    except OSError as error:
        raise UpsampleError(f"cannot write {target!r}: {reason(error)}") from None
    _writing.add(temporary)
    try:
        yield temporary
        set_default_permissions(temporary, directory)
        _replace(temporary, target_path, directory, replaces, replaces_what)
    except BaseException:
        _remove(temporary)
        raise
    finally:
        _writing.discard(temporary)



def remove_leftovers(target: Path) -> list[Path]:
    """Clean up after a writer of directory ``target`` that was killed: remove its temporary
    directories (named with a process that is gone) and put back an old ``target`` it had
    moved aside but not yet replaced (else remove the aside). Directories not named as ours,
    and those of a writer still running, are left alone. Returns what was removed."""
    prefix = _prefix(target)
    removed = []
    for name in sorted(glob.glob(glob.escape(prefix) + "*", root_dir=target.parent)):
        path = target.parent / name
        if not path.is_dir():
            continue
        writer = name[len(prefix):].partition("-")[0]
        if not writer.isdigit():
            continue  # not named as ours
        in_progress = (str(path.with_suffix("")) in _writing if path.suffix == ".old"
                       else str(path) in _writing)
        if in_progress or (int(writer) != os.getpid() and _alive(int(writer))):
            continue  # a write in progress
        if path.suffix == ".old" and not (target.exists() or target.is_symlink()):
            os.replace(path, target)  # the old target, moved aside before the new one came
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: alive
        return True
    return True


def copy_atomically(source: str, target: str) -> None:
    """Copy the file ``source`` to ``target`` through a hidden temporary beside ``target``.

    The target's folder is created when missing. Errors (``OSError`` and the like) propagate
    as they are, after the temporary is removed; the caller words them.

    Parameters
    ----------
    source : str
        The file to copy.
    target : str
        Where the copy goes; an existing file there is replaced only once the copy is whole.
    """
    os.makedirs(os.path.dirname(target), exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=_prefix(Path(target)), suffix=".tmp",
                                         dir=os.path.dirname(target))
    os.close(handle)
    try:
        shutil.copyfile(source, temporary)
        set_default_permissions(temporary, directory=False)
        _flush(temporary)
        os.replace(temporary, target)
        _flush_folder(os.path.dirname(target))
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def set_default_permissions(path: str, directory: bool) -> None:
    """Give ``path`` the permissions a plain ``open`` (or ``mkdir``) would under the umask.

    ``mkstemp`` and ``mkdtemp`` make their files private (0o600, 0o700); an output should not
    be. A failure to change them is ignored: the file is still complete and usable.

    Parameters
    ----------
    path : str
        The file or directory.
    directory : bool
        Whether ``path`` is a directory (0o777 before the umask rather than 0o666).
    """
    umask = os.umask(0)
    os.umask(umask)
    with contextlib.suppress(OSError):
        os.chmod(path, (0o777 if directory else 0o666) & ~umask)


def _replace(temporary: str, target: Path, directory: bool,
             replaces: Callable[[Path], bool], replaces_what: str) -> None:
    """Flush the finished output to the disk and move it into place (a directory replaces
    only what ``replaces`` accepts)."""
    try:
        if not directory:
            if target.is_dir():
                raise _a_directory(str(target))
            _flush(temporary)
            os.replace(temporary, target)
            _flush_folder(target.parent)
            return
        replacing = target.exists() or target.is_symlink()
        if replacing and not replaces(target):
            raise UpsampleError(
                f"output {str(target)!r} exists and is not {replaces_what}; remove it or "
                "choose another name"
            )
        _flush_tree(temporary)
        if replacing:
            # the old store is moved aside first so that the new one takes its name in one
            # rename; it is deleted only once the new one is in place, and put back if the
            # new one cannot take its place
            aside = f"{temporary}.old"
            os.replace(target, aside)
            try:
                os.replace(temporary, target)
            except BaseException:
                os.replace(aside, target)
                raise
            _flush_folder(target.parent)
            shutil.rmtree(aside, ignore_errors=True)
        else:
            os.replace(temporary, target)
            _flush_folder(target.parent)
    except OSError as error:
        raise UpsampleError(f"cannot write {str(target)!r}: {reason(error)}") from None


def _flush(path: str | Path) -> None:
    """Wait until the file's data is on the disk. (A read-only descriptor suffices: fsync
    writes out the file, not what this descriptor wrote.)"""
    handle = os.open(path, os.O_RDONLY)
    try:
        os.fsync(handle)
    finally:
        os.close(handle)


def _flush_folder(path: str | Path) -> None:
    """Wait until a folder's entries (a rename into it) are on the disk. File systems that
    cannot flush a folder say so (EINVAL, ENOTSUP); their renames are not made durable by
    anything else, so that is no error. Where folders cannot be opened (Windows), nothing."""
    try:
        handle = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except (PermissionError, IsADirectoryError):
        return
    try:
        os.fsync(handle)
    except OSError as error:
        if error.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EBADF):
            raise
    finally:
        os.close(handle)


def _flush_tree(root: str) -> None:
    """Flush every file of a temporary store, then every folder bottom-up (a folder's entry
    for a file is on the disk once the folder is flushed), the store's own folder last."""
    for folder, _, files in os.walk(root, topdown=False):
        for name in files:
            _flush(os.path.join(folder, name))
        _flush_folder(folder)


def _remove(path: str) -> None:
    """Delete a temporary file or directory, ignoring what is already gone."""
    if os.path.isdir(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            os.unlink(path)


def _check_folder(target: str) -> None:
    """Refuse an output whose folder does not exist."""
    parent = Path(target).absolute().parent
    if not parent.is_dir():
        raise UpsampleError(
            f"output {target!r}: the folder {str(parent)!r} does not exist; create it first"
        )


def _a_directory(target: str, example: str | None = None) -> UpsampleError:
    """The refusal of a file output that is a directory (``example``: a name in it to give
    instead)."""
    instead = "" if example is None else f" such as {os.path.join(target, example)!r}"
    return UpsampleError(f"output {target!r} is a directory; give a file name{instead}")


def check_output_path(output: str, source: str | None = None, overwrite: bool = False, *,
                      source_named: str = "input", written: str = "the result",
                      store: bool = False) -> bool:
    """Refuse, before anything is read or computed, an output that cannot be written.

    Parameters
    ----------
    output : str
        The file (or, with ``store``, the directory store) to write.
    source : str, optional
        The input it is made from: an output that is the input under any path (links,
        ``..``, see :func:`same_file`) is refused unless ``overwrite``.
    overwrite : bool
        Allow ``output`` to be ``source`` (the command line's ``--overwrite``).
    source_named, written : str
        What messages call ``source`` (``input``, ``input model``) and what is written
        (``the result``, ``the upsampled array``).
    store : bool
        The output is a directory store (zarr), which replaces an existing store: an
        existing directory is not refused here (:func:`atomic_path` says which it replaces).

    Returns
    -------
    bool
        Whether an existing output will be replaced.

    Raises
    ------
    UpsampleError
        The output is the input (without ``overwrite``), its folder does not exist, or it
        is a directory and no store.
    """
    if source is not None and not overwrite and same_file(source, output):
        raise UpsampleError(
            f"output {output!r} is the {source_named} {source!r}: {written} would replace it; "
            "give another output, or add --overwrite to replace the input"
        )
    _check_folder(output)
    if not store and os.path.isdir(output):
        raise _a_directory(output, None if source is None else os.path.basename(source))
    return os.path.lexists(output)


def same_file(a: str, b: str) -> bool:
    """Whether two paths name one file or store (links, ``..``, case-folding file systems):
    a command whose output is its input would replace what it reads."""
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet)
        return False
