"""Helpers the tests import (``from tests.helpers.notebooks import ...``); conftest files hold fixtures only.

notebooks  find, read and run the course's notebooks
rules      the exercise contract's checkable rules, as problem lists (over any solutions/ folder)
course     throw-away course folders: the fixture course with its attack cases, copies of the real chapters
endtoend   a chapter graded end to end by plain nbgrader through its exchange, and by the course grader
tiny       small in-memory notebooks and an in-process gradebook for the grader's stage tests
site       build the learner and instructor sites once, serve them on loopback
browser    Debian's Chromium through Playwright, every non-loopback request blocked and counted
"""
