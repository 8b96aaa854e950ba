"""A chapter in the student's language through nbgrader's exchange: the same assignment, the same file names.

setup-class.sh names these classes in nbgrader's configuration: `CourseRelease` in the instructor's, `CourseFetch`
in everyone else's (as PREFIX/app/torchcourse_language.py).

Release (the instructor's `nbgrader release_assignment CHAPTER`, or formgrader's Release button): chapters/CHAPTER
goes into the exchange as nbgrader puts it there and, beside it, each translated release of its notebooks
(LANG/chapters/CHAPTER/, written by `python -m grader release`) in a folder of that language: outbound/CHAPTER/zh_CN/.
A translation is released only once it is checked to be the same assignment as the English (the same cells, ids,
nbgrader metadata and code: grader.release.find_drift) and to hold no answer (find_leaks); else the release fails.

Fetch (the Assignments panel's Fetch button, `nbgrader fetch_assignment`): a student whose language
(torchcourse.i18n.language(): the hub sets LANGUAGE for a student added with `add-student.sh --language zh_CN`)
has a translation of the chapter gets each notebook in it, under the English file name, so what she submits is the
same assignment; otherwise the English. The language folders never reach her folder, so never her submission.
Her choice only names one of the course's languages: what she gets comes from the instructor's release in the
exchange, which only the instructor writes, and a notebook she already has is never replaced.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

from nbgrader.exchange.default import ExchangeFetchAssignment, ExchangeReleaseAssignment

from torchcourse.i18n import TRANSLATIONS

# The translated releases the exchange may carry: the course's languages other than English (its source).
TRANSLATED = TRANSLATIONS


class CourseRelease(ExchangeReleaseAssignment):
    def do_copy(self, src, dest, log=None):
        twins = self.checked_translations(Path(src))  # before anything reaches the exchange
        super().do_copy(src, dest, log=log)
        for lang, folder in twins.items():
            os.mkdir(os.path.join(dest, lang))
            for name in sorted(p.name for p in Path(src).glob("*.ipynb")):
                shutil.copyfile(folder / name, os.path.join(dest, lang, name))
            self.log.info("Released with its %s notebooks: %s", lang, self.coursedir.assignment_id)

    def checked_translations(self, src: Path) -> dict[str, Path]:
        """language -> the folder of this chapter's translated release, for each language whose list of released
        chapters names it; fails where one is missing or is not the same assignment as `src`."""
        from grader.release import find_drift, find_leaks, released_languages

        root, chapter = Path(self.coursedir.root), self.coursedir.assignment_id
        found = {}
        for lang, listed in released_languages(root).items():
            if lang not in TRANSLATED or chapter not in listed:
                continue
            folder = root / lang / "chapters" / chapter
            if not folder.is_dir():
                problems = [f"{folder} does not exist"]
            else:
                problems = find_drift(src, folder) + find_leaks(root / "solutions" / chapter, folder)
            if problems:
                self.fail(f"the {lang} release of {chapter} is not the same assignment as {src} (run `python -m "
                          f"grader release {chapter}` and release again):\n  " + "\n  ".join(problems))
            found[lang] = folder
        return found


def _regular_file(path: str) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


class CourseFetch(ExchangeFetchAssignment):
    def do_copy(self, src, dest):
        from torchcourse.i18n import language

        lang = language()
        twins = os.path.join(src, lang)
        use = lang in TRANSLATED and os.path.isdir(twins) and not os.path.islink(twins)
        had = set(os.listdir(dest)) if os.path.isdir(dest) else set()
        base = shutil.ignore_patterns(*self.coursedir.ignore)

        def ignore(folder, names):  # the release's language folders stay in the exchange
            skipped = set(base(folder, names))
            if os.path.samefile(folder, src):
                skipped |= {n for n in names if n in TRANSLATED}
            return skipped

        if had or os.path.isdir(dest):
            self.copy_if_missing(src, dest, ignore=ignore)
        else:
            shutil.copytree(src, dest, ignore=ignore)
        if not use:
            if lang in TRANSLATED:
                self.log.info("%s has no %s notebooks: fetched in English", self.coursedir.assignment_id, lang)
            return
        for name in sorted(os.listdir(dest)):
            twin = os.path.join(twins, name)
            if name.endswith(".ipynb") and name not in had and _regular_file(twin):
                shutil.copyfile(twin, os.path.join(dest, name))
        self.log.info("Fetched in %s: %s", lang, self.coursedir.assignment_id)
