"""The warm sandbox worker: import torch once, then fork one child per submission.

This package runs *inside* the sandbox (bubblewrap when available) as ``python -I <this folder>``; it
imports nothing from the grader package and holds no answers, tests or grades, because every child it forks
sees its memory. The grader imports only `policy` from it, and tests import `channel`, `cleanup` and
`confine`, which load nothing of the warm process; `base` alone has import-time side effects.

Protocol (one JSON object per line): the grader writes ``{"id", "dir", "results", "uid", "gid",
"cell_timeout", "budget", "mem_mb", "nproc", "fsize_mb", "tmp_mb", "netns", "isolate"}`` on stdin;
the worker answers ``{"id", "status", "code", "signal", "seconds"}`` (and ``"notes"``, what it saw
of the job from outside) on stdout; ``grader/wire.py`` gives these their types. The job
directory holds ``job.json`` (cells and seed, readable by root only). The worker forks
the child first and only then reads and deletes ``job.json``: the child gets the seed and
each cell over a pipe, one cell at a time, after the previous one has reported. The child
reports on a second pipe (an inherited descriptor, not a path it could replace): every line
carries the nonce the worker chose for that cell. Emitted values and tampering records are
written on it by an audit hook the moment they happen (see `guard`). The worker
writes what it accepted, one line per cell, to ``results`` (a file outside the job's folder).
Those lines are still *claims* of code that ran beside learner code: the judge treats them
as data, never as verdicts. A job folder may also hold ``prefix.json`` (root's): the release's
cells before the notebook's first answer cell, which the worker runs once in a template and
forks the job's child from (`template`, `templates`); the reply then says how the job ran
(``"prefix"``).

Modules, in the order the worker loads them: `base` (the warm process), `shell` (outputs as nbformat),
`guard` (the integrity snapshot and audit hook), `confine` (the job's uid, limits and namespaces; the
worker's place on the host), `child` (the job's cell loop), `channel` and `cleanup` (the parent's end of
the pipes, and the end of a job), `parent` (one job, from the worker's side), `template` and `templates`
(a notebook's opening run once and forked per job; the worker's templates), `__main__` (the main loop);
`policy` holds the sandbox's policy as data, and the grader reads it too.
"""
