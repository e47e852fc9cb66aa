"""Writing the conformance suite to disk, and reading it back.

Layout: each case is a directory in onnx's backend-test data layout, so runtimes' own
harnesses (onnxruntime's ``onnx_test_runner DIR/upsample``) and
``onnx.backend.test.loader.load_model_tests(data_dir=DIR, kind="upsample")`` load it. The
folder is not called ``node``: onnx 1.23's loader generates ``kind="node"`` from its own
Python cases and ignores ``data_dir`` for it::

    DIR/manifest.json                       suite version, content hash, cases and tags
    DIR/README.md                           this layout, for people
    DIR/upsample/test_upsample_<id>/model.onnx
    DIR/upsample/test_upsample_<id>/test_data_set_0/input_0.pb   X
    DIR/upsample/test_upsample_<id>/test_data_set_0/input_1.pb   scales (v9-input form only)
    DIR/upsample/test_upsample_<id>/test_data_set_0/output_0.pb  Y, the expected output
    DIR/upsample/test_upsample_<id>/expect_refusal.json          must-refuse cases only
    DIR/upgraded/test_upsample_<id>/...     the same case as a Resize model (same layout)

A case that must be refused (an invalid node: scales below 1, NaN or infinite, one scale
too few or too many, an unknown mode) has no ``output_0.pb`` and, beside ``model.onnx``, the
marker ``expect_refusal.json``: ``{"expect": "refusal", "reason": "<what is invalid and what
the spec says>"}`` (onnx's loader ignores files it does not know). A runtime passes it by
refusing the model or the run.

``DIR/upgraded`` holds, for every case that :func:`onnx_upsample.onnx.upgrade` converts, the
``Resize`` model it writes (default target opset), with the same inputs and expected output;
the manifest lists each case it does not convert, with the reason. The content hash covers
both trees. ``load(DIR, form="upgraded")`` reads that tree, with the same case IDs.

Every expected output comes from onnx-upsample's kernel and is checked before anything is
written (see :mod:`._checks`): against the slow reference (every element up to
``FULL_REFERENCE_LIMIT`` elements, a sample beyond), against the case's model run by onnx's
ReferenceEvaluator with onnx-upsample's operator (every element), and against onnxruntime
where it is installed: bit-identical where the case says ORT runs it exactly, different
where the case documents an ORT difference, refused where ORT has no kernel.
"""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._errors import UpsampleError
from .._spec.versions import DEFAULT_DOMAINS
from ._cases import ORT_MEASURED, SUITE_VERSION, Case, all_cases
from ._checks import OrtCheck, evaluate_model, expected_output, refusals
from ._grade import compare, same_bits
from ._inputs import make_input
from ._readme import readme

SUITE_NAME = "onnx-upsample Upsample conformance suite"
MANIFEST = "manifest.json"
README = "README.md"
CASES_FOLDER = "upsample"  # the loader's "kind"
UPGRADED_FOLDER = "upgraded"
FORMS = (CASES_FOLDER, UPGRADED_FOLDER)
DATA_SET = "test_data_set_0"
REFUSAL_MARKER = "expect_refusal.json"

Progress = Callable[[int, int, str], None]


@dataclass(frozen=True)
class SuiteCase:
    """A case as read back from an exported suite (of the form its :class:`Suite` has)."""

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

    @property
    def must_refuse(self) -> str | None:
        """Why a runtime must refuse the case (one line), or None for an ordinary case."""
        reason = self.info.get("must_refuse")
        return None if reason is None else str(reason)

    def inputs(self) -> list[np.ndarray]:
        return read_inputs(self.path)

    def input_names(self) -> list[str]:
        return [_read_tensor(p)[0] for p in _data_files(self.path, "input")]

    def expected(self) -> np.ndarray:
        if self.must_refuse is not None:
            raise UpsampleError(f"case {self.id} must be refused ({self.must_refuse}); it has "
                                "no expected output: check must_refuse first")
        return _read_tensor(self.path / DATA_SET / "output_0.pb")[1]


@dataclass(frozen=True)
class Suite:
    """An exported suite: its manifest and its cases of one form (``upsample`` or
    ``upgraded``)."""

    directory: Path
    manifest: dict[str, Any]
    cases: tuple[SuiteCase, ...]
    form: str = CASES_FOLDER

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
    return _parse_tensor(path.read_bytes())


