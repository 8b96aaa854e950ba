"""collect: an LMS download (zip or folder) into submitted/; archive tricks refused and listed, ids and
names sanitised, nothing lands outside the course."""

from __future__ import annotations

import os
import stat
import zipfile

import pytest

from grader import collect
from grader.collect import from_folder
from grader.course import SAFE_ID, Course, safe_id

CH = "01-tensors"
NB = '{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}'


@pytest.fixture
def course(tmp_path):
    sol = tmp_path / "course" / "solutions" / CH
    sol.mkdir(parents=True)
    for name in ("a-basics", "b-more"):
        (sol / f"{name}.ipynb").write_text(NB)
    return Course(tmp_path / "course")


def _zip(path, entries):
    """entries: name -> text, or (ZipInfo, text) for entries with special attributes."""
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in entries.items():
            if isinstance(data, tuple):
                zf.writestr(*data)
            else:
                zf.writestr(name, data)
    return path


def _link_entry(name, target):
    info = zipfile.ZipInfo(name)
    info.create_system = 3
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return (info, target)


def _submitted(course):
    return sorted(str(p.relative_to(course.submitted)) for p in course.submitted.rglob("*")
                  if p.is_file() and ".torchcourse" not in p.parts)


def test_a_zip_is_collected_by_student_and_notebook(course, tmp_path):
    z = _zip(tmp_path / "lms.zip", {"smithjane_1234_5678_a-basics-1.ipynb": NB,
                                    "smithjane_1234_5679_b-more.ipynb": NB,
                                    "doe.john_a-basics.ipynb": NB})
    done = from_folder(course, CH, z)
    assert done.ids == {"smithjane (Canvas user 1234)": "smithjane_1234", "doe.john": "doe.john"}
    assert done.refused == []
    assert _submitted(course) == [f"doe.john/{CH}/a-basics.ipynb", f"doe.john/{CH}/timestamp.txt",
                                  f"smithjane_1234/{CH}/a-basics.ipynb", f"smithjane_1234/{CH}/b-more.ipynb",
                                  f"smithjane_1234/{CH}/timestamp.txt"]
    assert (course.submitted / "smithjane_1234" / CH / "timestamp.txt").read_text().endswith("UTC")


def test_entries_leaving_the_archive_are_refused_and_listed(course, tmp_path):
    z = _zip(tmp_path / "lms.zip", {"../../escape_1_1_a-basics.ipynb": NB, "/abs_1_a-basics.ipynb": NB,
                                    "ok\\..\\..\\win_1_a-basics.ipynb": NB, "kim_a-basics.ipynb": NB})
    done = from_folder(course, CH, z)
    refused = dict(done.refused)
    assert set(refused) == {"../../escape_1_1_a-basics.ipynb", "/abs_1_a-basics.ipynb",
                            "ok\\..\\..\\win_1_a-basics.ipynb"}
    assert all("leaves the archive" in why for why in refused.values())
    assert done.ids == {"kim": "kim"}
    assert not list(tmp_path.rglob("escape_1_1_a-basics.ipynb")) and not list(tmp_path.rglob("win_1_a-basics.ipynb"))


def test_links_and_special_files_in_an_archive_are_refused_and_listed(course, tmp_path):
    fifo = zipfile.ZipInfo("pipe_1_a-basics.ipynb")
    fifo.create_system = 3
    fifo.external_attr = (stat.S_IFIFO | 0o644) << 16
    z = _zip(tmp_path / "lms.zip", {"link_1_a-basics.ipynb": _link_entry("link_1_a-basics.ipynb", "/etc/passwd"),
                                    "pipe": (fifo, NB), "kim_a-basics.ipynb": NB})
    done = from_folder(course, CH, z)
    assert dict(done.refused) == {"link_1_a-basics.ipynb": "a symbolic link in the archive",
                                  "pipe_1_a-basics.ipynb": "not a regular file"}
    assert done.ids == {"kim": "kim"}
    assert _submitted(course) == [f"kim/{CH}/a-basics.ipynb", f"kim/{CH}/timestamp.txt"]


