"""collect never confuses two people: LMS downloads keep the LMS's user id (Canvas, Moodle, Blackboard), ids
compared ignoring case, no file over another person's, and from nbgrader's exchange only submissions whose
files belong to the student they name, dated no later than now and not changed after their date."""

from __future__ import annotations

import os
import pwd
from datetime import UTC, datetime, timedelta

import pytest

from grader.collect import from_exchange, from_folder
from grader.course import COURSE_ID, Course
from grader.lms import person_of
from grader.submission import TIME_FORMAT

CH = "01-tensors"
NB = '{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}'


@pytest.fixture
def course(tmp_path):
    sol = tmp_path / "course" / "solutions" / CH
    sol.mkdir(parents=True)
    for name in ("a-basics", "b-more"):
        (sol / f"{name}.ipynb").write_text(NB)
    return Course(tmp_path / "course")


def _download(tmp_path, names: dict[str, str]):
    src = tmp_path / "download"
    for name, text in names.items():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_text(text)
    return src


@pytest.mark.parametrize("name, source, key, sid", [
    ("smithjane_1001_88001_a-basics.ipynb", "canvas", "1001", "smithjane_1001"),
    ("smithjane_late_1002_88002_a-basics-1.ipynb", "canvas", "1002", "smithjane_1002"),
    ("Jane Smith_4410123_assignsubmission_file_a-basics.ipynb", "moodle", "4410123", "jane_smith_4410123"),
    ("Jane Smith_4410123_assignsubmission_file_/a-basics.ipynb", "moodle", "4410123", "jane_smith_4410123"),
    ("Chapter 1_jsmith_attempt_2026-11-30-14-05-09_a-basics.ipynb", "blackboard", "jsmith", "jsmith"),
    ("Ann Lee/a-basics.ipynb", "name", "Ann Lee", "ann_lee"),
    ("kim_a-basics.ipynb", "name", "kim", "kim"),
])
def test_each_lms_format_gives_the_lms_user_id(name, source, key, sid):
    from pathlib import Path

    person = person_of(Path(name))
    assert (person.source, person.key, person.sid) == (source, key, sid)


def test_canvas_people_with_one_name_prefix_stay_two_people(course, tmp_path):
    src = _download(tmp_path, {"smithjane_1001_5001_a-basics.ipynb": '{"who": 1}',
                               "smithjane_1002_5002_a-basics.ipynb": '{"who": 2}'})
    done = from_folder(course, CH, src)
    assert done.refused == []
    assert sorted(done.ids.values()) == ["smithjane_1001", "smithjane_1002"]
    assert (course.submitted / "smithjane_1001" / CH / "a-basics.ipynb").read_text() == '{"who": 1}'
    assert (course.submitted / "smithjane_1002" / CH / "a-basics.ipynb").read_text() == '{"who": 2}'


def test_moodle_and_blackboard_downloads_are_collected_by_user(course, tmp_path):
    src = _download(tmp_path, {"Jane Smith_4410123_assignsubmission_file_/a-basics.ipynb": NB,
                               "Jane Smith_4410124_assignsubmission_file_/a-basics.ipynb": NB,
                               "Chapter 1_jsmith_attempt_2026-11-30-14-05-09_b-more.ipynb": NB,
                               "Chapter 1_jsmith_attempt_2026-11-30-14-05-09.txt": "Name: Jane Smith (jsmith)"})
    done = from_folder(course, CH, src)
    assert sorted(done.ids.values()) == ["jane_smith_4410123", "jane_smith_4410124", "jsmith"]
    assert [why for _, why in done.refused] == ["not a notebook (.ipynb)"]  # Blackboard's receipt