def _parse_tensor(data: bytes) -> tuple[str, np.ndarray]:
    import onnx
    from onnx import numpy_helper

    tensor = onnx.TensorProto()
    tensor.ParseFromString(data)
    return tensor.name, numpy_helper.to_array(tensor)


def _tensor_bytes(name: str, array: np.ndarray) -> bytes:
    from onnx import numpy_helper

    return numpy_helper.from_array(array, name).SerializeToString()


def _hash_files(case_dir: Path) -> str:
    return _hash_contents(_read_files(case_dir))


def _read_files(case_dir: Path) -> dict[str, bytes]:
    """Every file of a case directory, by its path relative to it."""
    return {path.relative_to(case_dir).as_posix(): path.read_bytes()
            for path in case_dir.rglob("*") if path.is_file()}


def _hash_contents(files: dict[str, bytes]) -> str:
    digest = hashlib.sha256()
    for name in sorted(files):
        digest.update(name.encode() + b"\0")
        digest.update(hashlib.sha256(files[name]).digest())
    return digest.hexdigest()


@dataclass(frozen=True)
class CaseFiles:
    """A case's files as read once and checked against the manifest's hash: what a grader
    runs and grades, whatever writes into the suite afterwards."""

    model: bytes
    inputs: list[np.ndarray]
    #: the expected output; None for a case that must be refused
    expected: np.ndarray | None


def read_case(case: SuiteCase) -> CaseFiles:
    """The files of ``case``, each read once, checked against the hash the manifest records
    for the case (of its form), and parsed from the bytes that were checked.

    Raises
    ------
    UpsampleError
        If a file is missing, or the files are not the ones exported (a runtime, or anything
        else, wrote into the suite since).
    """
    upgraded = case.info.get("upgraded")
    digest = (upgraded["sha256"] if case.path.parent.name == UPGRADED_FOLDER and upgraded
              else case.info["sha256"])
    try:
        files = _read_files(case.path)
    except OSError as error:
        raise UpsampleError(f"case {case.id}: its files cannot be read ({error})") from None
    if _hash_contents(files) != digest:
        raise UpsampleError(f"case {case.id}: its files in the suite changed since export "
                            "(hash mismatch)")
    inputs = sorted((name for name in files if name.startswith(f"{DATA_SET}/input_")),
                    key=lambda name: int(name.rsplit("_", 1)[1].split(".")[0]))
    output = files.get(f"{DATA_SET}/output_0.pb")
    return CaseFiles(files["model.onnx"], [_parse_tensor(files[name])[1] for name in inputs],
                     None if output is None else _parse_tensor(output)[1])


def _hash_key(form: str, case_id: str) -> str:
    # suite 1.0's keys are the bare IDs; the upgraded tree's are prefixed
    return case_id if form == CASES_FOLDER else f"{form}/{case_id}"


def _suite_hash(case_hashes: dict[str, str]) -> str:
    lines = "".join(f"{case_id} {digest}\n" for case_id, digest in sorted(case_hashes.items()))
    return "sha256:" + hashlib.sha256(lines.encode()).hexdigest()


def _write_case(case_dir: Path, model: bytes, inputs: list[np.ndarray],
                expected: np.ndarray | None, refusal: str | None) -> str:
    """One case directory; returns its hash."""
    (case_dir / DATA_SET).mkdir(parents=True)
    (case_dir / "model.onnx").write_bytes(model)
    names = ["X", "scales"]
    for index, array in enumerate(inputs):
        (case_dir / DATA_SET / f"input_{index}.pb").write_bytes(
            _tensor_bytes(names[index], array))
    if expected is not None:
        (case_dir / DATA_SET / "output_0.pb").write_bytes(_tensor_bytes("Y", expected))
    if refusal is not None:
        (case_dir / REFUSAL_MARKER).write_text(
            json.dumps({"expect": "refusal", "reason": refusal}) + "\n")
    return _hash_files(case_dir)


# -------------------------------------------------------------------------------- export