def test_an_oversized_entry_is_refused_the_rest_collected(course, tmp_path, monkeypatch):
    monkeypatch.setattr(collect, "MAX_FILE", 1000)
    z = _zip(tmp_path / "lms.zip", {"big_1_a-basics.ipynb": NB + " " * 2000, "kim_a-basics.ipynb": NB})
    done = from_folder(course, CH, z)
    assert [e for e, _ in done.refused] == ["big_1_a-basics.ipynb"] and "limit" in done.refused[0][1]
    assert done.ids == {"kim": "kim"}


def test_an_archive_that_unpacks_too_large_is_refused_whole(course, tmp_path, monkeypatch):
    monkeypatch.setattr(collect, "MAX_TOTAL", 100)
    z = _zip(tmp_path / "lms.zip", {"a_1_a-basics.ipynb": NB, "b_1_a-basics.ipynb": NB})
    with pytest.raises(ValueError, match="unpacks to more than"):
        from_folder(course, CH, z)


def test_files_that_are_no_chapter_notebook_are_listed(course, tmp_path):
    z = _zip(tmp_path / "lms.zip", {"notes.txt": "hi", "kim_1_c-other.ipynb": NB, "kim_a-basics.ipynb": NB,
                                    "kim/.ipynb_checkpoints/a-basics-checkpoint.ipynb": NB})
    done = from_folder(course, CH, z)
    refused = dict(done.refused)
    assert refused["notes.txt"] == "not a notebook (.ipynb)"
    assert refused["kim_1_c-other.ipynb"] == "not one of a-basics, b-more"
    assert "checkpoint" in refused["kim/.ipynb_checkpoints/a-basics-checkpoint.ipynb"]


def test_a_folder_with_one_folder_per_student_and_a_link(course, tmp_path):
    src = tmp_path / "download"
    (src / "Ann Lee").mkdir(parents=True)
    (src / "Ann Lee" / "a-basics.ipynb").write_text(NB)
    (src / "bob").mkdir()
    (src / "bob" / "b-more.ipynb").symlink_to(course.root / "solutions" / CH / "b-more.ipynb")
    (src / "eve").symlink_to(course.root / "solutions")
    done = from_folder(course, CH, src)
    assert done.ids == {"Ann Lee": "ann_lee"}
    assert dict(done.refused) == {"bob/b-more.ipynb": "a symbolic link", "eve": "a symbolic link"}
    assert _submitted(course) == [f"ann_lee/{CH}/a-basics.ipynb", f"ann_lee/{CH}/timestamp.txt"]


def test_a_second_file_for_the_same_notebook_is_listed(course, tmp_path):
    z = _zip(tmp_path / "lms.zip", {"kim_a-basics.ipynb": NB, "kim_a-basics-1.ipynb": NB})
    done = from_folder(course, CH, z)
    assert done.refused == [("kim_a-basics-1.ipynb", "replaced by kim_a-basics.ipynb, another a-basics.ipynb "
                                                     "of kim")]


def test_neither_a_folder_nor_a_zip_is_an_error(course, tmp_path):
    (tmp_path / "x.txt").write_text("x")
    with pytest.raises(ValueError, match="neither a folder nor a zip"):
        from_folder(course, CH, tmp_path / "x.txt")


@pytest.mark.parametrize("raw, sid", [
    ("Smith, Jane", "smith_jane"),
    ("../../etc", "etc"),
    ("..", "student"),
    ("", "student"),
    ("-rf", "rf"),
    ("a/b\\c", "a_b_c"),
    ("Zoë Ünal", "zo_nal"),
    ("x" * 100, "x" * 64),
])
def test_unsafe_ids_are_sanitised(raw, sid):
    assert safe_id(raw) == sid
    assert SAFE_ID.match(safe_id(raw))


