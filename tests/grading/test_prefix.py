"""Grading from templates (grader/inside/template.py) against running every cell (`--no-prefix`): the same
scores, flags, autograded notebooks and feedback pages, on every real chapter's right and wrong submissions
graded both ways (a seed per chapter); and where a template is not taken (a submission whose opening differs)."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import nbformat
import pytest

from tests.helpers.course import course_chapters, course_copy, grade_points, submission, write

pytestmark = pytest.mark.grading

# Every other grading test grades with templates (the default) and requires exact scores; here two students per
# chapter, every answer right and every answer wrong, are graded both ways and must come out alike.
STUDENTS = ("solution", "wrong0")
# Notebooks whose outputs no two runs print the same: an opening that measures this machine and says so in words
# that depend on what it measured ("the samples differ by 3 times: other programs were using the machine"), and
# launched DDP runs whose logs carry times, pids and ports. Only their records are compared.
MEASURING = ("04-hardware/01-roofline", "03-parallel/03-ddp-for-real", "03-parallel/04-ddp-in-practice")


def _submit(root: Path, chapter: str) -> list[str]:
    """The students: the solution, and every exercise of every notebook wrong with the course's first plausible
    wrong answer; the notebooks' names."""
    names = sorted(p.stem for p in (root / "solutions" / chapter).glob("*.ipynb"))
    for name in names:
        sol, rel = root / "solutions" / chapter / f"{name}.ipynb", root / "chapters" / chapter / f"{name}.ipynb"
        slugs = set(grade_points(nbformat.read(str(sol), as_version=4)))
        write(submission(rel, sol), root / "submitted" / "solution" / chapter / f"{name}.ipynb")
        write(submission(rel, sol, wrong=slugs, k=0), root / "submitted" / "wrong0" / chapter / f"{name}.ipynb")
    return names


def _graded(root: Path, chapter: str, prefix: bool, seed: int) -> tuple[dict, dict, dict]:
    """Records (without times and hashes), autograded notebooks and feedback pages, graded one way."""
    from grader.autograde import autograde
    from grader.course import Course
    from grader.feedback import feedback

    shutil.rmtree(root / "feedback", ignore_errors=True)
    out = autograde(Course(root), chapter, workers=2, progress=False, seed=seed, force=True, prefix=prefix)
    records = {s: {k: out[s][k] for k in ("score", "max_score", "exercises", "flags")} for s in STUDENTS}
    notebooks = {str(p.relative_to(root)): _without_times(p) for p in sorted((root / "autograded").rglob("*.ipynb"))}
    pages = {str(p.relative_to(root)): _without_addresses(p.read_text(encoding="utf-8"))
             for p in feedback(Course(root), chapter)}
    return records, notebooks, pages, out.openings


def _same_but_measurements(forked: dict, full: dict) -> list[str]:
    """Assert the files are the same both ways, except that a file may differ in decimal numbers, figures and
    temporary files' random names (what a cell measured, timings, bandwidths, the plots of them: they differ
    between any two runs); the names of the files that differed so."""
    assert forked.keys() == full.keys()
    measured = []
    for name in forked:
        assert _errors(forked[name]) == _errors(full[name]), name  # measuring or not, no cell fails one way only
        if forked[name] != full[name]:
            if not any(f"/{nb}." in name for nb in MEASURING):
                assert _without_measurements(forked[name]) == _without_measurements(full[name]), name
            measured.append(name)
    return measured


def _errors(text: str) -> list[tuple[int, str, str]]:
    """An autograded notebook's errors: each cell's that raised, its exception's name and message's first line (a
    feedback page's are its notebook's)."""
    if not text.lstrip().startswith("{"):
        return re.findall(r"[A-Z]\w*(?:Error|Exception)\b", text)
    cells = json.loads(text).get("cells", [])
    return [(i, out.get("ename", ""), str(out.get("evalue", "")).split("\n")[0])
            for i, cell in enumerate(cells) for out in cell.get("outputs", []) if out.get("output_type") == "error"]