def export(directory: str | os.PathLike[str], *, full: bool = False, check_ort: bool = True,
           progress: Progress | None = None) -> Suite:
    """Write the ONNX ``Upsample`` (versions 1, 7, 9, 10) conformance suite to ``directory``.

    Parameters
    ----------
    directory
        Where to write it; must not exist, be empty, or hold an earlier export (replaced).
    full
        Add the large cases (outputs of 16-64 MB, the outputs longer than 2**24).
    check_ort
        Check every case against onnxruntime too, when it is installed.
    progress
        Called as ``progress(done, total, case_id)`` after each case.

    Returns
    -------
    Suite
        The suite as written (its manifest and its ``upsample`` cases).
    """
    import onnx  # noqa: F401 - fails here, with the extra's name, if onnx is missing

    from ..onnx.convert import DEFAULT_UPGRADE_OPSET
    from ._models import build_model, feeds

    target = Path(directory).absolute()
    _check_target(target)
    cases = all_cases(full)
    ort = OrtCheck.start(check_ort)
    hashes: dict[str, str] = {}
    records = []
    not_converted: dict[str, str] = {}
    from ..io.atomic import atomic_path

    # a hidden folder beside the target that replaces it (an earlier suite only) when whole
    with atomic_path(str(target), directory=True, replaces=_replaceable,
                     replaces_what="a suite") as building:
        build = Path(building)
        for done, case in enumerate(cases, 1):
            x = make_input(case)
            model = build_model(case)
            inputs = feeds(case, x)
            model_bytes = model.SerializeToString()
            expected: np.ndarray | None = None
            if case.must_refuse is not None:
                refusals(case, model, inputs, x)
            else:
                expected = expected_output(case, x)
                through_model = evaluate_model(model, inputs)
                if not same_bits(expected, through_model):
                    raise UpsampleError(f"case {case.id}: its model gives "
                                        f"{compare(expected, through_model).detail}")
            ort.check(case, model_bytes, inputs, expected)
            hashes[case.id] = _write_case(build / CASES_FOLDER / case.name, model_bytes,
                                          inputs, expected, case.must_refuse)
            upgraded: dict[str, Any] | None = None
            if expected is None:
                not_converted[case.id] = ("the case must be refused: an invalid Upsample has "
                                          "no Resize to turn into")
            else:
                written = _export_upgraded(case, model, inputs, expected, build, ort)
                if isinstance(written, str):
                    not_converted[case.id] = written
                else:
                    upgraded = written
                    hashes[_hash_key(UPGRADED_FOLDER, case.id)] = written["sha256"]
            records.append(_record(case, expected, hashes[case.id], upgraded))
            if progress is not None:
                progress(done, len(cases), case.id)
        manifest = _manifest(records, hashes, full, ort, DEFAULT_UPGRADE_OPSET, not_converted)
        (build / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
        (build / README).write_text(readme(manifest))
    return load(target)


def _export_upgraded(case: Case, model: Any, inputs: list[np.ndarray], expected: np.ndarray,
                     build: Path, ort: OrtCheck) -> dict[str, Any] | str:
    """The case's Resize model, written beside it; or why ``upgrade`` does not convert it."""
    from ..onnx import upgrade

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # v10 and 'bilinear' warn by design
            resize = upgrade(model)
    except UpsampleError as error:
        return str(error).splitlines()[0]
    model_bytes = resize.SerializeToString()
    ort.check_upgraded(case, model_bytes, inputs, expected)
    path = f"{UPGRADED_FOLDER}/{case.name}"
    digest = _write_case(build / path, model_bytes, inputs, expected, None)
    opset = next(o.version for o in resize.opset_import if o.domain in DEFAULT_DOMAINS)
    return {"path": path, "opset": int(opset), "sha256": digest}


def _record(case: Case, expected: np.ndarray | None, digest: str,
            upgraded: dict[str, Any] | None) -> dict[str, Any]:
    return {
        "id": case.id, "path": f"{CASES_FOLDER}/{case.name}", "group": case.group,
        "description": case.description, "form": case.form, "opset": case.opset,
        "mode": case.mode, "dtype": case.dtype, "input_shape": list(case.shape),
        "scales": list(case.scales),
        "output_shape": None if expected is None else list(expected.shape),
        "ort": case.ort, "tags": list(case.tags), "sha256": digest,
        "must_refuse": case.must_refuse, "upgraded": upgraded,
    }


def _manifest(records: list[dict[str, Any]], hashes: dict[str, str], full: bool,
              ort: OrtCheck, opset: int, not_converted: dict[str, str]) -> dict[str, Any]:
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
        "ort_findings": ort.all_findings(),
        "grades": "exact: bitwise, any NaN equals any NaN, -0.0 != +0.0",
        "must_refuse_marker": REFUSAL_MARKER,
        "upgraded": {"folder": UPGRADED_FOLDER, "opset": opset,
                     "by": "onnx_upsample.onnx.upgrade", "not_converted": not_converted},
        "cases": records,
    }


