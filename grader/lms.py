"""lms: who a file of an LMS download belongs to, read only from what the LMS itself writes in its name.

An LMS hands out a folder or zip of notebooks whose names carry the student, one format each, written here as a
table of named-group regular expressions (as nbgrader's `FileNameCollectorPlugin` reads one): `id` is the LMS's
user id, `name` the person's name as the LMS spells it, `file` the learner's own file name.

    Canvas      smithjane_1001_5678_01-what-is-a-tensor.ipynb       name, user id, submission id, file
                smithjane_late_1001_5678_01-what-is-a-tensor-1.ipynb (a late one; "-1" after a resubmission)
    Moodle      Jane Smith_1234567_assignsubmission_file_01-what-is-a-tensor.ipynb (name, participant id, file),
                or Jane Smith_1234567_assignsubmission_file_/01-what-is-a-tensor.ipynb ("Download submissions
                in folders": the folder's name ends with Moodle's part)
    Blackboard  Chapter 1_jsmith_attempt_2026-11-30-14-05-09_01-what-is-a-tensor.ipynb (user name), with a
                receipt Chapter 1_jsmith_attempt_2026-11-30-14-05-09.txt ("Name: Jane Smith (jsmith)",
                "Assignment: Chapter 1")

Any other file is '<student>_<notebook>.ipynb' (the student may hold '_' and digits: kim and kim_2 are two
students), or lies in a folder per student.

Learners choose some of these texts: the file's name always, and a Moodle display name may be edited by its
owner. Either can be written to look like another person's prefix ("Jane Smith_1234567_assignsubmission_file_x"
as a display name). A name is therefore read every way the formats allow. A reading whose LMS-written part
lies inside the learner's text of another reading, and the other way round, makes two readings that the name
alone cannot tell apart: the file is refused with both, never given to either person.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from grader.course import safe_id


@dataclass(frozen=True)
class Format:
    """One LMS's file names: `pattern` matched at the name's start, or, when the learner's text may come before
    the LMS's part (`after_learner_text`), at every '_' of the name, the text before it being the `name`."""

    source: str
    pattern: re.Pattern
    after_learner_text: bool = False


CANVAS = Format("canvas", re.compile(r"(?P<name>[^_]+)_(?:late_)?(?P<id>\d+)_(?P<submission>\d+)_(?P<file>.+)",
                                     re.IGNORECASE))
MOODLE = Format("moodle", re.compile(r"_(?P<id>\d+)_assignsubmission_(?P<plugin>[a-z]+)_(?P<file>.*)"),
                after_learner_text=True)
# Blackboard's assignment (the instructor's) and user name (the institution's) come first: the first
# '_attempt_<time>' ends them, anything after it is the learner's.
BLACKBOARD = Format("blackboard", re.compile(
    r"(?P<head>.+?)_attempt_(?P<time>\d{4}(?:-\d\d){5})(?:_(?P<file>.*))?"))
FORMATS = (MOODLE, BLACKBOARD, CANVAS)
# "Download submissions in folders": the folder's name ends with Moodle's part, so its last participant id is
# Moodle's whatever the display name before it holds.
MOODLE_FOLDER = re.compile(r"(?P<name>.+)_(?P<id>\d+)_assignsubmission_(?P<plugin>[a-z]+)_")
RECEIPT = re.compile(r"(?P<head>.+?)_attempt_(?P<time>\d{4}(?:-\d\d){5})\.txt")
RECEIPT_BYTES = 64 * 1024


@dataclass(frozen=True)
class Person:
    """Who a downloaded file belongs to: an LMS and its user id, or a name when the download gives no id."""

    source: str  # canvas, moodle, blackboard, name (a folder or a file-name prefix), unix
    key: str     # the LMS's user id, the name itself, or the unix user name
    name: str = ""

    @property
    def sid(self) -> str:
        """The student id in the gradebook: it keeps the LMS's user id, so grades map back to the LMS."""
        if self.source in ("canvas", "moodle"):
            # A long name is shortened, never the user id (sanitising never lengthens the name).
            return safe_id(f"{self.name[:63 - len(self.key)]}_{self.key}")
        return safe_id(self.key)

    @property
    def identity(self) -> str:
        return f"{self.source}:{self.key}"

    @property
    def label(self) -> str:
        if self.source in ("canvas", "moodle", "blackboard"):
            return f"{self.name or self.key} ({self.source.capitalize()} user {self.key})"
        return self.key


