"""collect: submissions into submitted/<student>/<chapter>/, from nbgrader's exchange or an LMS download.

An LMS hands out a folder or zip of notebooks whose names carry the student (Canvas, Moodle and
Blackboard each have their own format, read in `grader.lms`), or one folder per student. Each notebook is
mapped to a person and to one of the chapter's notebooks by name; ids and file names are
sanitised, links and archive tricks refused, nothing is executed.

Two people never share a student id: ids are compared ignoring case, and when two people
(two LMS user ids, two folder names, two unix users) would get the same id, neither is
collected and the message says why. `submitted/<student>/.torchcourse/identity` remembers
whose folder it is, so a later collect never writes one person's work into another's folder; a folder
without one (nbgrader's own collect, or copied by hand) is taken only by the unix user it is named after, and
an existing folder whose name differs only in case is another person's.

From the exchange, a submission is collected only when every file in it belongs to the
student it names (or to the user collecting, who may submit for a student), when its time is
not in the future, and when its files were not changed after that time.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
import zipfile
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from grader.course import COURSE_ID, Course, safe_id
from grader.lms import Person, owner, read_receipts
from grader.nbgrader_compat import parse_utc
from grader.notebook_file import MAX_BYTES
from grader.submission import TIMESTAMP, read_timestamp, write_timestamp

MAX_FILE = MAX_BYTES  # a submitted file, as large as the largest notebook read
MAX_TOTAL = 4 * 2**30
# A submission is stamped on this machine's clock, so a time ahead of it is made up; the slack covers a clock
# step between two processes.
FUTURE_SLACK = timedelta(seconds=60)
# nbgrader submit stamps the time first, then copies; files changed longer after that were changed later.
CHANGED_AFTER = timedelta(minutes=5)
# A submission is the student's chapter folder: a few notebooks, maybe a data folder. One far deeper or larger is
# refused and named (walking it would exhaust the stack or the time of every student's collect).
MAX_DEPTH = 16
MAX_ENTRIES = 10_000
IDENTITY = Path(".torchcourse") / "identity"


def _identity_clash(course: Course, sid: str, person: Person) -> str | None:
    """Why `submitted/<sid>` must not receive this person's work (it holds someone else's), or None."""
    try:
        twins = sorted(p.name for p in course.submitted.iterdir() if p.name.lower() == sid and p.name != sid)
    except OSError:
        twins = []  # no submissions yet
    if twins:  # made by hand or by nbgrader's own collect: a second student whose id differs only in case
        return (f"submitted/{twins[0]} already exists and ids are compared ignoring case; {person.label} is not "
                f"collected into submitted/{sid} (rename one of them by hand)")
    try:
        # Only the line end is dropped: "Jo Lee " and "Jo Lee" are two people here as in one download.
        held = (course.submitted / sid / IDENTITY).read_text().removesuffix("\n").removesuffix("\r")
    except OSError:
        folder = course.submitted / sid
        if person.source == "unix" or not folder.is_dir() or not any(
                p.name != IDENTITY.parts[0] for p in folder.iterdir()):
            return None  # a new student; or nbgrader's own collect's folder, named by unix user as here
        return (f"submitted/{sid} holds work that no collect recorded as anyone's (copied by hand, or nbgrader's "
                f"own collect); {person.label} is not collected into it: if it is theirs, write "
                f"'{person.identity}' into submitted/{sid}/{IDENTITY} and collect again")
    if held == person.identity:
        return None
    return (f"submitted/{sid} holds the work of {held}, not {person.identity}; not collected (ids are compared "
            "ignoring case; rename the folder of one of them by hand)")


def _remember(course: Course, sid: str, person: Person) -> None:
    path = course.submitted / sid / IDENTITY
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(person.identity + "\n")


def _clashes(people: dict[str, set[Person]]) -> dict[str, str]:
    """sid -> why, for every id that two people would share."""
    why = {}
    for sid, who in people.items():
        if len(who) > 1:
            names = " and ".join(sorted(p.label for p in who))
            why[sid] = (f"{names} would both get the student id {sid} (ids are compared ignoring case); "
                        "neither is collected: rename one and collect again")
    return why


@dataclass
class Collected:
    """What `from_folder` did: {original name: student id}, and every entry it refused, with why."""

    ids: dict[str, str] = field(default_factory=dict)
    refused: list[tuple[str, str]] = field(default_factory=list)


def _extract(zip_path: Path, dest: Path) -> list[tuple[str, str]]:
    """Unpack the plain files of a zip under `dest`; returns the entries refused, with why."""
    refused: list[tuple[str, str]] = []
    unpacked: dict[Path, str] = {}
    total = 0
    with zipfile.ZipFile(zip_path) as zf:
        for info in zf.infolist():
            name = info.filename
            mode = info.external_attr >> 16
            if info.is_dir():
                continue
            if stat.S_ISLNK(mode):
                refused.append((name, "a symbolic link in the archive"))
                continue
            if stat.S_IFMT(mode) not in (0, stat.S_IFREG):  # type bits, when the archive has them
                refused.append((name, "not a regular file"))
                continue
            parts = [p for p in Path(name.replace("\\", "/")).parts if p not in ("", ".", "/")]
            if name.replace("\\", "/").startswith("/") or ".." in parts:
                refused.append((name, "its path leaves the archive (absolute, or with '..')"))
                continue
            if not parts:
                refused.append((name, "an empty name"))
                continue
            if info.file_size > MAX_FILE:
                refused.append((name, f"{info.file_size / 2**20:.0f} MiB, over the {MAX_FILE // 2**20} MiB limit"))
                continue
            if total + info.file_size > MAX_TOTAL:
                raise ValueError(f"{zip_path.name} unpacks to more than {MAX_TOTAL // 2**30} GiB; refused")
            total += info.file_size
            target = dest.joinpath(*parts)
            if target in unpacked:  # one path twice ("kim/a.ipynb", "kim/./a.ipynb"): the later kept, as below
                refused.append((unpacked[target], f"replaced by {name}, a second entry for the same file"))
            unpacked[target] = name
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                with zf.open(info) as src, open(target, "wb") as out:
                    shutil.copyfileobj(src, out, 1 << 20)
            except (zipfile.BadZipFile, RuntimeError, NotImplementedError, OSError, EOFError) as exc:
                if target.is_file() and not target.is_symlink():
                    target.unlink()  # nothing half-written is collected
                refused.append((name, f"could not be unpacked ({type(exc).__name__}: {str(exc)[:120]})"))
    return refused


def from_folder(course: Course, chapter: str, source: Path) -> Collected:
    """Copy an LMS download (folder or zip) into submitted/; returns the ids given and the entries refused."""
    notebooks = course.notebooks(chapter)
    done = Collected()
    with tempfile.TemporaryDirectory(prefix="torchcourse-collect-") as tmp:
        root = Path(source)
        if zipfile.is_zipfile(root):
            done.refused += _extract(root, Path(tmp))
            root = Path(tmp)
        if not root.is_dir():
            raise ValueError(f"{source} is neither a folder nor a zip file")
        found: list[tuple[Path, Path, Person, str]] = []
        receipts = read_receipts(root)
        for path in sorted(root.rglob("*")):
            rel = path.relative_to(root)
            if path.is_dir() and not path.is_symlink():
                continue
            if ".ipynb_checkpoints" in rel.parts:
                done.refused.append((str(rel), "Jupyter's autosaved checkpoint, not the submission"))
                continue
            if path.is_symlink():
                done.refused.append((str(rel), "a symbolic link"))
                continue
            if not path.is_file():
                done.refused.append((str(rel), "not a regular file"))
                continue
            if path.suffix != ".ipynb":
                done.refused.append((str(rel), "not a notebook (.ipynb)"))
                continue
            try:
                person, nb = owner(rel, notebooks, receipts)
            except ValueError as exc:
                done.refused.append((str(rel), str(exc)))
                continue
            found.append((path, rel, person, nb))
        people: dict[str, set[Person]] = {}
        for _, _, person, _ in found:
            people.setdefault(person.sid, set()).add(person)
        clash = _clashes(people)
        written: dict[Path, str] = {}
        for path, rel, person, nb in found:
            sid = person.sid
            why = clash.get(sid) or _identity_clash(course, sid, person)
            if why:
                done.refused.append((str(rel), why))
                continue
            done.ids[person.label] = sid
            out = course.submitted / sid / chapter
            out.mkdir(parents=True, exist_ok=True)
            _remember(course, sid, person)
            if out / f"{nb}.ipynb" in written:  # two files for one student's notebook: the later one is kept
                done.refused.append((written[out / f"{nb}.ipynb"], f"replaced by {rel}, another {nb}.ipynb "
                                     f"of {sid}"))
            written[out / f"{nb}.ipynb"] = str(rel)
            shutil.copyfile(path, out / f"{nb}.ipynb", follow_symlinks=False)
            when = datetime.fromtimestamp(path.stat().st_mtime, tz=UTC)
            write_timestamp(out, when)
    return done


@dataclass
class _Entry:
    """One submission folder in the exchange's inbound: `<student>+<chapter>+<time>+<random>`."""

    path: Path
    user: str
    when: datetime


