"""The catalog of what code shows a learner: `src/torchcourse/locale/<lang>/LC_MESSAGES/torchcourse.po`.

Its messages come from two places:
- the course's Python, every string marked `_("...")` or `N_("...")` (Babel's Python extractor, as
  `pybabel extract -k _ -k N_` would find them), in the library and in the grader modules that speak to a
  learner;
- the notebooks' checks: the constant strings a check passes as `hint=`, `what=`, the message of
  `expect_true`, and the `taught = "..."` lines the checks name. The check code stays identical in both
  editions; `torchcourse.grading` looks those strings up in this catalog when it shows them.
"""

from __future__ import annotations

import ast
from pathlib import Path

import nbformat
from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_file

from torchcourse.translation.catalogs import PROJECT, merge

KEYWORDS = {"_": None, "N_": None}
# Grader modules whose words reach a learner: `python -m grader check` and the feedback page.
GRADER_MODULES = ("grader/check.py", "grader/feedback.py")
CHECK_KEYWORDS = ("hint", "what")


def catalog_path(root: Path, language: str) -> Path:
    return root / "src" / "torchcourse" / "locale" / language / "LC_MESSAGES" / "torchcourse.po"


def _python_files(root: Path) -> list[Path]:
    library = sorted((root / "src" / "torchcourse").rglob("*.py"))
    return [p for p in library if "translation" not in p.parts] + [root / m for m in GRADER_MODULES]


def _constants(node: ast.AST) -> list[str]:
    """The string constants a check's argument can evaluate to (`a if c else b`, `a or b` included)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.IfExp):
        return _constants(node.body) + _constants(node.orelse)
    if isinstance(node, ast.BoolOp):
        return [s for value in node.values for s in _constants(value)]
    return []


def check_strings(source: str) -> list[str]:
    """The words a checks cell shows a learner, in order of appearance."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    taught_names = set()
    found: list[tuple[int, int, str]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        for keyword in node.keywords:
            if keyword.arg in CHECK_KEYWORDS:
                found += [(keyword.value.lineno, keyword.value.col_offset, s) for s in _constants(keyword.value)]
            elif keyword.arg == "taught" and isinstance(keyword.value, ast.Name):
                taught_names.add(keyword.value.id)
            elif keyword.arg == "taught":
                found += [(keyword.value.lineno, keyword.value.col_offset, s) for s in _constants(keyword.value)]
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if name == "expect_true" and len(node.args) > 1:
            found += [(node.args[1].lineno, node.args[1].col_offset, s) for s in _constants(node.args[1])]
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id in taught_names for t in node.targets):
            found += [(node.value.lineno, node.value.col_offset, s) for s in _constants(node.value)]
    return [s for _, _, s in sorted(found, key=lambda item: item[:2])]


def template(root: Path) -> Catalog:
    cat = Catalog(project=PROJECT, fuzzy=False)
    for path in _python_files(root):
        where = str(path.relative_to(root))
        for _lineno, message, comments, _context in extract_from_file(
            "python", path, keywords=KEYWORDS, comment_tags=("TRANSLATORS:",), strip_comment_tags=True
        ):
            cat.add(message, locations=[(where, None)], auto_comments=comments)
    for nb_path in sorted((root / "solutions").glob("*/*.ipynb")):
        where = f"{nb_path.parent.name}/{nb_path.name}"
        for cell in nbformat.read(nb_path, as_version=4).cells:
            if cell.cell_type == "code":
                for message in check_strings(cell.source):
                    cat.add(message, locations=[(where, None)])
    return cat


def update(root: Path, language: str) -> Path:
    path = catalog_path(root, language)
    merge(path, template(root), language)
    return path