def test_two_people_with_one_id_ignoring_case_are_refused_with_a_message(course, tmp_path):
    src = tmp_path / "download"
    for raw in ("A" * 70, "a" * 70, "Jo Lee", "jo_lee", "kim"):
        (src / raw).mkdir(parents=True)
        (src / raw / "a-basics.ipynb").write_text(NB)
    done = from_folder(course, CH, src)
    assert done.ids == {"kim": "kim"}  # nobody renamed silently: the two clashing pairs are not collected
    refused = dict(done.refused)
    assert set(refused) == {f"{'A' * 70}/a-basics.ipynb", f"{'a' * 70}/a-basics.ipynb", "Jo Lee/a-basics.ipynb",
                            "jo_lee/a-basics.ipynb"}
    assert "Jo Lee and jo_lee would both get the student id jo_lee (ids are compared ignoring case)" in \
        refused["jo_lee/a-basics.ipynb"]
    assert course.students(CH) == ["kim"]


def test_the_command_line_lists_what_it_refused(course, tmp_path, capsys, cli):
    z = _zip(tmp_path / "lms.zip", {"../x_1_a-basics.ipynb": NB, "kim_a-basics.ipynb": NB,
                                    "l_1_a-basics.ipynb": _link_entry("l_1_a-basics.ipynb", "/etc")})
    assert cli(["--root", str(course.root), "collect", CH, "--from", str(z)]) == 0
    out, err = capsys.readouterr()
    assert f"{CH}: kim -> kim" in out
    assert "collect: refused ../x_1_a-basics.ipynb: its path leaves the archive" in err
    assert "collect: refused l_1_a-basics.ipynb: a symbolic link in the archive" in err
    assert "2 entries refused" in err
    assert os.listdir(course.submitted) == ["kim"]


def test_the_command_line_says_when_the_source_is_unusable(course, tmp_path, capsys, cli):
    (tmp_path / "grades.txt").write_text("not a download")
    assert cli(["--root", str(course.root), "collect", CH, "--from", str(tmp_path / "grades.txt")]) == 1
    assert "neither a folder nor a zip file" in capsys.readouterr().err


def test_a_corrupt_or_clashing_entry_is_refused_the_rest_collected(course, tmp_path):
    z = _zip(tmp_path / "lms.zip", {"bad_1_a-basics.ipynb": NB + "x" * 50, "kim_a-basics.ipynb": NB,
                                    "kim_b-more.ipynb": "file", "kim_b-more.ipynb/x_1_b-more.ipynb": NB})
    data = bytearray(z.read_bytes())
    at = data.index(b"x" * 50)
    data[at:at + 50] = b"y" * 50  # stored uncompressed: the CRC no longer matches
    z.write_bytes(bytes(data))
    done = from_folder(course, CH, z)
    refused = dict(done.refused)
    assert "BadZipFile" in refused["bad_1_a-basics.ipynb"]
    assert "could not be unpacked" in refused["kim_b-more.ipynb/x_1_b-more.ipynb"]
    assert not (course.submitted / "bad").exists()
    assert done.ids == {"kim": "kim"}


def test_two_entries_for_one_path_in_an_archive_are_listed(course, tmp_path):
    """'kim/a-basics.ipynb', 'kim/./a-basics.ipynb' and 'kim\\\\a-basics.ipynb' unpack to one file: the earlier
    ones were replaced without a word."""
    z = _zip(tmp_path / "lms.zip", {"kim/a-basics.ipynb": '{"n": 1}', "kim/./a-basics.ipynb": '{"n": 2}',
                                    "kim\\a-basics.ipynb": '{"n": 3}'})
    done = from_folder(course, CH, z)
    assert done.refused == [
        ("kim/a-basics.ipynb", "replaced by kim/./a-basics.ipynb, a second entry for the same file"),
        ("kim/./a-basics.ipynb", "replaced by kim\\a-basics.ipynb, a second entry for the same file")]
    assert (course.submitted / "kim" / CH / "a-basics.ipynb").read_text() == '{"n": 3}'
