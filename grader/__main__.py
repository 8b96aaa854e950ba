"""`python -m grader`: the course's command line for learners and instructors."""

from __future__ import annotations

import argparse
import sys

from grader import release as release_mod


def _release(args: argparse.Namespace) -> int:
    try:
        done = release_mod.release([args.chapter] if args.chapter else None)
    except release_mod.LeakError as exc:
        print(exc, file=sys.stderr)
        return 1
    print("released: " + ", ".join(done))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m grader", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("release", help="solutions/ to chapters/ via nbgrader, refusing any leak")
    p.add_argument("chapter", nargs="?", help="e.g. 01-tensors (default: every chapter)")
    p.set_defaults(func=_release)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