@dataclass
class Receipts:
    """What Blackboard's receipts say: "<assignment>_<user>" -> user, and the assignments' names. Blackboard
    user and assignment names may both hold "_", so only these tell where one ends and the other begins."""

    users: dict[str, str] = field(default_factory=dict)
    assignments: set[str] = field(default_factory=set)


def read_receipts(root: Path) -> Receipts:
    found = Receipts()
    for path in sorted(root.rglob("*_attempt_*.txt")):
        m = RECEIPT.fullmatch(path.name)
        if not m or path.is_symlink() or not path.is_file():
            continue
        with open(path, "rb") as fh:
            lines = fh.read(RECEIPT_BYTES).decode("utf-8", "replace").splitlines()
        # Blackboard writes these two lines first; the learner's own text comes after them.
        name = next((ln for ln in lines if ln.startswith("Name:")), "")
        user = re.search(r"\(([^()]+)\)\s*$", name)
        if user and m["head"].endswith("_" + user[1].strip()):
            found.users[m["head"]] = user[1].strip()
        assignment = next((ln for ln in lines if ln.startswith("Assignment:")), "")[len("Assignment:"):].strip()
        if assignment and m["head"].startswith(assignment + "_"):
            found.assignments.add(assignment)
    return found


def _blackboard_user(head: str, receipts: Receipts) -> str:
    if head in receipts.users:
        return receipts.users[head]
    users = {head[len(a) + 1:] for a in receipts.assignments if head.startswith(a + "_") and len(head) > len(a) + 1}
    if len(users) == 1:
        return users.pop()
    if head.count("_") == 1 and not users:
        return head.split("_")[1]
    raise ValueError(f"cannot tell where Blackboard's assignment name ends and the user name begins in {head!r} "
                     "(either may hold '_'); keep Blackboard's .txt receipts in the download, they name the user")


@dataclass(frozen=True)
class Reading:
    """One way to read a file name as a format: the span the LMS wrote, the spans its learner chose."""

    source: str
    match: re.Match
    name: str           # the person's name as the LMS spells it ("" for Blackboard: the head holds it)
    lms: tuple[int, int]
    learner: tuple[tuple[int, int], ...]

    @property
    def file(self) -> str:
        return self.match["file"] or ""

    @property
    def file_start(self) -> int:
        return self.learner[-1][0]

    @property
    def id_end(self) -> int:
        return self.match.end("head" if self.source == "blackboard" else "id")

    def lms_inside(self, other: Reading) -> bool:
        """Whether this reading's LMS-written part lies in text the learner of `other` chose."""
        return any(start <= self.lms[0] and self.lms[1] <= end for start, end in other.learner)

    def person(self, receipts: Receipts) -> Person:
        if self.source == "blackboard":
            user = _blackboard_user(self.match["head"], receipts)
            return Person("blackboard", user, user)
        return Person(self.source, self.match["id"], self.name)

    def describe(self) -> str:
        who = self.match["head"] if self.source == "blackboard" else f"{self.name!r}, user {self.match['id']}"
        return f"{self.source.capitalize()} ({who})"


def readings(name: str) -> list[Reading]:
    """Every way the LMS formats read a file name."""
    found = []
    for fmt in FORMATS:
        starts = [i for i, ch in enumerate(name) if ch == "_" and i > 0] if fmt.after_learner_text else [0]
        for at in starts:
            m = fmt.pattern.fullmatch(name, at)
            if m is None or (fmt is BLACKBOARD and "_" not in m["head"]):
                continue
            end = m.start("file") if m["file"] is not None else len(name)
            if fmt.after_learner_text:
                found.append(Reading(fmt.source, m, name[:at], (at, end), ((0, at), (end, len(name)))))
            else:
                found.append(Reading(fmt.source, m, m.groupdict().get("name") or "", (0, end),
                                     ((end, len(name)),)))
            if fmt is BLACKBOARD:
                break  # the first '_attempt_<time>' is Blackboard's
    return found


