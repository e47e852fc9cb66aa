"""Writing the conformance suite to disk, and reading it back.

Layout: each case is a directory in onnx's backend-test data layout, so runtimes' own
harnesses (onnxruntime's ``onnx_test_runner DIR/upsample``) and
``onnx.backend.test.loader.load_model_tests(data_dir=DIR, kind="upsample")`` load it. The
folder is not called ``node``: onnx 1.23's loader generates ``kind="node"`` from its own
Python cases and ignores ``data_dir`` for it::

    DIR/manifest.json                       suite version, content hash, cases and tags
    DIR/upsample/test_upsample_<id>/model.onnx
    DIR/upsample/test_upsample_<id>/test_data_set_0/input_0.pb   X
    DIR/upsample/test_upsample_<id>/test_data_set_0/input_1.pb   scales (v9-input form only)
    DIR/upsample/test_upsample_<id>/test_data_set_0/output_0.pb  Y, the expected output

Every expected output comes from onnx-upsample's kernel and is checked, before anything is
written, against the slow reference, against the case's model run by onnx's
ReferenceEvaluator with onnx-upsample's operator, and against onnxruntime where it is
installed: bit-identical where the case says ORT runs it exactly, different where the case
documents an ORT difference, refused where ORT has no kernel.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._errors import UpsampleError
from ._cases import (
    ORT_DIFFERS,
    ORT_EXACT,
    ORT_MEASURED,
    ORT_REFUSES,
    SUITE_VERSION,
    Case,
    all_cases,
    make_input,
)
from ._grade import compare, same_bits

SUITE_NAME = "onnx-upsample Upsample conformance suite"
MANIFEST = "manifest.json"
CASES_FOLDER = "upsample"  # the loader's "kind"
DATA_SET = "test_data_set_0"

Progress = Callable[[int, int, str], None]


@dataclass(frozen=True)
class SuiteCase:
    """A case as read back from an exported suite."""

    id: str
    path: Path
    info: dict[str, Any]

    @property
    def group(self) -> str:
        return str(self.info["group"])

    @property
    def mode(self) -> str:
        return str(self.info["mode"])

    @property
    def scales(self) -> list[float]:
        return [float(s) for s in self.info["scales"]]

    @property
    def tags(self) -> list[str]:
        return [str(t) for t in self.info["tags"]]

    @property
    def ort(self) -> str:
        return str(self.info["ort"])

    def inputs(self) -> list[np.ndarray]:
        return read_inputs(self.path)

    def input_names(self) -> list[str]:
        return [_read_tensor(p)[0] for p in _data_files(self.path, "input")]

    def expected(self) -> np.ndarray:
        return _read_tensor(self.path / DATA_SET / "output_0.pb")[1]


@dataclass(frozen=True)
class Suite:
    """An exported suite: its manifest and its cases."""

    directory: Path
    manifest: dict[str, Any]
    cases: tuple[SuiteCase, ...]

    @property
    def version(self) -> str:
        return str(self.manifest["version"])

    @property
    def content_hash(self) -> str:
        return str(self.manifest["content_hash"])


def _data_files(case_dir: Path, kind: str) -> list[Path]:
    files = sorted((case_dir / DATA_SET).glob(f"{kind}_*.pb"),
                   key=lambda p: int(p.stem.split("_")[1]))
    return files


def read_inputs(case_dir: Path) -> list[np.ndarray]:
    """The arrays of ``input_N.pb`` of a case directory, in order of N."""
    return [_read_tensor(p)[1] for p in _data_files(case_dir, "input")]


def _read_tensor(path: Path) -> tuple[str, np.ndarray]:
    import onnx
    from onnx import numpy_helper

    tensor = onnx.TensorProto()
    tensor.ParseFromString(path.read_bytes())
    return tensor.name, numpy_helper.to_array(tensor)


def _tensor_bytes(name: str, array: np.ndarray) -> bytes:
    from onnx import numpy_helper

    return numpy_helper.from_array(array, name).SerializeToString()


def _hash_files(case_dir: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in case_dir.rglob("*") if p.is_file()):
        digest.update(path.relative_to(case_dir).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def _suite_hash(case_hashes: dict[str, str]) -> str:
    lines = "".join(f"{case_id} {digest}\n" for case_id, digest in sorted(case_hashes.items()))
    return "sha256:" + hashlib.sha256(lines.encode()).hexdigest()


# ------------------------------------------------------------------------------- checking

@dataclass
class _OrtCheck:
    """onnxruntime, when installed, and what it said of each case."""

    version: str | None
    strict: bool
    notes: list[str]

    @classmethod
    def start(cls, use: bool) -> _OrtCheck:
        version = None
        if use:
            try:
                import onnxruntime

                version = str(onnxruntime.__version__)
            except ImportError:
                version = None
        strict = version is not None and version.startswith(ORT_MEASURED + ".")
        return cls(version, strict, [])

    def run(self, model: bytes, feeds: list[np.ndarray]) -> np.ndarray:
        import onnxruntime

        options = onnxruntime.SessionOptions()
        options.log_severity_level = 4
        session = onnxruntime.InferenceSession(model, options,
                                               providers=["CPUExecutionProvider"])
        names = [i.name for i in session.get_inputs()]
        return np.asarray(session.run(None, dict(zip(names, feeds, strict=True)))[0])

    def check(self, case: Case, model: bytes, feeds: list[np.ndarray],
              expected: np.ndarray) -> None:
        if self.version is None:
            return
        try:
            got: np.ndarray | None = self.run(model, feeds)
            refusal = ""
        except Exception as error:
            got, refusal = None, str(error).splitlines()[0][:200]
        if case.ort == ORT_REFUSES:
            problem = None if got is None else "ORT ran it, but the case says it refuses"
        elif got is None:
            problem = f"ORT refused it: {refusal}"
        elif case.ort == ORT_EXACT:
            grade = compare(expected, got)
            problem = None if grade.kind == "exact" else f"ORT gives {grade.detail}"
        else:  # ORT_DIFFERS
            problem = ("ORT matches it bit for bit, but the case documents a difference"
                       if same_bits(expected, got) else None)
        if problem is None:
            return
        message = (f"case {case.id}: {problem} (tags measured with onnxruntime {ORT_MEASURED} "
                   "on x86-64)")
        # a documented difference may not show on every CPU (int32 wrap-around is x86's
        # conversion; ARM saturates): a note, never a refusal to export
        if self.strict and case.ort != ORT_DIFFERS:
            raise UpsampleError(f"{message}; the suite was not written")
        self.notes.append(f"{message}; installed: onnxruntime {self.version}")


def _evaluate_model(model: Any, feeds: list[np.ndarray]) -> np.ndarray:
    """The case's model run by onnx's ReferenceEvaluator with onnx-upsample's operator."""
    from onnx.reference import ReferenceEvaluator

    from ..onnx import Upsample

    evaluator = ReferenceEvaluator(model, new_ops=[Upsample])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # v10 and 'bilinear' warn by design
        names = list(evaluator.input_names)
        outputs: list[Any] = list(evaluator.run(None, dict(zip(names, feeds, strict=True))))
    return np.asarray(outputs[0])


