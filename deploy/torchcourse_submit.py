"""nbgrader's submit, with the class's limits on what one submission may hold (the Assignments panel's Submit button
and `nbgrader submit` use it: setup-class.sh names it in the students' nbgrader configuration).

A chapter folder over the limits is refused before anything is copied, with a message saying what to do. It counts
what nbgrader would copy (its ignore patterns and per-file limit applied), so a large data file nbgrader leaves out
anyway does not count. deploy/inbound_guard.py removes from inbound an entry over the same limits made another way.
"""

from __future__ import annotations

import os
import stat

from nbgrader.exchange.abc.exchange import ExchangeError
from nbgrader.exchange.default import ExchangeSubmit
from nbgrader.utils import ignore_patterns
from traitlets import Integer

MIB = 2**20


class CourseSubmit(ExchangeSubmit):
    max_submission_mb = Integer(100, help="Most MiB one submission may hold").tag(config=True)
    max_submission_files = Integer(10_000, help="Most files and folders one submission may hold").tag(config=True)

    def copy_files(self):
        self.check_size()
        super().copy_files()

    def check_size(self) -> None:
        ignore = ignore_patterns(exclude=self.coursedir.ignore, include=self.coursedir.include,
                                 max_file_size=self.coursedir.max_file_size, log=self.log)
        size, files, pending = 0, 0, [self.src_path]
        limit = (f"a submission may hold at most {self.max_submission_mb} MiB in {self.max_submission_files:,} files "
                 "and folders")
        while pending:  # iterative: a folder nested thousands deep is counted, not a RecursionError
            folder = pending.pop()
            names = os.listdir(folder)
            skipped = set(ignore(folder, names))
            for name in names:
                if name in skipped:
                    continue
                path = os.path.join(folder, name)
                st = os.stat(path)  # nbgrader's copy follows links: count what it would copy
                files += 1
                if stat.S_ISDIR(st.st_mode):
                    pending.append(path)
                elif stat.S_ISREG(st.st_mode):
                    size += st.st_size
                else:  # a device or a pipe would be read without end
                    raise ExchangeError(f"{os.path.relpath(path, self.src_path)} is not a file or a folder: move it "
                                        f"out of {self.src_path} and submit again")
                if size > self.max_submission_mb * MIB or files > self.max_submission_files:
                    raise ExchangeError(f"{self.src_path} holds more than this class accepts ({limit}): move large "
                                        "files (data, checkpoints, outputs) out of the folder and submit again")