def _without_measurements(text: str) -> str:
    text = re.sub(r'"image/png": "[^"]*"', '"image/png": "..."', text)
    text = re.sub(r"data:image/png;base64,[A-Za-z0-9+/=]+", "data:image/png;base64,...", text)
    text = re.sub(r"/tmp/tmp[a-z0-9_]{8}", "/tmp/tmp...", text)  # tempfile's random names
    return re.sub(r"\d+\.\d+", "#", text)


def _without_addresses(text: str) -> str:
    """`text` with the memory addresses an object's repr shows ("<MulBackward0 object at 0x7f...>") made one:
    they differ between any two runs, as between any two processes."""
    return re.sub(r"0x[0-9a-f]{6,16}", "0x...", text)


def _without_times(path: Path) -> str:
    """An autograded notebook's JSON without what differs between any two runs (the cells' run times, memory
    addresses)."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    for cell in nb.get("cells", []):
        cell.get("metadata", {}).pop("execution", None)
    return _without_addresses(json.dumps(nb, sort_keys=True))


@pytest.mark.parametrize("chapter", course_chapters())
def test_forked_from_the_opening_grades_as_every_cell_run(tmp_path, chapter):
    root = course_copy(tmp_path / "course", chapter)
    names = _submit(root, chapter)
    seed = 20261206 + course_chapters().index(chapter)  # a seed of its own per chapter: several seeds in all
    forked = _graded(root, chapter, True, seed=seed)
    full = _graded(root, chapter, False, seed=seed)
    assert forked[0] == full[0]
    measured = _same_but_measurements(forked[1], full[1]) + _same_but_measurements(forked[2], full[2])
    print(chapter, "differ only in what the cells measured or drew from it:", sorted(set(measured)))
    openings = forked[3]
    assert not full[3]  # --no-prefix: nothing asked of a template
    # Every notebook that has an opening was forked for the students whose opening is the release's, or says why not.
    assert set(openings) <= set(names)
    for name, counts in openings.items():
        assert sum(counts.values()) == len(STUDENTS), (name, counts)
    print(chapter, json.dumps(openings, indent=1))


OPENING = ("import os, random, torch\n"
           "x = torch.rand(3)\n"
           "r = random.random()\n"
           "open('made-by-the-opening.txt', 'w').write('opening')\n"
           "print('opening', x.tolist(), r)")
REST = ("import os, random, torch\n"
        "print('rest', x.tolist(), r, os.getuid(), sorted(os.listdir('.')))\n"
        "print('draw', torch.rand(2).tolist(), random.random())\n"
        "open('left-by-a-job.txt', 'w').write('job')")


def _printed(raw, i: int) -> list[str]:
    return "".join(o.get("text", "") for o in raw.cells[i].outputs).splitlines()


def _template_pids(worker) -> list[int]:
    """The worker's templates: root's processes whose parent is the worker's Python process (below bubblewrap)."""
    from grader.inside.channel import descendants

    def python(pid: int) -> bool:
        return "python" in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode()

    def parent(pid: int) -> int:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])

    return [p for p in descendants(worker.proc.pid)[1:]
            if os.stat(f"/proc/{p}").st_uid == 0 and python(p) and python(parent(p))]


def test_a_fork_goes_on_from_the_openings_state_as_its_own_uid_in_its_own_folder(sandbox_facilities):
    """The rest sees exactly the values the opening drew, and goes on drawing from where the opening left the
    generators (so two forks draw the same); it runs as the job's uid, in a copy of the opening's folder that no
    other job shares; and a template killed mid-batch costs nothing: the next job runs in full."""
    from grader.sandbox import SandboxWorker

    if not (sandbox_facilities.drop_uid and sandbox_facilities.job_ns):
        pytest.skip("no uid or namespaces of a job's own here: " + "; ".join(sandbox_facilities.missing))
    cells = [OPENING, REST]
    with SandboxWorker() as w:
        runs = [w.run(cells, 7, [], {"data.csv": b"1,2\n"}, cells[:1]) for _ in range(2)]
        for raw in runs:
            assert raw.prefix["how"] == "forked", raw.prefix
            opening, rest = _printed(raw, 0)[0], _printed(raw, 1)[0]
            values = opening.split(" ", 1)[1]
            assert rest.startswith("rest " + values + f" {w.uid} "), (opening, rest)
            assert rest.endswith("['data.csv', 'made-by-the-opening.txt']"), rest  # not the job before's file
        assert _printed(runs[0], 1)[1] == _printed(runs[1], 1)[1]  # both went on from the same state
        templates = _template_pids(w)
        assert templates, "no template process below the worker"
        for pid in templates:
            os.kill(pid, 9)
        full = w.run(cells, 7, [], {"data.csv": b"1,2\n"}, cells[:1])
        assert full.prefix.get("how") == "full", full.prefix
        opening, rest = _printed(full, 0)[0], _printed(full, 1)[0]
        assert rest.startswith("rest " + opening.split(" ", 1)[1] + f" {w.uid} ")


