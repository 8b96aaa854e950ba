"""Helpers the tests import (``from tests.helpers.notebooks import ...``); conftest files hold fixtures only.

notebooks  find, read and run the course's notebooks
course     throw-away course folders: the fixture course and copies of the real chapters
site       build the learner and instructor sites once, serve them on loopback
browser    Debian's Chromium through Playwright, every non-loopback request blocked and counted
"""