def test_a_later_download_never_writes_into_another_persons_folder(course, tmp_path):
    first = _download(tmp_path / "1", {"Jo Lee/a-basics.ipynb": '{"jo": "Lee"}'})
    assert from_folder(course, CH, first).ids == {"Jo Lee": "jo_lee"}
    second = _download(tmp_path / "2", {"JO_LEE/a-basics.ipynb": '{"jo": "other"}'})
    done = from_folder(course, CH, second)
    assert done.ids == {}
    assert "submitted/jo_lee holds the work of name:Jo Lee, not name:JO_LEE" in done.refused[0][1]
    assert (course.submitted / "jo_lee" / CH / "a-basics.ipynb").read_text() == '{"jo": "Lee"}'
    again = _download(tmp_path / "3", {"Jo Lee/b-more.ipynb": NB})  # the same person again: collected
    assert from_folder(course, CH, again).ids == {"Jo Lee": "jo_lee"}


# nbgrader's exchange: these need root, to give files to other users as a student's submission would have.
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to make files owned by other users")


@pytest.fixture
def exchange(tmp_path, monkeypatch):
    root = tmp_path / "exchange"
    (root / COURSE_ID / "inbound").mkdir(parents=True)
    monkeypatch.setenv("TORCHCOURSE_EXCHANGE", str(root))
    return root / COURSE_ID / "inbound"


def _submit(inbound, user, when: datetime, owner: str | None = None, text: str = NB, secret: str = "s3cret"):
    """A folder as `nbgrader submit` makes it, its files owned by `owner` (default: the user it names)."""
    folder = inbound / f"{user}+{CH}+{when.strftime(TIME_FORMAT)}+abcdefghijkl"
    folder.mkdir()
    (folder / "a-basics.ipynb").write_text(text)
    (folder / "timestamp.txt").write_text(when.strftime(TIME_FORMAT))
    (folder / "submission_secret.txt").write_text(secret)
    if owner != "":
        uid = pwd.getpwnam(owner or user).pw_uid
        for p in [folder, *folder.iterdir()]:
            os.lchown(p, uid, -1)
    return folder


NOW = datetime.now(UTC)


@pytest.fixture(autouse=True)
def _dated_now(monkeypatch):
    """Each test dates its submissions from the moment it runs, not from import: collect refuses files
    changed more than 5 minutes after their date, and much of a suite can run between the two."""
    monkeypatch.setitem(globals(), "NOW", datetime.now(UTC))


@needs_root
def test_a_submission_as_another_user_is_refused_and_the_real_one_collected(course, exchange):
    _submit(exchange, "nobody", NOW - timedelta(minutes=1), text='{"real": 1}')
    fake = _submit(exchange, "nobody", NOW, owner="daemon", text='{"fake": 1}')
    done = from_exchange(course, CH)
    assert done.ids == {"nobody": "nobody"}
    assert [e for e, _ in done.refused] == [fake.name]
    assert "names nobody but the folder belongs to daemon" in done.refused[0][1]
    assert "cheating attempt" in done.refused[0][1]
    assert (course.submitted / "nobody" / CH / "a-basics.ipynb").read_text() == '{"real": 1}'
    assert (course.submitted / "nobody" / ".torchcourse" / f"{CH}.secret").read_text() == "s3cret"


@needs_root
def test_one_foreign_file_in_a_submission_refuses_it(course, exchange):
    folder = _submit(exchange, "nobody", NOW)
    os.lchown(folder / "a-basics.ipynb", pwd.getpwnam("daemon").pw_uid, -1)
    done = from_exchange(course, CH)
    assert done.ids == {} and "a-basics.ipynb belongs to daemon" in done.refused[0][1]
    assert course.students(CH) == []


@needs_root
def test_a_future_or_back_dated_submission_is_refused(course, exchange):
    _submit(exchange, "nobody", NOW - timedelta(minutes=2), text='{"real": 1}')
    future = _submit(exchange, "nobody", datetime(2099, 1, 1, tzinfo=UTC), text='{"2099": 1}')
    _submit(exchange, "daemon", NOW - timedelta(hours=3))  # files written now, dated 3 hours ago
    done = from_exchange(course, CH)
    refused = dict(done.refused)
    assert "in the future" in refused[future.name]
    assert any("back-dated or altered after submission" in why for why in refused.values())
    assert done.ids == {"nobody": "nobody"}
    assert (course.submitted / "nobody" / CH / "a-basics.ipynb").read_text() == '{"real": 1}'