def expected_output(case: Case, x: np.ndarray) -> np.ndarray:
    """The expected output of ``case``: onnx-upsample's kernel, checked against the
    reference (bit for bit) before it is used."""
    from .. import reference, upsample

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = upsample(x, case.scales, case.mode)
        slow = reference.upsample(x, case.scales, case.mode)
    if not same_bits(ours, slow):
        raise UpsampleError(f"case {case.id}: the kernel and the reference disagree "
                            f"({compare(slow, ours).detail}); the suite was not written")
    return ours


# -------------------------------------------------------------------------------- export

def export(directory: str | os.PathLike[str], *, full: bool = False, check_ort: bool = True,
           progress: Progress | None = None) -> Suite:
    """Write the ONNX ``Upsample`` (versions 1, 7, 9, 10) conformance suite to ``directory``.

    Parameters
    ----------
    directory
        Where to write it; must not exist, be empty, or hold an earlier export (replaced).
    full
        Add the large cases (outputs of 16-64 MB, ORT's 2**24 difference).
    check_ort
        Check every case against onnxruntime too, when it is installed.
    progress
        Called as ``progress(done, total, case_id)`` after each case.

    Returns
    -------
    Suite
        The suite as written (its manifest and cases).
    """
    import onnx  # noqa: F401 - fails here, with the extra's name, if onnx is missing

    from ._models import build_model, feeds

    target = Path(directory).absolute()
    _check_target(target)
    cases = all_cases(full)
    ort = _OrtCheck.start(check_ort)
    hashes: dict[str, str] = {}
    records = []
    with _building(target) as build:
        for done, case in enumerate(cases, 1):
            x = make_input(case)
            model = build_model(case)
            inputs = feeds(case, x)
            expected = expected_output(case, x)
            through_model = _evaluate_model(model, inputs)
            if not same_bits(expected, through_model):
                raise UpsampleError(f"case {case.id}: its model gives "
                                    f"{compare(expected, through_model).detail}")
            model_bytes = model.SerializeToString()
            ort.check(case, model_bytes, inputs, expected)
            case_dir = build / CASES_FOLDER / case.name
            (case_dir / DATA_SET).mkdir(parents=True)
            (case_dir / "model.onnx").write_bytes(model_bytes)
            names = ["X", "scales"]
            for index, array in enumerate(inputs):
                (case_dir / DATA_SET / f"input_{index}.pb").write_bytes(
                    _tensor_bytes(names[index], array))
            (case_dir / DATA_SET / "output_0.pb").write_bytes(_tensor_bytes("Y", expected))
            hashes[case.id] = _hash_files(case_dir)
            records.append(_record(case, expected, hashes[case.id]))
            if progress is not None:
                progress(done, len(cases), case.id)
        manifest = _manifest(records, hashes, full, ort)
        (build / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
    return load(target)


def _record(case: Case, expected: np.ndarray, digest: str) -> dict[str, Any]:
    return {
        "id": case.id, "path": f"{CASES_FOLDER}/{case.name}", "group": case.group,
        "description": case.description, "form": case.form, "opset": case.opset,
        "mode": case.mode, "dtype": case.dtype, "input_shape": list(case.shape),
        "scales": list(case.scales), "output_shape": list(expected.shape),
        "ort": case.ort, "tags": list(case.tags), "sha256": digest,
    }


def _manifest(records: list[dict[str, Any]], hashes: dict[str, str], full: bool,
              ort: _OrtCheck) -> dict[str, Any]:
    import onnx

    from .. import __version__

    return {
        "suite": SUITE_NAME, "version": SUITE_VERSION, "content_hash": _suite_hash(hashes),
        "full": full, "generated_by": f"onnx-upsample {__version__}",
        "onnx": onnx.__version__,
        "ort_tags_measured_with": f"onnxruntime {ORT_MEASURED}",
        "checked_against": ["onnx-upsample reference", "onnx ReferenceEvaluator + "
                            "onnx_upsample.onnx.Upsample"]
        + ([f"onnxruntime {ort.version}"] if ort.version else []),
        "notes": ort.notes,
        "grades": "exact: bitwise, any NaN equals any NaN, -0.0 != +0.0",
        "cases": records,
    }


def _is_suite(path: Path) -> bool:
    try:
        return json.loads((path / MANIFEST).read_text()).get("suite") == SUITE_NAME
    except (OSError, ValueError, AttributeError):
        return False


def _check_target(target: Path) -> None:
    if target.exists() and not target.is_dir():
        raise UpsampleError(f"suite directory {str(target)!r} is a file; give a new "
                            "directory name")
    if target.is_dir() and any(target.iterdir()):
        ours = {MANIFEST, CASES_FOLDER}
        extra = sorted(p.name for p in target.iterdir() if p.name not in ours)
        if not _is_suite(target) or extra:
            raise UpsampleError(
                f"suite directory {str(target)!r} exists and holds other files "
                f"({', '.join(extra[:3]) or 'not a suite'}); give a new or empty directory")
    if not target.parent.is_dir():
        raise UpsampleError(f"suite directory {str(target)!r}: its parent folder does not "
                            "exist; create it first")


@contextlib.contextmanager
def _building(target: Path) -> Iterator[Path]:
    """A hidden directory beside ``target`` that replaces it only when complete."""
    temporary = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp",
                                      dir=target.parent))
    try:
        yield temporary
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o777 & ~umask)
        if target.exists():
            aside = temporary.with_suffix(".old")
            os.replace(target, aside)
            os.replace(temporary, target)
            shutil.rmtree(aside, ignore_errors=True)
        else:
            os.replace(temporary, target)
    except BaseException:
        shutil.rmtree(temporary, ignore_errors=True)
        raise


