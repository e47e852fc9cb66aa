"""The ``apply`` job under interruption (Ctrl-C, a full disk: no half-written output, the
previous store kept) and the README's command-line examples, run as written (split from
test_files.py, which covers the formats and the job itself)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

zarr = pytest.importorskip("zarr")
pytest.importorskip("PIL.Image")
pytest.importorskip("dask.array")

from file_checks import one_line_error, only, same  # noqa: E402
from runners import run_main  # noqa: E402

RNG = np.random.default_rng(21)

# ---------------------------------------------------------------------------------------------
# interrupted writes
# ---------------------------------------------------------------------------------------------


def _fail_after(monkeypatch: pytest.MonkeyPatch, n: int, error: BaseException) -> None:
    """Make the n-th output chunk of the chunked path fail (after others were written)."""
    from onnx_upsample.dask import _graph

    original = _graph._compute_block
    calls = {"n": 0}

    def failing(*args: object) -> np.ndarray:
        calls["n"] += 1
        if calls["n"] == n:
            raise error
        return original(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(_graph, "_compute_block", failing)


@pytest.mark.parametrize("target", ["out.zarr", "out.npy", "out.png"])
@pytest.mark.parametrize("error", [KeyboardInterrupt(), OSError(28, "No space left on device")])
def test_interrupted_write_leaves_no_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str], target: str,
                                            error: BaseException) -> None:
    import dask

    x = RNG.integers(0, 256, (40, 30, 3), dtype=np.uint8)
    np.save(tmp_path / "in.npy", x)
    _fail_after(monkeypatch, 5, error)
    with dask.config.set(scheduler="synchronous"):
        code = run_main(["apply", tmp_path / "in.npy", tmp_path / target, "--scales", "2", "2", "1",
                    "--chunks", "10", "--quiet"])
    if isinstance(error, KeyboardInterrupt):
        assert code == 130
        assert "interrupted" in capsys.readouterr().err
    else:
        assert code == 2
        assert "No space left" in one_line_error(capsys)
    only(tmp_path, "in.npy")


def test_failed_rewrite_keeps_the_previous_store(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    import dask

    np.save(tmp_path / "in.npy", np.arange(100, dtype=np.float32).reshape(10, 10))
    store = tmp_path / "out.zarr"
    assert run_main(["apply", tmp_path / "in.npy", store, "--scales", "2", "2", "--quiet"]) == 0
    before = zarr.open_array(str(store), mode="r")[...]
    _fail_after(monkeypatch, 2, KeyboardInterrupt())
    with dask.config.set(scheduler="synchronous"):
        assert run_main(["apply", tmp_path / "in.npy", store, "--scales", "3", "3", "--chunks", "5",
                    "--quiet"]) == 130
    assert same(zarr.open_array(str(store), mode="r")[...], before)
    only(tmp_path, "in.npy", "out.zarr")


@pytest.mark.slow
def test_ctrl_c_of_a_running_process(tmp_path: Path) -> None:
    """SIGINT during a real chunked write: exit 130, no output, no temporary store left."""
    source = tmp_path / "in.zarr"
    z = zarr.create_array(str(source), shape=(64, 256, 256), chunks=(8, 64, 64), dtype="f4")
    z[...] = RNG.random((64, 256, 256), dtype=np.float32)
    process = subprocess.Popen(
        [sys.executable, "-m", "onnx_upsample", "apply", str(source),
         str(tmp_path / "out.zarr"), "--scales", "4", "4", "4", "--mode", "linear"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    deadline = time.monotonic() + 60
    # wait until the temporary store exists, that is, until writing has begun
    while time.monotonic() < deadline and process.poll() is None:
        if any(p.name.startswith(".out.zarr.") for p in tmp_path.iterdir()):
            break
        time.sleep(0.05)
    time.sleep(0.5)
    # 1 GiB of output in chunks: seconds of work, not half of one; a job that is done by now
    # is no test of an interrupt
    assert process.poll() is None, "the job finished before it could be interrupted"
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    only(tmp_path, "in.zarr")


# ---------------------------------------------------------------------------------------------
# the README's command-line examples, as written
# ---------------------------------------------------------------------------------------------

ROOT = Path(__file__).resolve().parent.parent


def _readme_section(title: str) -> str:
    text = (ROOT / "README.md").read_text()
    start = text.index(f"### {title}\n")
    return text[start:text.index("\n### ", start + 1)]


def _fenced_blocks(section: str) -> list[tuple[str, list[str]]]:
    """(language, lines) of every fenced block in a README section."""
    blocks, language, lines = [], None, []
    for line in section.splitlines():
        if line.startswith("```"):
            if language is None:
                language, lines = line[3:], []
            else:
                blocks.append((language, lines))
                language = None
        elif language is not None:
            lines.append(line)
    return blocks


@pytest.mark.slow
def test_readme_apply_examples_run_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """Every line of the README's apply block runs from a checkout (its heredoc makes the
    inputs it names), and every transcript prints exactly what the README shows."""
    import json
    import shlex

    monkeypatch.chdir(tmp_path)
    (tmp_path / "docs").symlink_to(ROOT / "docs")
    (tmp_path / "build").mkdir()  # make demo's; the examples write under it
    (commands_language, commands), (_, transcript) = _fenced_blocks(
        _readme_section("On the command line"))
    assert commands_language == "bash"
    lines = iter(commands)
    ran = 0
    for line in lines:
        if not line.strip() or line.startswith("#"):
            continue
        if line == "python - <<'EOF'":
            exec("\n".join(iter(lines.__next__, "EOF")), {})  # the README's own heredoc
            continue
        words = shlex.split(line, comments=True)
        assert words[0] == "onnx-upsample", f"not a command this test runs: {line!r}"
        assert run_main(words[1:]) == 0, (line, capsys.readouterr().err)
        ran += 1
        out = capsys.readouterr().out
        if "--json" in words:
            assert json.loads(out)["command"] == "apply"
    assert ran == 7
    assert np.load("build/signal_x4.npy").shape == (800_000,)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["build", "docs"]  # nothing else
    # the transcripts: each command's lines, exactly
    shown: dict[str, list[str]] = {}
    for line in transcript:
        if line.startswith("$ "):
            command = line[2:]
            shown[command] = []
        else:
            shown[command].append(line)
    for command, expected in shown.items():
        run_main(shlex.split(command)[1:])
        captured = capsys.readouterr()
        assert (captured.err + captured.out).splitlines() == expected, command


def test_a_failed_compute_stops_its_tasks_before_the_clean_up(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """When an exception leaves dask's scheduler (a failed chunk, Ctrl-C), the tasks it had
    handed to a pool go on running; the files' compute block waits for them (and cancels the
    others) before it ends, so none writes into an output its clean-up already removed.
    With dask's shared default pool, a running task was still going when the block ended."""
    import threading

    import dask

    from onnx_upsample import _threads
    from onnx_upsample.io.chunked import computing

    monkeypatch.setattr(_threads, "available_cores", lambda: 2)  # both tasks at once
    slow_started = threading.Event()
    finished = []

    def slow() -> None:
        slow_started.set()
        time.sleep(0.5)
        finished.append(1)

    def failing() -> None:
        assert slow_started.wait(30)  # fails while the slow one runs
        raise RuntimeError("a chunk failed")

    with pytest.raises(RuntimeError, match="a chunk failed"), computing(None):
        dask.compute(dask.delayed(slow)(), dask.delayed(failing)(), scheduler="threads")
    assert finished == [1], "a task was still running when the block ended"