def _foreign_files(path: Path) -> list[str]:
    """What in folder ``path`` is not an earlier suite's: every name, if it is no suite."""
    names = sorted(p.name for p in path.iterdir())
    if not names or not _is_suite(path):
        return names
    ours = {MANIFEST, README, *FORMS}
    return [name for name in names if name not in ours]


def _replaceable(path: Path) -> bool:
    """What an export may replace: an earlier suite and nothing else, or an empty folder."""
    return path.is_dir() and not _foreign_files(path)


def _is_suite(path: Path) -> bool:
    try:
        return json.loads((path / MANIFEST).read_text()).get("suite") == SUITE_NAME
    except (OSError, ValueError, AttributeError):
        return False


def _check_target(target: Path) -> None:
    if target.exists() and not target.is_dir():
        raise UpsampleError(f"suite directory {str(target)!r} is a file; give a new "
                            "directory name")
    if target.is_dir() and not _replaceable(target):
        raise UpsampleError(
            f"suite directory {str(target)!r} exists and holds other files "
            f"({', '.join(_foreign_files(target)[:3])}); give a new or empty directory")
    if not target.parent.is_dir():
        raise UpsampleError(f"suite directory {str(target)!r}: its parent folder does not "
                            "exist; create it first")


# ---------------------------------------------------------------------------------- load

def load(directory: str | os.PathLike[str], *, verify: bool = True,
         form: str = CASES_FOLDER) -> Suite:
    """Read an exported suite; with ``verify``, check every file (of both forms) against
    its hash.

    ``form`` is ``"upsample"`` (the Upsample models) or ``"upgraded"`` (the Resize models
    :func:`onnx_upsample.onnx.upgrade` writes for them; the cases it converts, with the
    same IDs).
    """
    if form not in FORMS:
        raise UpsampleError(f"form is {form!r}; expected one of {', '.join(map(repr, FORMS))}")
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
    hashes: dict[str, str] = {}
    for record in manifest["cases"]:
        upgraded = record.get("upgraded")
        trees = [(CASES_FOLDER, record["path"], record["sha256"])]
        if upgraded:
            trees.append((UPGRADED_FOLDER, upgraded["path"], upgraded["sha256"]))
        for tree, relative, digest in trees:
            path = root / relative
            if verify:
                _verify_case(root, record["id"], relative, digest, hashes, tree)
            if tree == form:
                cases.append(SuiteCase(record["id"], path, record))
    if verify and _suite_hash(hashes) != manifest["content_hash"]:
        raise UpsampleError(f"suite {str(root)!r}: content hash mismatch; export it again")
    if form == UPGRADED_FOLDER and "upgraded" not in manifest:
        raise UpsampleError(f"suite {str(root)!r} (version {manifest.get('version')}) has no "
                            "upgraded models; export it again with this onnx-upsample")
    return Suite(root, manifest, tuple(cases), form)


def _verify_case(root: Path, case_id: str, relative: str, digest: str,
                 hashes: dict[str, str], tree: str) -> None:
    path = root / relative
    if not path.is_dir():
        raise UpsampleError(f"suite {str(root)!r}: case {case_id} is missing ({relative}); "
                            "export the suite again")
    key = _hash_key(tree, case_id)
    hashes[key] = _hash_files(path)
    if hashes[key] != digest:
        raise UpsampleError(f"suite {str(root)!r}: the files of case {case_id} ({relative}) "
                            "changed since export (hash mismatch); export it again")