def test_the_collecting_user_may_submit_for_a_student_and_links_are_not_followed(course, exchange, tmp_path):
    """Files of the user who collects (here: whoever runs the test) are accepted for any student: a student cannot
    make them. A link inside a submission is never followed (it could name the instructor's solution)."""
    secret = tmp_path / "solution.ipynb"
    secret.write_text('{"solution": 1}')
    folder = _submit(exchange, "alice", NOW - timedelta(minutes=1), owner="")
    (folder / "b-more.ipynb").symlink_to(secret)
    done = from_exchange(course, CH)
    assert done.ids == {"alice": "alice"}
    assert dict(done.refused) == {f"{folder.name}/b-more.ipynb": "could not be read (Too many levels of symbolic "
                                                                 "links)"}
    assert sorted(p.name for p in (course.submitted / "alice" / CH).iterdir()) == ["a-basics.ipynb", "timestamp.txt"]
    # A rerun with nothing newer changes nothing; a newer submission replaces the older one.
    assert from_exchange(course, CH).ids == {"alice": "alice"}
    _submit(exchange, "alice", NOW, owner="", text='{"newer": 1}')
    from_exchange(course, CH)
    assert (course.submitted / "alice" / CH / "a-basics.ipynb").read_text() == '{"newer": 1}'


def test_two_users_whose_names_differ_only_in_case_are_both_refused(course, exchange):
    _submit(exchange, "Kim", NOW - timedelta(minutes=1), owner="")
    _submit(exchange, "kim", NOW - timedelta(minutes=1), owner="")
    done = from_exchange(course, CH)
    assert done.ids == {}
    assert all("Kim and kim would both get the student id kim" in why for _, why in done.refused)
    assert len(done.refused) == 2


def test_the_command_line_lists_refused_exchange_submissions(course, exchange, capsys, cli):
    _submit(exchange, "bob", NOW - timedelta(minutes=1), owner="")
    _submit(exchange, "bob", datetime(2099, 1, 1, tzinfo=UTC), owner="")
    assert cli(["--root", str(course.root), "collect", CH]) == 0
    out, err = capsys.readouterr()
    assert f"{CH}: bob -> bob" in out and f"{CH}: 1 submissions in" in out
    assert "collect: refused bob+01-tensors+2099-01-01" in err and "in the future" in err


def test_a_learners_own_file_name_never_names_another_person(course, tmp_path):
    """The part after an LMS's prefix is the learner's file name: one that looks like another format's prefix,
    naming someone else, is still the uploader's. (Blackboard's user was read from the last such prefix: zed's
    upload replaced victim's notebook; a Canvas upload named like a Blackboard one kept smithjane from being
    collected.)"""
    stamp = "2026-11-30-14-05-09"
    src = _download(tmp_path, {
        f"Chapter 1_victim_attempt_{stamp}_a-basics.ipynb": '{"victim": 1}',
        f"Chapter 1_zed_attempt_{stamp}_x_victim_attempt_{stamp}_a-basics.ipynb": '{"zed": 1}',
        "smithjane_1001_5001_b-more.ipynb": '{"jane": 1}',
        f"mallory_2002_5005_x_smithjane 1001_attempt_{stamp}_b-more.ipynb": '{"mallory": 1}'})
    done = from_folder(course, CH, src)
    assert done.refused == []
    assert sorted(done.ids.values()) == ["mallory_2002", "smithjane_1001", "victim", "zed"]
    for sid, nb, who in [("victim", "a-basics", "victim"), ("zed", "a-basics", "zed"),
                         ("smithjane_1001", "b-more", "jane"), ("mallory_2002", "b-more", "mallory")]:
        assert (course.submitted / sid / CH / f"{nb}.ipynb").read_text() == f'{{"{who}": 1}}'