def test_a_template_killed_while_a_job_forked_from_it_runs_costs_that_job_nothing(sandbox_facilities):
    """A job's child is its template's child. The template killed while the child runs (its owner's trouble,
    never the job's doing: the job's uid cannot signal it) leaves the child running as the worker's: the job
    ends as it would have, with its outputs, and the next job runs in full."""
    import threading
    import time

    from grader.sandbox import SandboxWorker

    if not (sandbox_facilities.drop_uid and sandbox_facilities.job_ns):
        pytest.skip("no uid or namespaces of a job's own here: " + "; ".join(sandbox_facilities.missing))
    from grader.inside.channel import descendants

    slow = "import time\ntime.sleep(3)\nprint('slept', r)"
    cells = [OPENING, slow]
    with SandboxWorker() as w:
        assert w.run(cells, 7, [], None, cells[:1]).prefix["how"] == "forked"
        templates = _template_pids(w)  # before the job starts: its child is root's too for a moment after its fork
        assert templates, "no template process below the worker"
        result = {}
        job = threading.Thread(target=lambda: result.update(raw=w.run(cells, 7, [], None, cells[:1])))
        job.start()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not any(os.stat(f"/proc/{p}").st_uid == w.uid
                                                      for t in templates for p in descendants(t)[1:]):
            time.sleep(0.01)
        time.sleep(1)  # into its sleeping cell
        for pid in templates:
            os.kill(pid, 9)
        job.join(60)
        raw = result["raw"]
        assert raw.prefix.get("how") == "forked", raw.prefix
        opening = _printed(raw, 0)[0]
        assert _printed(raw, 1) == ["slept " + opening.rsplit(" ", 1)[1]], raw.cells
        assert raw.status.value == "exited" and not raw.signal, (raw.status, raw.signal)
        after = w.run(cells, 7, [], None, cells[:1])
        assert after.prefix.get("how") == "full", after.prefix
        assert _printed(after, 1)[0].startswith("slept ")


UNFORKABLE = [
    ("import threading, time\nthreading.Thread(target=time.sleep, args=(60,), daemon=True).start()", "thread"),
    ("import subprocess\nchild = subprocess.Popen(['sleep', '60'])", "child process"),
    ("log = open('log.txt', 'w')", "descriptor open"),
    ("import socket\ns = socket.socket()", "descriptor open"),
    ("import mmap\nshared = mmap.mmap(-1, 4096)", "shared writable mapping"),
]


def test_an_opening_a_fork_could_not_reproduce_runs_in_full(sandbox_facilities):
    """What a fork would lose or share (a thread, a child, a descriptor, shared memory) sends the notebook's jobs
    to a full run, with why; their cells all run, and the rest still finds what the opening made."""
    from grader.sandbox import SandboxWorker

    if not (sandbox_facilities.drop_uid and sandbox_facilities.job_ns):
        pytest.skip("no uid or namespaces of a job's own here: " + "; ".join(sandbox_facilities.missing))
    with SandboxWorker() as w:  # one worker: each opening is a template of its own
        for opening, why in UNFORKABLE:
            cells = [opening + "\nmade = 41", "print(made + 1)"]
            raw = w.run(cells, 7, [], None, cells[:1])
            assert raw.prefix.get("how") == "full" and why in raw.prefix.get("why", ""), (opening, raw.prefix)
            assert _printed(raw, 1) == ["42"], opening