def _lms_reading(name: str) -> Reading | None:
    """The LMS's reading of a file name; None when no format reads it; ValueError when two readings are each
    possible (each one's LMS part could be text the other's learner typed)."""
    found = sorted(readings(name), key=lambda r: r.file_start)
    if not found:
        return None
    chosen = found[0]
    for later in found[1:]:
        # A later reading whose identity ends inside the chosen one's LMS part overlaps it: both are LMS-written
        # text (Blackboard's 'Chapter_1_20231234_attempt_...' also reads as Canvas user 1's 'attempt_...'), and
        # the one whose identity reaches further is the LMS's.
        if later.id_end < chosen.file_start and not later.lms_inside(chosen):
            chosen = later
            break
    for other in found:
        if other is not chosen and other.lms_inside(chosen) and chosen.lms_inside(other):
            raise ValueError(f"its name reads two ways, as {chosen.describe()} and as {other.describe()}: the "
                             "learner chose part of it, so it does not say whose it is; not collected (Moodle: "
                             "download the submissions in folders, whose names end with Moodle's part)")
    return chosen


def _match(name: str, notebooks: list[str]) -> str | None:
    """The chapter notebook a downloaded file is a copy of: the longest notebook name inside the file name."""
    lower = name.lower()
    hits = [nb for nb in notebooks if nb.lower() in lower]
    return max(hits, key=len) if hits else None


def _student_before(name: str, notebook: str | None) -> str:
    """The student in '<student>_<notebook>.ipynb' (no LMS's format): all before the notebook's name (before the
    last '_' when it is not known); the student may hold '_' and digits (jo_lee, kim_2). A name that holds the
    notebook's name twice, each with a student before it, says two students."""
    lower = name.lower()
    if notebook is None:
        found = [name[:name.rfind("_")]] if "_" in name else []
    else:
        nb = notebook.lower()
        found = [name[:at].rstrip("_-. ") for at in range(len(name)) if lower.startswith(nb, at)]
        found = [s for s in found if s.strip("_-. ")]
    if not found or not found[0].strip("_-. "):
        raise ValueError("its name holds no student's (expected <student>_<notebook>.ipynb, or one folder per "
                         "student)")
    if len(found) > 1:
        raise ValueError(f"its name reads two ways, as {notebook} of {found[0]!r} and of {found[-1]!r}; not "
                         "collected (rename it <student>_<notebook>.ipynb)")
    return found[0]


def owner(rel: Path, notebooks: list[str], receipts: Receipts | None = None) -> tuple[Person, str]:
    """The person a downloaded file belongs to and the chapter notebook it is a copy of, from its folder (one per
    student) or its file name; ValueError, with why, when it does not say which."""
    receipts = receipts or Receipts()
    if len(rel.parts) > 1:
        top = rel.parts[0]
        m = MOODLE_FOLDER.fullmatch(top)
        person = Person("moodle", m["id"], m["name"]) if m else Person("name", top)
        notebook = _match(rel.name, notebooks)
    else:
        reading = _lms_reading(rel.name)
        if reading is None:
            notebook = _match(rel.name, notebooks)
            person = Person("name", _student_before(rel.name, notebook)) if notebook else None
        else:
            notebook = _match(reading.file, notebooks)
            person = reading.person(receipts) if notebook else None
    if notebook is None:
        raise ValueError(f"not one of {', '.join(notebooks)}")
    return person, notebook


def person_of(rel: Path, receipts: Receipts | None = None) -> Person:
    """The person of a downloaded file, whatever notebook it holds (its name's last '_' ends the student when no
    format reads it)."""
    if len(rel.parts) == 1 and (reading := _lms_reading(rel.name)) is not None:
        return reading.person(receipts or Receipts())
    if len(rel.parts) > 1:
        return owner(rel, [rel.stem], receipts)[0]
    return Person("name", _student_before(rel.name, None))
