"""The legacy corpus end to end (issue 9): every model as old exporters saved it is
inspected, run, upgraded to opsets 10, 11, 13 and 18 (the default) with verification
bit-identical in onnxruntime, and downgraded back to opset 9 with the same outputs (or with
the refusal its entry expects). The exporters' corpus (issue 27) also says, per model, what
the verification must print: what onnxruntime refused and why, what was rewritten, what
stays unverified. The IR-3
models with a Conv before the Upsample (YOLOv3's route, issue 17) are upgraded to every
opset the upgrade supports where what onnxruntime runs changes (a new Resize or Conv), and
compared at onnxruntime's default optimization level too."""

from __future__ import annotations

import importlib.util
import sys
import warnings
from pathlib import Path

import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from onnx_upsample import UpsampleError, UpsampleWarning  # noqa: E402
from onnx_upsample.cli import main  # noqa: E402
from onnx_upsample.onnx import downgrade  # noqa: E402
from onnx_upsample.onnx.verify import verify_upgrade  # noqa: E402

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "make_legacy_corpus.py"
_spec = importlib.util.spec_from_file_location("make_legacy_corpus", SCRIPT)
assert _spec is not None and _spec.loader is not None
corpus = importlib.util.module_from_spec(_spec)
sys.modules["make_legacy_corpus"] = corpus  # dataclasses look their module up there
_spec.loader.exec_module(corpus)

TARGETS = (10, 11, 13, 18)


def _conv_targets() -> tuple[int, ...]:
    """The first opset of each (Resize, Conv) version pair from 10 to the newest: the other
    opsets run the same two kernels."""
    from onnx_upsample.onnx.convert import newest_opset

    firsts: dict[tuple[int, int], int] = {}
    for opset in range(10, newest_opset() + 1):
        pair = tuple(onnx.defs.get_schema(op, opset).since_version for op in ("Resize", "Conv"))
        firsts.setdefault(pair, opset)  # type: ignore[arg-type]
    return tuple(sorted(set(firsts.values()) | set(TARGETS)))


CONV_TARGETS = _conv_targets()


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[object, Path]]:
    folder = tmp_path_factory.mktemp("corpus")
    return {entry.name: (entry, path) for entry, path in corpus.write(folder)}


def _main(argv: list[str]) -> int:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UpsampleWarning)
        try:
            return main(argv)
        except SystemExit as stop:  # argparse
            return int(stop.code) if isinstance(stop.code, int) else 2


@pytest.mark.slow
@pytest.mark.parametrize("name", [entry.name for entry in corpus.CORPUS])
def test_corpus_model_end_to_end(written, name: str, tmp_path: Path, capsys) -> None:
    entry, path = written[name]
    inspected = _main(["inspect", str(path)])
    assert inspected == (1 if entry.invalid else 0), capsys.readouterr()
    run = ["run", str(path), "--random"] + (["--legacy-modes"] if entry.legacy_modes else [])
    assert _main(run) == (0 if entry.runs else 2), capsys.readouterr()
    if entry.refused_without:  # without its options, upgrade says which one it needs
        code = _main(["upgrade", str(path), "-o", str(tmp_path / "refused.onnx")])
        captured = capsys.readouterr()
        assert code == 2 and entry.refused_without in captured.err, captured
    for target in TARGETS if entry.default_level_differs is None else CONV_TARGETS:
        out = tmp_path / f"opset{target}" / "model.onnx"
        out.parent.mkdir()
        code = _main(["upgrade", str(path), "-o", str(out), "--opset", str(target), "--verify",
                      *entry.upgrade_options])
        captured = capsys.readouterr()
        assert code == 0, (target, captured)
        assert "verified: outputs are bit-identical" in captured.out
        for words in entry.verify_says:  # refused, unverified, rewritten: said precisely
            assert words in captured.out + captured.err, (target, words, captured)
        onnx.checker.check_model(str(out), full_check=True)
        if entry.default_level_differs is not None:
            # the default level is compared too: equal bits, or a note naming the cause
            noted = "note: at onnxruntime's default optimization level" in captured.out
            assert noted == entry.default_level_differs, (target, captured.out)
            assert not noted or "NCHWc" in captured.out
            # the weights IR 3 listed as inputs are constants of the upgraded model
            assert [v.name for v in onnx.load(str(out)).graph.input] == ["X"]
    # back down to opset 9: the same outputs as the upgrade, in onnxruntime
    upgraded = tmp_path / "opset13" / "model.onnx"
    if entry.downgrade_refusal is not None:
        with pytest.raises(UpsampleError, match=entry.downgrade_refusal):
            downgrade(upgraded, opset=9)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UpsampleWarning)
        lowered = downgrade(upgraded, opset=9)
    verification = verify_upgrade(lowered, upgraded)
    assert verification.verified, verification.summary
    assert not any(n.op_type == "Resize" for n in lowered.graph.node)
