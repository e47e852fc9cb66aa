"""The command line without optional dependencies, --version (issue 9), and the ONNX commands'
exit codes and messages.

A missing extra is one line naming the pip install to run, exit 2: checked by hiding the
module in a child process (``sys.modules[name] = None`` makes its import fail). The other
commands run in-process; onnxruntime's native log is checked in a child process, since it
writes to the file descriptor itself.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
from runners import cli_process, python_process

import onnx_upsample
from onnx_upsample.cli import main

RUN_HIDDEN = (
    "import sys\n"
    "sys.modules[{module!r}] = None\n"
    "from onnx_upsample.cli import main\n"
    "sys.exit(main({argv!r}))\n"
)


def _run_without(module: str, argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return python_process(RUN_HIDDEN.format(module=module, argv=argv), cwd=cwd)


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out.strip() == f"onnx-upsample {onnx_upsample.__version__}"


@pytest.mark.slow
@pytest.mark.parametrize(("module", "argv", "install"), [
    ("onnx", ["inspect", "model.onnx"], "pip install 'onnx-upsample[onnx]'"),
    ("onnx", ["run", "model.onnx"], "pip install 'onnx-upsample[onnx]'"),
    ("zarr", ["apply", "a.npy", "o.zarr", "--scales", "2", "2"],
     "pip install 'onnx-upsample[dask]'"),
    ("dask", ["apply", "a.npy", "o.npy", "--scales", "2", "2", "--chunks", "2"],
     "pip install 'onnx-upsample[dask]'"),
    ("PIL", ["apply", "a.npy", "o.png", "--scales", "2", "2"],
     "pip install 'onnx-upsample[images]'"),
])
def test_missing_extra_is_one_line_naming_the_install(
    tmp_path: Path, module: str, argv: list[str], install: str
) -> None:
    np.save(tmp_path / "a.npy", np.ones((3, 4), np.uint8))
    (tmp_path / "model.onnx").write_bytes(b"")
    result = _run_without(module, argv, tmp_path)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert install in lines[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.npy", "model.onnx"]


EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "yolo_head_opset9.onnx"


class Ran:
    """What a command did: exit code, stdout, stderr."""

    def __init__(self, returncode: int, stdout: str, stderr: str) -> None:
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> Callable[..., Ran]:
    """``cli(*argv)`` runs ``main`` in-process in ``tmp_path`` and returns a :class:`Ran`."""
    monkeypatch.chdir(tmp_path)

    def run(*argv: str) -> Ran:
        capsys.readouterr()
        try:
            code = main(list(argv))
        except SystemExit as stop:
            code = int(stop.code) if isinstance(stop.code, int) else 2
        captured = capsys.readouterr()
        return Ran(code, captured.out, captured.err)

    return run


@pytest.mark.parametrize("content", [b"hello, this is text\n", bytes(range(256)) * 8],
                         ids=["text", "binary"])
def test_a_file_that_is_not_onnx_is_one_line(tmp_path: Path, cli, content: bytes) -> None:
    pytest.importorskip("onnx")
    (tmp_path / "x.onnx").write_bytes(content)
    result = cli("inspect", "x.onnx")
    assert result.returncode == 2
    assert result.stderr.strip() == ("onnx-upsample: error: 'x.onnx' is not an ONNX model "
                                     "(its bytes are not an ONNX ModelProto); give a .onnx file")


def test_upgrade_into_a_directory_is_a_bad_argument(tmp_path: Path, cli) -> None:
    pytest.importorskip("onnx")
    (tmp_path / "out").mkdir()
    result = cli("upgrade", str(EXAMPLE), "-o", "out")
    assert result.returncode == 2  # not 1, the "verification failed" code
    assert "Traceback" not in result.stderr and "is a directory" in result.stderr
    assert list((tmp_path / "out").iterdir()) == []


@pytest.fixture
def umask_027() -> Iterator[None]:
    previous = os.umask(0o027)
    try:
        yield
    finally:
        os.umask(previous)


def test_written_files_follow_the_umask(tmp_path: Path, cli, umask_027: None) -> None:
    """upgrade -o and run --output-dir wrote 0600 files (mkstemp), apply 0644."""
    pytest.importorskip("onnx")
    rng = np.random.default_rng(0)
    np.save(tmp_path / "feature.npy", rng.standard_normal((1, 32, 13, 13)).astype(np.float32))
    np.save(tmp_path / "route.npy", rng.standard_normal((1, 16, 26, 26)).astype(np.float32))
    for argv in (["upgrade", str(EXAMPLE), "-o", "up.onnx"],
                 ["run", str(EXAMPLE), "--input", "feature=feature.npy", "--input",
                  "route=route.npy", "--output-dir", "."],
                 ["apply", "route.npy", "big.npy", "--scales", "1", "1", "2", "2"]):
        result = cli(*argv)
        assert result.returncode == 0, result.stderr
    for name in ("up.onnx", "detections.npy", "big.npy"):
        assert (tmp_path / name).stat().st_mode & 0o777 == 0o640, name


def test_python_tools_take_paths(tmp_path: Path) -> None:
    """check, infer_shapes, fold_scales, upgrade and downgrade take a ModelProto or a path
    (check('model.onnx') was a TypeError)."""
    onnx = pytest.importorskip("onnx")
    from onnx_upsample import UpsampleError
    from onnx_upsample.onnx import check, downgrade, fold_scales, infer_shapes, upgrade

    model = onnx.load(EXAMPLE)
    for tool in (check, infer_shapes, fold_scales, upgrade):
        from_path, from_str = tool(EXAMPLE), tool(str(EXAMPLE))
        from_model = tool(model)
        if isinstance(from_model, list):
            assert from_path == from_str == from_model
        else:
            assert from_path.SerializeToString() == from_model.SerializeToString()
            assert from_str.SerializeToString() == from_model.SerializeToString()
    onnx.save(upgrade(model), tmp_path / "up.onnx")
    assert downgrade(tmp_path / "up.onnx").SerializeToString() == downgrade(
        upgrade(model)).SerializeToString()
    with pytest.raises(UpsampleError, match="does not exist"):
        check(tmp_path / "missing.onnx")
    (tmp_path / "bad.onnx").write_bytes(b"not a model")
    with pytest.raises(UpsampleError, match="is not an ONNX model"):
        upgrade(str(tmp_path / "bad.onnx"))
    with pytest.raises(TypeError, match=r"path of a \.onnx file"):
        check(3)  # type: ignore[arg-type]


def test_a_failed_verification_writes_nothing(tmp_path: Path, monkeypatch, capsys) -> None:
    """upgrade --verify wrote the output model before the verification failed."""
    pytest.importorskip("onnxruntime")
    from onnx_upsample.cli import conversions

    monkeypatch.setattr(conversions, "_verify", lambda *args: (conversions.EXIT_FINDINGS, {}))
    output = tmp_path / "up.onnx"
    assert main(["upgrade", str(EXAMPLE), "-o", str(output), "--verify"]) == 1
    assert not output.exists()
    assert "was not written" in capsys.readouterr().err


def test_ort_refusing_a_node_is_one_line_without_its_log(tmp_path: Path) -> None:
    """ORT printed its coloured multi-line log before our one-line error, and refusing a
    float64 Upsample ended the verification (exit 2): now each refusal is one warning line
    (which side, which node, ORT's whole message), the node runs in onnx-upsample, and what
    stays unverified is said."""
    onnx = pytest.importorskip("onnx")
    pytest.importorskip("onnxruntime")
    from onnx_models import upsample_model

    model = upsample_model("v9-raw", [1, 1, 2, 2], dtype=np.float64, shape=[1, 1, 2, 2])
    onnx.save(model, tmp_path / "f64.onnx")
    result = cli_process("upgrade", "f64.onnx", "-o", "up.onnx", "--verify", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert all(line.startswith("onnx-upsample: warning: ") for line in lines), lines
    assert any(line.startswith("onnx-upsample: warning: onnxruntime refused the original "
                               "model's Upsample 'up': [ONNXRuntimeError] : 9 : NOT_IMPLEMENTED")
               for line in lines)
    assert any("onnxruntime refused the upgraded model's Resize 'up'" in line for line in lines)
    assert any(line.startswith("onnx-upsample: warning: node 'up': onnxruntime refused it on "
                               "both sides") for line in lines)
    assert "\x1b[" not in result.stderr and (tmp_path / "up.onnx").exists()



def _onnx_model(tmp_path: Path, name: str, nodes: list, inputs: list, initializers=(),
                opset: int = 9) -> Path:
    from onnx import TensorProto, helper

    graph = helper.make_graph(nodes, "g", inputs,
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
                              list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    path = tmp_path / name
    pytest.importorskip("onnx").save(model, path)
    return path


def test_check_command_exit_codes_and_json(tmp_path: Path, cli) -> None:
    import json

    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 1, 2, 2])
    trt_style = helper.make_node("Upsample", ["X"], ["Y"], name="upsample_86",
                                 scales=[1.0, 1.0, 2.0, 2.0])  # the v7 form in an opset-9 model
    _onnx_model(tmp_path, "trt.onnx", [trt_style], [x])
    result = cli("check", "trt.onnx", "--json")
    assert result.returncode == 1, result.stderr
    document = json.loads(result.stdout)
    assert document["model"] == "trt.onnx"
    assert document["counts"] == {"errors": 1, "warnings": 0}
    findings = document["findings"]
    assert [(f["severity"], f["node"], f["code"]) for f in findings] == [
        ("error", "upsample_86", "form-opset")]
    assert findings[0]["commands"][0] == (
        "onnx-upsample downgrade trt.onnx -o trt_opset9.onnx --opset 9")
    plain = cli("check", str(EXAMPLE))
    assert plain.returncode == 0 and "0 error(s), 0 warning(s)" in plain.stdout


def test_downgrade_command_matches_the_python_tool(tmp_path: Path, cli) -> None:
    onnx = pytest.importorskip("onnx")
    from onnx_upsample.onnx import downgrade, upgrade

    onnx.save(upgrade(EXAMPLE), tmp_path / "up.onnx")
    result = cli("downgrade", "up.onnx", "-o", "down.onnx")
    assert result.returncode == 0, result.stderr
    assert result.stdout.rstrip().endswith(": 1 Resize-18 -> Upsample-9")
    written = onnx.load(tmp_path / "down.onnx")
    assert written.SerializeToString() == downgrade(tmp_path / "up.onnx").SerializeToString()


@pytest.mark.filterwarnings("ignore::onnx_upsample.UpsampleWarning")  # it says so on stdout
def test_fold_command_says_what_it_could_not_fold(tmp_path: Path, cli) -> None:
    from onnx import TensorProto, helper, numpy_helper

    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 1, 2, 2])
    ones = numpy_helper.from_array(np.ones(4, np.float32), "ones")
    twos = numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "twos")
    computed = [helper.make_node("Mul", ["ones", "twos"], ["s"]),
                helper.make_node("Upsample", ["X", "s"], ["Y"], name="up")]
    _onnx_model(tmp_path, "static.onnx", computed, [x], [ones, twos])
    result = cli("fold", "static.onnx", "-o", "folded.onnx")
    assert result.returncode == 0, result.stderr
    assert "1 of 1 computed scales folded" in result.stdout
    runtime = [helper.make_node("Upsample", ["X", "S"], ["Y"], name="up")]
    s = helper.make_tensor_value_info("S", TensorProto.FLOAT, [4])
    _onnx_model(tmp_path, "dynamic.onnx", runtime, [x, s])
    result = cli("fold", "dynamic.onnx", "-o", "folded2.onnx")
    assert result.returncode == 0, result.stderr
    assert "0 of 1 computed scales folded" in result.stdout
    assert "not folded: up:" in result.stderr and "--input-shape" in result.stderr


def test_run_checks_inputs_against_the_model(tmp_path: Path, cli) -> None:
    np.save(tmp_path / "f64.npy", np.zeros((1, 32, 13, 13)))
    np.save(tmp_path / "small.npy", np.zeros((1, 32, 12, 13), np.float32))
    wrong_type = cli("run", str(EXAMPLE), "--input", "feature=f64.npy", "--random")
    assert wrong_type.returncode == 2
    assert "input 'feature' is float64[1, 32, 13, 13]; the model declares feature " \
           "float32[1, 32, 13, 13]" in wrong_type.stderr
    wrong_shape = cli("run", str(EXAMPLE), "--input", "feature=small.npy", "--random")
    assert wrong_shape.returncode == 2 and "float32[1, 32, 12, 13]" in wrong_shape.stderr
    wrong_name = cli("run", str(EXAMPLE), "--input", "feat=f64.npy")
    assert wrong_name.returncode == 2
    assert "route float32[1, 16, 26, 26]" in wrong_name.stderr
    random = cli("run", str(EXAMPLE), "--random")
    assert random.returncode == 0, random.stderr
    line = random.stdout.strip().splitlines()[-1]  # after what ran the model, and where
    assert line.startswith("detections: float32 [1, 18, 26, 26], min ")
    low = line.split("min ")[1].split(",")[0]
    assert low == str(np.float32(low))  # float32 digits, not float64's


def test_readme_run_example_runs_on_what_make_demo_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The README's `run` transcript reads build/demo/feature.npy and route.npy, which
    `make demo` writes with scripts/make_legacy_model.py --inputs build/demo; run from a
    checkout after it, the command prints exactly the README's line."""
    import importlib.util
    import re
    import shlex

    pytest.importorskip("onnx")
    root = Path(__file__).resolve().parent.parent
    readme = (root / "README.md").read_text()
    found = re.search(r"^\$ onnx-upsample (run examples/\S+ .*)\n((?:(?!```|\$ ).*\n)+)",
                      readme, re.MULTILINE)
    assert found is not None
    command, shown = shlex.split(found.group(1)), found.group(2).splitlines()
    assert "--inputs build/demo" in (root / "Makefile").read_text()
    assert "--inputs build/demo" in readme  # the README names what writes the inputs
    spec = importlib.util.spec_from_file_location("make_legacy_model",
                                                  root / "scripts" / "make_legacy_model.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "examples").symlink_to(root / "examples")
    script.write_inputs("build/demo")
    assert main(command) == 0

    def rounded(line: str) -> str:
        # the model's convolutions run in onnxruntime, whose kernels (AVX2, AVX-512) round
        # the last bit of a float32 differently: its min and max to 6 significant digits
        return re.sub(r"-?\d+\.\d+(e[-+]\d+)?", lambda m: f"{float(m.group()):.6g}", line)

    assert [rounded(line) for line in capsys.readouterr().out.splitlines()] == [
        rounded(line) for line in shown]
