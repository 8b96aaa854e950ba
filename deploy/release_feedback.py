#!/usr/bin/env python3
"""Feedback pages back to students through nbgrader's exchange, as nbgrader's release_feedback does.

  release-feedback CHAPTER [COURSE_FOLDER]     (as the instructor; the folder defaults to the current one)

`python -m grader feedback CHAPTER` writes feedback/<student>/<chapter>/<notebook>.html; each page goes to
EXCHANGE/torchcourse/feedback/<hash>.html, the hash made from the secret the student's submission carried
(kept by `python -m grader collect`), so only that student's `nbgrader fetch_feedback` finds it.
"""

import hashlib
import os
import shutil
import sys
from pathlib import Path


def notebook_hash(secret: str, notebook_id: str) -> str:
    """nbgrader's name for a feedback page (nbgrader.utils.notebook_hash with a secret; importing that takes
    seconds)."""
    return hashlib.md5(secret.encode() + notebook_id.encode()).hexdigest()


def main(argv: list[str]) -> int:
    if not argv or len(argv) > 2:
        print(__doc__, file=sys.stderr)
        return 2
    chapter, root = argv[0], Path(argv[1] if len(argv) > 1 else ".").resolve()
    outbound = Path(os.environ.get("TORCHCOURSE_EXCHANGE", "/srv/nbgrader/exchange")) / "torchcourse" / "feedback"
    released, missing = 0, []
    for page in sorted((root / "feedback").glob(f"*/{chapter}/*.html")):
        student = page.parent.parent.name
        secret = root / "submitted" / student / ".torchcourse" / f"{chapter}.secret"
        if not secret.is_file() or secret.is_symlink():
            missing.append(student)  # not collected from the exchange (an LMS download): return it through the LMS
            continue
        digest = notebook_hash(secret=secret.read_text(), notebook_id=page.stem)
        tmp = outbound / f"{digest}-tmp.html"
        shutil.copyfile(page, tmp)
        os.chmod(tmp, 0o644)
        os.replace(tmp, outbound / f"{digest}.html")
        released += 1
    print(f"{chapter}: {released} feedback pages released to {outbound}")
    for student in sorted(set(missing)):
        print(f"{chapter}: {student}: no submission secret (not collected from the exchange); not released",
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
