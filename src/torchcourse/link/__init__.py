"""Calls from the grader's checker into learner code, with nothing but plain data between them.

Under the grader, a checks cell runs in a process of its own, the *checker*, which never runs learner code.
Each name of the learner's answers is a `Remote` there: calling it (or reading an attribute, or applying an
operator) sends the request to the learner's process as plain data and decodes the reply as plain data.
Tensors, arrays, numbers, strings and containers of them travel as values; anything else stays in the
learner's process and comes back as a handle, another `Remote`. A function of a library (torch, NumPy, the
course's own modules) travels as its name and is imported again on the other side; a function defined in a
checks cell never travels: it runs in the checker.

What the checker decodes is data it owns. A result that shares memory with an argument is decoded as a
view of the checker's own argument (so "is it a view?" is measured in memory the checker owns), and each
argument's state after the call (values, ``requires_grad``, ``grad``) is written back into the checker's
own object, so "did the call change its input?" is too. An argument the call left as it came (the learner's
side compares everything the checker would see, before and after) comes back as nothing to write.

Outside the grader (a learner's kernel, plain nbgrader) nothing here is used: answers are plain functions.
"""

from torchcourse.link.checker_end import CheckerLink
from torchcourse.link.learner_end import LearnerEnd, quiet_warnings
from torchcourse.link.remote import Remote
from torchcourse.link.wire import LinkError, NotSendable

__all__ = ["CheckerLink", "LearnerEnd", "LinkError", "NotSendable", "Remote", "quiet_warnings"]
