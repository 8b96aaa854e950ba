"""torchcourse: the library the course notebooks import (widgets and grading helpers)."""

__version__ = "0.1.0"