def test_blackboard_user_names_with_underscores_are_never_merged(course, tmp_path):
    """Blackboard's assignment and user names may both hold '_': j_smith and a_smith were both read as "smith"
    and one's notebook replaced the other's. Blackboard's receipts name the user; without one, a name that can
    be split two ways is refused with a message."""
    stamp = "2026-11-30-14-05-09"
    files = {f"Chapter_1_j_smith_attempt_{stamp}_a-basics.ipynb": '{"j": 1}',
             f"Chapter_1_a_smith_attempt_{stamp}_a-basics.ipynb": '{"a": 1}'}
    done = from_folder(course, CH, _download(tmp_path / "1", files))
    assert done.ids == {} and course.students(CH) == []
    assert [why.startswith("cannot tell where Blackboard's assignment name ends") for _, why in done.refused] == \
        [True, True]
    receipt = "Name: Jo Smith ({})\nAssignment: Chapter_1\nDate Submitted: Monday\n\nSubmission Field:\nName: X (a)\n"
    files[f"Chapter_1_j_smith_attempt_{stamp}.txt"] = receipt.format("j_smith")
    done = from_folder(course, CH, _download(tmp_path / "2", files))
    assert sorted(done.ids.values()) == ["a_smith", "j_smith"]  # a_smith's user from the assignment's name
    assert (course.submitted / "j_smith" / CH / "a-basics.ipynb").read_text() == '{"j": 1}'
    assert (course.submitted / "a_smith" / CH / "a-basics.ipynb").read_text() == '{"a": 1}'


def test_a_long_lms_name_is_shortened_never_the_user_id(course, tmp_path):
    """Ids are at most 64 characters: two Canvas users whose (long) names agree lost the end of their user ids
    to the cut and could not be collected."""
    name = "hernandezgarciadelosangeles" * 3
    src = _download(tmp_path, {f"{name}_1001_5001_a-basics.ipynb": '{"who": 1}',
                               f"{name}_1002_5002_a-basics.ipynb": '{"who": 2}',
                               f"{name.title()} {name}_4410123_assignsubmission_file_a-basics.ipynb": NB})
    done = from_folder(course, CH, src)
    assert done.refused == []
    assert sorted(done.ids.values()) == sorted([name[:59] + "_1001", name[:59] + "_1002", name[:56] + "_4410123"])
    assert (course.submitted / f"{name[:59]}_1002" / CH / "a-basics.ipynb").read_text() == '{"who": 2}'


def test_a_folder_collect_did_not_make_is_never_written_into_by_another_person(course, tmp_path):
    """A submitted/ folder with no record of whose it is (nbgrader's own collect, or copied by hand) was taken
    by the first person whose id matched, overwriting the work in it; one whose name differed only in case
    ("Kim") became a second student beside "kim"."""
    (course.submitted / "jo_lee" / CH).mkdir(parents=True)
    (course.submitted / "jo_lee" / CH / "a-basics.ipynb").write_text('{"unix user": "jo_lee"}')
    (course.submitted / "Kim" / CH).mkdir(parents=True)
    (course.submitted / "Kim" / CH / "a-basics.ipynb").write_text('{"unix user": "Kim"}')
    done = from_folder(course, CH, _download(tmp_path, {"Jo Lee/a-basics.ipynb": NB, "kim/a-basics.ipynb": NB}))
    assert done.ids == {}
    refused = dict(done.refused)
    assert "submitted/jo_lee holds work that no collect recorded as anyone's" in refused["Jo Lee/a-basics.ipynb"]
    assert "write 'name:Jo Lee' into submitted/jo_lee/.torchcourse/identity" in refused["Jo Lee/a-basics.ipynb"]
    assert "submitted/Kim already exists and ids are compared ignoring case" in refused["kim/a-basics.ipynb"]
    assert (course.submitted / "jo_lee" / CH / "a-basics.ipynb").read_text() == '{"unix user": "jo_lee"}'
    assert course.students(CH) == ["Kim", "jo_lee"]
    (course.submitted / "jo_lee" / ".torchcourse").mkdir()
    (course.submitted / "jo_lee" / ".torchcourse" / "identity").write_text("name:Jo Lee\n")  # claimed by hand
    assert from_folder(course, CH, _download(tmp_path / "2", {"Jo Lee/a-basics.ipynb": NB})).ids == {"Jo Lee": "jo_lee"}


