# nbgrader looks for its configuration in the current directory; the course's lives in grader/.
import os

c = get_config()  # noqa: F821  (provided by traitlets when nbgrader loads this file)
load_subconfig(os.path.join(os.path.dirname(os.path.abspath(__file__)), "grader", "nbgrader_config.py"))  # noqa: F821
