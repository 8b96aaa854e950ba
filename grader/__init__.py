"""The course's grading package: `python -m grader --help` lists its commands."""