# ---------------------------------------------------------------------------------- load

def load(directory: str | os.PathLike[str], *, verify: bool = True) -> Suite:
    """Read an exported suite; with ``verify``, check every file against its hash."""
    root = Path(directory)
    manifest_path = root / MANIFEST
    if not manifest_path.is_file():
        raise UpsampleError(f"suite {str(root)!r} has no {MANIFEST}; export one with "
                            "'onnx-upsample conformance export DIR'")
    try:
        manifest = json.loads(manifest_path.read_text())
    except (OSError, ValueError) as error:
        raise UpsampleError(f"suite {str(root)!r}: cannot read {MANIFEST} ({error})") from None
    if not isinstance(manifest, dict) or manifest.get("suite") != SUITE_NAME:
        raise UpsampleError(f"suite {str(root)!r}: {MANIFEST} is not an onnx-upsample suite "
                            "manifest")
    cases = []
    hashes = {}
    for record in manifest["cases"]:
        path = root / record["path"]
        if verify:
            if not path.is_dir():
                raise UpsampleError(f"suite {str(root)!r}: case {record['id']} is missing "
                                    f"({record['path']}); export the suite again")
            hashes[record["id"]] = _hash_files(path)
            if hashes[record["id"]] != record["sha256"]:
                raise UpsampleError(f"suite {str(root)!r}: the files of case {record['id']} "
                                    "changed since export (hash mismatch); export it again")
        cases.append(SuiteCase(record["id"], path, record))
    if verify and _suite_hash(hashes) != manifest["content_hash"]:
        raise UpsampleError(f"suite {str(root)!r}: content hash mismatch; export it again")
    return Suite(root, manifest, tuple(cases))