def test_a_folder_naming_the_chapter_in_another_form_is_listed_not_skipped(course, exchange, capsys, cli):
    """A folder with an extra '+' part after the chapter was passed over without a word: the student's
    submission was neither collected nor listed."""
    stamp = (NOW - timedelta(minutes=1)).strftime(TIME_FORMAT)
    for name in (f"bob+{CH}+{stamp}+abcdefghijkl+x", f"eve+{CH}", f"kim+{CH}+{stamp}+abcdefghijkl",
                 f"kim+02-other+{stamp}+abcdefghijkl", f"x+{CH}+02-other+{stamp}+abcdefghijkl"):
        (exchange / name).mkdir()
        (exchange / name / "a-basics.ipynb").write_text(NB)
    (course.solutions / "02-other").mkdir()
    (course.solutions / "02-other" / "c.ipynb").write_text(NB)
    assert cli(["--root", str(course.root), "collect", CH]) == 0
    out, err = capsys.readouterr()
    assert f"{CH}: kim -> kim" in out
    assert [line.split(": ")[1] for line in err.splitlines() if line.startswith("collect: refused")] == \
        [f"refused bob+{CH}+{stamp}+abcdefghijkl+x", f"refused eve+{CH}"]
    assert f"not named <student>+{CH}+<time>+<random> as nbgrader submit names a submission; refused" in err


def test_every_refusal_and_id_is_one_printed_line_whatever_the_names(course, exchange, tmp_path, capsys, cli):
    """Names in the exchange and in a download are the learners' own: a newline in one printed a line of its own
    (a forged "collected" or "refused" line), and a terminal escape repainted the instructor's terminal."""
    stamp = (NOW - timedelta(minutes=1)).strftime(TIME_FORMAT)
    (exchange / f"eve\n{CH}: kim -> kim\x1b[2J+{CH}+{stamp}+abcdefghijkl").mkdir()
    assert cli(["--root", str(course.root), "collect", CH]) == 0
    src = _download(tmp_path, {"kim\ncollect: nothing refused/a-basics.ipynb": NB, "bob\x1b[31m/b-more.ipynb": NB})
    assert cli(["--root", str(course.root), "collect", CH, "--from", str(src)]) == 0
    out, err = capsys.readouterr()
    assert "\x1b" not in out + err
    assert out.splitlines() == [f"{CH}: 0 submissions in {course.submitted}",
                                f"{CH}: bob\\x1b[31m -> bob_31m",
                                f"{CH}: kim\\ncollect: nothing refused -> kim_collect_nothing_refused"]
    assert err.splitlines()[0].startswith(f"collect: refused eve\\n{CH}: kim -> kim\\x1b[2J+{CH}+")
    assert len(err.splitlines()) == 2


def test_names_that_differ_only_in_spaces_stay_two_people_across_downloads(course, tmp_path):
    """In one download "Jo Lee " and "Jo Lee" are two people (both refused); the identity was read back with
    its spaces stripped, so a later download's "Jo Lee" replaced the work of "Jo Lee "."""
    assert from_folder(course, CH, _download(tmp_path / "1", {"Jo Lee /a-basics.ipynb": '{"who": 1}'})).ids == \
        {"Jo Lee ": "jo_lee"}
    done = from_folder(course, CH, _download(tmp_path / "2", {"Jo Lee/a-basics.ipynb": '{"who": 2}'}))
    assert done.ids == {} and "holds the work of name:Jo Lee , not name:Jo Lee;" in done.refused[0][1]
    assert (course.submitted / "jo_lee" / CH / "a-basics.ipynb").read_text() == '{"who": 1}'
    assert from_folder(course, CH, _download(tmp_path / "3", {"Jo Lee /b-more.ipynb": NB})).refused == []