def _owner(uid: int) -> str:
    import pwd

    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def _check_entry(path: Path, user: str, stamp: str, now: datetime) -> tuple[datetime | None, str | None]:
    """The time of one inbound submission, or why it is refused: whose files, which time, changed when."""
    import pwd

    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode):
        return None, "not a folder (a link or a file in the exchange)"
    try:
        student_uid = pwd.getpwnam(user).pw_uid
    except KeyError:
        student_uid = None
    # Only the student and the collecting user (who may submit for a student) can make these files; a student
    # can make neither the other's files nor the instructor's.
    allowed = {os.geteuid(), student_uid} - {None}
    latest = st.st_ctime
    if st.st_uid not in allowed:
        return None, (f"names {user} but the folder belongs to {_owner(st.st_uid)}: submitted as another "
                      "person (cheating attempt?); refused, not collected for anyone")
    pending, seen = [(path, 0)], 0
    while pending:  # iterative, bounded: never a recursion as deep as the folder
        folder, depth = pending.pop()
        with os.scandir(folder) as found:
            for item in found:
                seen += 1
                if seen > MAX_ENTRIES:
                    return None, f"holds more than {MAX_ENTRIES:,} files and folders; refused"
                est = item.stat(follow_symlinks=False)
                latest = max(latest, est.st_ctime)
                if est.st_uid not in allowed:
                    rel = Path(item.path).relative_to(path)
                    return None, (f"names {user} but {rel} belongs to {_owner(est.st_uid)}: submitted as another "
                                  "person (cheating attempt?); refused, not collected for anyone")
                if stat.S_ISDIR(est.st_mode):
                    if depth + 1 >= MAX_DEPTH:
                        return None, f"has folders more than {MAX_DEPTH} levels deep; refused"
                    pending.append((Path(item.path), depth + 1))
    try:
        when = parse_utc(stamp)
    except Exception as exc:  # dateutil raises several types for text that is not a time
        return None, f"its time {stamp[:60]!r} is not a time ({type(exc).__name__}); refused"
    if when > now + FUTURE_SLACK:
        return None, f"dated {when:%Y-%m-%d %H:%M:%S} UTC, in the future (made up); refused"
    changed = datetime.fromtimestamp(latest, tz=UTC)
    if changed > when + CHANGED_AFTER:
        return None, (f"dated {when:%Y-%m-%d %H:%M:%S} UTC but its files were changed at {changed:%Y-%m-%d %H:%M:%S}"
                      " UTC (back-dated or altered after submission); refused")
    return when, None