def test_an_opening_cell_that_leaves_a_thread_shortens_the_template_to_the_cells_before_it(sandbox_facilities):
    """A cell of the opening that leaves a thread running (the Kineto profiler's config thread does) cannot be in
    a template, but the cells before it can: the jobs are forked after those, and run that cell and the rest
    themselves, so the thread is theirs, as in a full run."""
    from grader.sandbox import SandboxWorker

    if not (sandbox_facilities.drop_uid and sandbox_facilities.job_ns):
        pytest.skip("no uid or namespaces of a job's own here: " + "; ".join(sandbox_facilities.missing))
    threaded = "import threading, time\nthreading.Thread(target=time.sleep, args=(60,), daemon=True).start()\nb = 2"
    count = "import os\nprint(a + b, len(os.listdir('/proc/self/task')))"
    cells = ["a = 1", threaded, count]
    with SandboxWorker() as w:
        for _ in range(2):
            raw = w.run(cells, 7, [], None, cells[:2])
            assert raw.prefix.get("how") == "forked", raw.prefix
            assert raw.prefix.get("cells") == 1 and "thread" in raw.prefix.get("shortened", ""), raw.prefix
            assert _printed(raw, 2) == ["3 2"]  # the job's own thread, beside its main one


def test_a_worker_told_where_another_workers_template_stopped_stops_there_at_once(sandbox_facilities):
    """Where another worker found that an opening cell leaves a thread (the pool learnt it from that worker's
    job: grader.placement), this worker makes its template of the cells before it straight away: it never runs
    that cell in a template, so the job reports the cut it was given, and runs the cell itself."""
    from grader.job import Cut
    from grader.sandbox import SandboxWorker

    if not (sandbox_facilities.drop_uid and sandbox_facilities.job_ns):
        pytest.skip("no uid or namespaces of a job's own here: " + "; ".join(sandbox_facilities.missing))
    threaded = "import threading, time\nthreading.Thread(target=time.sleep, args=(60,), daemon=True).start()\nb = 2"
    count = "import os\nprint(a + b, len(os.listdir('/proc/self/task')))"
    cells = ["a = 1", threaded, count]
    told = Cut(1, "opening cell 1 left a thread running, on the worker that found it")
    with SandboxWorker() as w:
        for cut in (told, None):  # the second job is forked from the template the first made
            raw = w.collect(w.dispatch(cells, 7, [], None, cells[:2], None, cut))
            assert raw.prefix.get("how") == "forked", raw.prefix
            assert raw.prefix.get("cells") == 1 and raw.prefix.get("shortened") == told.why, raw.prefix
            assert _printed(raw, 2) == ["3 2"]
        # A cut that is not inside the opening is not one: the template holds the opening, as without it
        plain = ["a = 1", "b = 2", "print(a + b)"]
        raw = w.collect(w.dispatch(plain, 7, [], None, plain[:2], None, Cut(2, "beyond the opening")))
        assert raw.prefix.get("cells") == 2 and "shortened" not in raw.prefix, raw.prefix
        assert _printed(raw, 2) == ["3"]


def test_a_thread_still_ending_after_its_cell_does_not_shorten_the_template(sandbox_facilities):
    """A thread that a cell started and that ends a moment after the cell (OpenMP's workers of a thread that ran
    torch operations do) leaves a process with one thread: the template keeps that cell and the ones after it."""
    from grader.sandbox import SandboxWorker

    if not (sandbox_facilities.drop_uid and sandbox_facilities.job_ns):
        pytest.skip("no uid or namespaces of a job's own here: " + "; ".join(sandbox_facilities.missing))
    ending = "import threading, time\nthreading.Thread(target=time.sleep, args=(0.1,), daemon=True).start()\nb = 2"
    count = "import os\nprint(a + b, len(os.listdir('/proc/self/task')))"
    cells = ["a = 1", ending, "c = 3", count]
    with SandboxWorker() as w:
        raw = w.run(cells, 7, [], None, cells[:3])
        assert raw.prefix.get("how") == "forked" and raw.prefix.get("cells") == 3, raw.prefix
        assert "shortened" not in raw.prefix, raw.prefix
        assert _printed(raw, 3) == ["3 1"]