def test_a_plain_file_name_keeps_the_whole_name_before_the_notebook(course, tmp_path):
    """'<student>_<notebook>.ipynb' took the student as the text before the first '_': jo_lee and jo_smith were
    both "jo", one's notebook replacing the other's; a file with no student became a student named after it."""
    src = _download(tmp_path, {"jo_lee_a-basics.ipynb": '{"who": "lee"}', "jo_smith_2_a-basics-1.ipynb":
                               '{"who": "smith"}', "a-basics.ipynb": NB, "b-more_b-more.ipynb": NB})
    done = from_folder(course, CH, src)
    assert done.ids == {"jo_lee": "jo_lee", "jo_smith_2": "jo_smith_2", "b-more": "b-more"}
    assert done.refused == [("a-basics.ipynb", "its name holds no student's (expected <student>_<notebook>.ipynb, "
                                               "or one folder per student)")]
    assert (course.submitted / "jo_lee" / CH / "a-basics.ipynb").read_text() == '{"who": "lee"}'
    assert (course.submitted / "jo_smith_2" / CH / "a-basics.ipynb").read_text() == '{"who": "smith"}'


def test_a_blackboard_name_that_also_reads_as_canvas_is_blackboards(course, tmp_path):
    """Blackboard's 'Chapter_1_20231234_attempt_...' (numeric user names) also reads as Canvas user 1's file
    'attempt_...': every student would be Canvas user 1."""
    stamp = "2026-11-30-14-05-09"
    src = _download(tmp_path, {f"Chapter_1_20231234_attempt_{stamp}_a-basics.ipynb": '{"who": 1}',
                               f"Chapter_1_20231235_attempt_{stamp}_a-basics.ipynb": '{"who": 2}',
                               f"Chapter_1_20231235_attempt_{stamp}.txt":
                                   "Name: Jo Lee (20231235)\nAssignment: Chapter_1\n",
                               "Jane_1_4410123_assignsubmission_file_b-more.ipynb": '{"who": 3}'})
    done = from_folder(course, CH, src)
    assert sorted(done.ids.values()) == ["20231234", "20231235", "jane_1_4410123"]
    assert (course.submitted / "20231234" / CH / "a-basics.ipynb").read_text() == '{"who": 1}'


def _zip(path, names: dict[str, str]):
    import zipfile

    with zipfile.ZipFile(path, "w") as zf:
        for name, text in names.items():
            zf.writestr(name, text)
    return path


VICTIM = "Jane Smith_4410123_assignsubmission_file_"
# A Moodle learner (participant 4410999) whose display name is the victim's name, id and Moodle's marker.
FORGED = "Jane Smith_4410123_assignsubmission_file_x_4410999_assignsubmission_file_"


def test_a_moodle_display_name_naming_another_participant_never_gets_her_folder(course, tmp_path):
    """Flat download: the forged name reads as the victim's file and as participant 4410999's, so it is refused
    with both readings; the victim and an honest participant beside them are collected."""
    z = _zip(tmp_path / "moodle.zip", {f"{VICTIM}a-basics.ipynb": '{"victim": 1}',
                                       f"{FORGED}a-basics.ipynb": '{"forged": 1}',
                                       "Kim Lee_4410200_assignsubmission_file_b-more.ipynb": '{"kim": 1}'})
    done = from_folder(course, CH, z)
    assert done.ids == {"Jane Smith (Moodle user 4410123)": "jane_smith_4410123",
                        "Kim Lee (Moodle user 4410200)": "kim_lee_4410200"}
    [(entry, why)] = done.refused
    assert entry == f"{FORGED}a-basics.ipynb"
    assert why.startswith("its name reads two ways, as Moodle ('Jane Smith', user 4410123) and as Moodle ('Jane "
                          "Smith_4410123_assignsubmission_file_x', user 4410999)")
    assert (course.submitted / "jane_smith_4410123" / CH / "a-basics.ipynb").read_text() == '{"victim": 1}'
    assert course.students(CH) == ["jane_smith_4410123", "kim_lee_4410200"]
    # A later download holding only the forged file still gives it to nobody.
    done = from_folder(course, CH, _zip(tmp_path / "again.zip", {f"{FORGED}a-basics.ipynb": '{"forged": 2}'}))
    assert done.ids == {} and "reads two ways" in done.refused[0][1]
    assert (course.submitted / "jane_smith_4410123" / CH / "a-basics.ipynb").read_text() == '{"victim": 1}'