def _copy_regular(src: Path, dest: Path) -> str | None:
    """Copy one regular file without following links; why not, or None."""
    try:
        fd = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        return f"could not be read ({exc.strerror})"
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):
            return "not a regular file"
        if st.st_size > MAX_FILE:
            return f"{st.st_size / 2**20:.0f} MiB, over the {MAX_FILE // 2**20} MiB limit"
        with open(dest, "wb") as out:
            shutil.copyfileobj(fh, out, 1 << 20)
    return None


def from_exchange(course: Course, chapter: str, now: datetime | None = None) -> Collected:
    """Each student's latest acceptable submission of `chapter` from nbgrader's exchange (Exchange.root, env
    TORCHCOURSE_EXCHANGE) into submitted/; every submission not collected is listed with why.

    nbgrader's own collect only warns when a folder's owner differs from the student it names, and takes the
    latest time even when it is in the future; here such submissions are refused, so that a student's real
    submission is the one graded."""
    inbound = Path(course.config().Exchange.root) / COURSE_ID / "inbound"
    if not inbound.is_dir():
        raise ValueError(f"{inbound} does not exist: nothing was submitted yet, or the exchange is elsewhere "
                         "(set TORCHCOURSE_EXCHANGE)")
    now = now or datetime.now(UTC)
    notebooks = course.notebooks(chapter)
    chapters = course.assignments()
    done = Collected()
    latest: dict[str, _Entry] = {}
    try:
        entries = sorted(inbound.iterdir())
    except OSError as exc:
        raise ValueError(f"cannot list {inbound} ({exc.strerror}): collect as the instructor") from exc
    for path in entries:
        parts = path.name.rsplit("+", 3)
        if len(parts) < 3 or parts[1] != chapter:
            if f"+{chapter}+" in path.name + "+" and (len(parts) < 3 or parts[1] not in chapters):
                # names this chapter, but not as nbgrader submit does: said, rather than passed over in silence
                done.refused.append((path.name, f"not named <student>+{chapter}+<time>+<random> as nbgrader submit "
                                                "names a submission; refused"))
            continue  # another chapter's submission, or not one at all
        user, stamp = parts[0], parts[2]
        try:
            when, why = _check_entry(path, user, stamp, now)
        except OSError as exc:
            when, why = None, f"could not be read ({exc.strerror})"
        if why:
            done.refused.append((path.name, why))
        elif user not in latest or when > latest[user].when:
            latest[user] = _Entry(path, user, when)
    people: dict[str, set[Person]] = {}
    for user in latest:
        people.setdefault(safe_id(user), set()).add(Person("unix", user))
    clash = _clashes(people)
    for user, entry in sorted(latest.items()):
        person = Person("unix", user)
        sid = person.sid
        why = clash.get(sid) or _identity_clash(course, sid, person)
        if not why and sid != user:
            why = f"{user!r} is not usable as a student id (letters, digits, '.', '-', '_'; lower case)"
        if why:
            done.refused.append((entry.path.name, why))
            continue
        out = course.submitted / sid / chapter
        held = read_timestamp(out)[0]  # absent, a link, not a time: as if never collected
        held = held.replace(tzinfo=UTC) if held else None
        if held is not None and held >= entry.when:
            done.ids[user] = sid  # already collected: nothing newer
            continue
        _remember(course, sid, person)
        staged = Path(tempfile.mkdtemp(prefix=f".{chapter}-", dir=out.parent))
        try:
            for src in sorted(entry.path.iterdir()):
                if src.name in (TIMESTAMP, "submission_secret.txt"):
                    continue
                if src.suffix != ".ipynb" or src.stem not in notebooks:
                    done.refused.append((f"{entry.path.name}/{src.name}", f"not one of {', '.join(notebooks)}"))
                    continue
                why = _copy_regular(src, staged / src.name)
                if why:
                    done.refused.append((f"{entry.path.name}/{src.name}", why))
            write_timestamp(staged, entry.when)
            secret = staged.parent / ".torchcourse" / f"{chapter}.secret"
            if _copy_regular(entry.path / "submission_secret.txt", secret) is not None:
                secret.unlink(missing_ok=True)  # feedback then goes back only through the course's own pages
            if out.exists():
                shutil.rmtree(out)
            staged.rename(out)
        finally:
            shutil.rmtree(staged, ignore_errors=True)
        done.ids[user] = sid
    return done
