"""The grader's reaches into nbgrader's and nbformat's internals (grader/nbgrader_compat.py) still hold: the
upstream code each one copies or answers for is the code it was checked against, and each behaves as
nbgrader's own does on the same input."""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import inspect
from datetime import UTC

import nbformat
import pytest

from grader import nbgrader_compat


def _resolve(name: str):
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(name)


@pytest.mark.parametrize("name", sorted(nbgrader_compat.FINGERPRINTS))
def test_the_upstream_code_relied_on_is_the_code_checked(name):
    """A pin bump that changes one of these fails here: re-check the reach named in grader/nbgrader_compat.py's
    header against the new source, then update its fingerprint and CHECKED_AGAINST."""
    got = hashlib.sha256(inspect.getsource(_resolve(name)).encode()).hexdigest()[:16]
    versions = {p: importlib.metadata.version(p) for p in nbgrader_compat.CHECKED_AGAINST}
    assert got == nbgrader_compat.FINGERPRINTS[name], (
        f"{name} changed (installed {versions}, checked against {nbgrader_compat.CHECKED_AGAINST})")


@pytest.mark.parametrize("text", ["2026-12-01 03:04:05.123456 UTC", "2026-12-01 03:04:05.123456 Europe/Paris",
                                  "2099-01-01 00:00:00", "2026-12-01T03:04:05+02:00", "2026-12-01 03:04:05 -0500"])
def test_times_are_read_as_nbgrader_reads_them(text):
    from nbgrader.utils import parse_utc

    assert nbgrader_compat.parse_utc(text) == parse_utc(text).replace(tzinfo=UTC)


def test_a_notebook_read_in_two_halves_is_nbformats_reading():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1"), nbformat.v4.new_markdown_cell("hi")])
    text = nbformat.writes(nb)
    assert nbgrader_compat.notebook_from_json(nbgrader_compat.nbformat_json(text)) == nbformat.reads(text, 4)
    v3 = nbformat.writes(nbformat.convert(nb, 3), 3)
    ours, theirs = nbgrader_compat.notebook_from_json(nbgrader_compat.nbformat_json(v3)), nbformat.reads(v3, 4)
    for c in ours.cells + theirs.cells:  # converting from version 3 gives each cell a new random id
        c.pop("id")
    assert ours == theirs
    with pytest.raises(nbformat.NBFormatError, match="Unsupported nbformat version 9"):
        nbgrader_compat.notebook_from_json({"nbformat": 9, "nbformat_minor": 0})


def test_the_metadata_check_refuses_what_nbgraders_refuses():
    from nbgrader.nbgraderformat import ValidationError

    def cell(gid):
        c = nbformat.v4.new_code_cell("1")
        c.metadata["nbgrader"] = {"grade_id": gid, "grade": True, "solution": False, "locked": True,
                                  "points": 1, "schema_version": 3, "task": False}
        return c

    good = nbformat.v4.new_notebook(cells=[cell("a"), cell("b")])
    nbgrader_compat.check_cell_metadata(good)
    nbgrader_compat.metadata_validator().validate_nb(good)
    twice = nbformat.v4.new_notebook(cells=[cell("a"), cell("a")])
    for check in (nbgrader_compat.check_cell_metadata, nbgrader_compat.metadata_validator().validate_nb):
        with pytest.raises(ValidationError):
            check(twice)