@pytest.mark.parametrize("as_zip", [True, False])
def test_a_moodle_folder_download_reads_the_participant_id_moodle_wrote_last(course, tmp_path, as_zip):
    """In a download in folders Moodle's part ends the folder's name: the forger is collected as herself
    (participant 4410999), never into the victim's folder."""
    files = {f"{VICTIM}/a-basics.ipynb": '{"victim": 1}', f"{FORGED}/a-basics.ipynb": '{"forged": 1}'}
    src = _zip(tmp_path / "moodle.zip", files) if as_zip else _download(tmp_path, files)
    done = from_folder(course, CH, src)
    assert done.refused == []
    forger = "jane_smith_4410123_assignsubmission_file_x_4410999"
    assert done.ids == {"Jane Smith (Moodle user 4410123)": "jane_smith_4410123",
                        "Jane Smith_4410123_assignsubmission_file_x (Moodle user 4410999)": forger}
    assert (course.submitted / "jane_smith_4410123" / CH / "a-basics.ipynb").read_text() == '{"victim": 1}'
    assert (course.submitted / forger / CH / "a-basics.ipynb").read_text() == '{"forged": 1}'
    assert (course.submitted / forger / ".torchcourse" / "identity").read_text() == "moodle:4410999\n"


def test_a_name_that_reads_as_canvas_and_as_moodle_is_refused(course, tmp_path):
    """'kim_1003_5006_Jo Lee_4410123_assignsubmission_file_a-basics.ipynb' is Canvas user 1003's file named
    'Jo Lee_4410123_...', or Moodle participant 4410123's whose display name is 'kim_1003_5006_Jo Lee': each
    reading's LMS part lies in the other's learner text. A Canvas learner's own file name that imitates
    another learner's prefix is still the uploader's."""
    z = _zip(tmp_path / "canvas.zip", {
        "kim_1003_5006_Jo Lee_4410123_assignsubmission_file_a-basics.ipynb": '{"two ways": 1}',
        "smithjane_1001_5001_a-basics.ipynb": '{"jane": 1}',
        "mallory_2002_5005_smithjane_1001_5001_a-basics.ipynb": '{"mallory": 1}'})
    done = from_folder(course, CH, z)
    assert sorted(done.ids.values()) == ["mallory_2002", "smithjane_1001"]
    [(entry, why)] = done.refused
    assert entry.startswith("kim_1003_5006_Jo Lee") and "as Canvas ('kim', user 1003) and as Moodle" in why
    assert (course.submitted / "smithjane_1001" / CH / "a-basics.ipynb").read_text() == '{"jane": 1}'
    assert (course.submitted / "mallory_2002" / CH / "a-basics.ipynb").read_text() == '{"mallory": 1}'


@pytest.mark.parametrize("as_zip", [True, False])
def test_a_plain_file_name_keeps_trailing_digits_in_the_student(course, tmp_path, as_zip):
    """'<student>_<notebook>.ipynb': trailing digits were dropped from the student, so kim_2's notebook replaced
    kim's. A name holding the notebook's name twice, a student before each, reads two ways and is refused."""
    files = {"kim_a-basics.ipynb": '{"kim": 1}', "kim_2_a-basics.ipynb": '{"kim_2": 1}',
             "kim_a-basics_a-basics.ipynb": '{"two ways": 1}', "2_b-more.ipynb": '{"2": 1}'}
    src = _zip(tmp_path / "plain.zip", files) if as_zip else _download(tmp_path, files)
    done = from_folder(course, CH, src)
    assert done.ids == {"kim": "kim", "kim_2": "kim_2", "2": "2"}
    assert done.refused == [("kim_a-basics_a-basics.ipynb", "its name reads two ways, as a-basics of 'kim' and of "
                             "'kim_a-basics'; not collected (rename it <student>_<notebook>.ipynb)")]
    assert (course.submitted / "kim" / CH / "a-basics.ipynb").read_text() == '{"kim": 1}'
    assert (course.submitted / "kim_2" / CH / "a-basics.ipynb").read_text() == '{"kim_2": 1}'
