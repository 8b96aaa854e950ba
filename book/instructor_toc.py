"""Write the instructor site's toc from _toc.yml: the same pages, read from solutions/.

The learner toc (_toc.yml) is the one list chapter authors edit; the instructor toc is derived
from it on every `make book-instructor`, so the two sites never drift apart.

    python book/instructor_toc.py OUT.yml
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent


def to_solutions(node: Any) -> Any:
    """Map every `file: chapters/...` entry to `solutions/...`."""
    if isinstance(node, list):
        return [to_solutions(n) for n in node]
    if isinstance(node, dict):
        out = {k: to_solutions(v) for k, v in node.items()}
        if isinstance(out.get("file"), str) and out["file"].startswith("chapters/"):
            out["file"] = "solutions/" + out["file"][len("chapters/"):]
        return out
    return node


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    out = Path(argv[0])
    out.parent.mkdir(parents=True, exist_ok=True)
    text = "# Generated from _toc.yml by book/instructor_toc.py: edit _toc.yml instead.\n"
    text += yaml.safe_dump(to_solutions(toc), allow_unicode=True, sort_keys=False)
    if not out.exists() or out.read_text(encoding="utf-8") != text:
        out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
