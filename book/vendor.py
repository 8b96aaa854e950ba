"""Copy the site's third-party JavaScript from node_modules/ into book/_vendor/ (gitignored).

The learner site must load nothing from a CDN: require.js, the ipywidgets HTML manager and
MathJax 3 come from the npm packages pinned in package.json/package-lock.json (`npm ci`),
and only the files a page can ask for are copied (about 6 MB, not the 150 MB of node_modules).
book/js/ holds the small scripts this course writes itself (two shims and the widgets' frame player).
Run by `make book`.

    python book/vendor.py [--check]     # --check: only report what is missing
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NODE = ROOT / "node_modules"
VENDOR = ROOT / "book" / "_vendor"
SHIMS = ROOT / "book" / "js"

# (source under node_modules, destination under book/_vendor, glob or None for one file)
COPIES: list[tuple[str, str, str | None]] = [
    ("requirejs/require.js", "require.js", None),
    ("@jupyter-widgets/html-manager/dist/embed-amd.js", "ipywidgets/embed-amd.js", None),
    # Font Awesome for widget icons: Chromium and every current browser only need woff2.
    ("@jupyter-widgets/html-manager/dist", "ipywidgets", "*.woff2"),
    ("mathjax/es5/tex-mml-chtml.js", "mathjax/tex-mml-chtml.js", None),
    ("mathjax/es5/output/chtml/fonts/woff-v2", "mathjax/output/chtml/fonts/woff-v2", "*.woff"),
    # TeX packages MathJax autoloads on demand (\cancel, \bbox, ...) and its accessibility menu.
    ("mathjax/es5/input/tex/extensions", "mathjax/input/tex/extensions", "*.js"),
    ("mathjax/es5/a11y", "mathjax/a11y", "*.js"),
    ("mathjax/LICENSE", "mathjax/LICENSE", None),
    ("requirejs/README.md", "require.js.README.md", None),
]


def main(argv: list[str]) -> int:
    if not NODE.is_dir():
        print("book/vendor.py: node_modules/ is missing; run `npm ci` (make book does).", file=sys.stderr)
        return 1
    missing = [src for src, _, _ in COPIES if not (NODE / src).exists()]
    if missing:
        print(f"book/vendor.py: missing in node_modules/: {missing}; run `npm ci`.", file=sys.stderr)
        return 1
    if "--check" in argv:
        return 0
    # Fill a fresh folder, then swap it in: a build running meanwhile never sees half a copy.
    fresh = NODE / f".vendor-new-{os.getpid()}"  # node_modules/ is gitignored, on the same disk
    shutil.rmtree(fresh, ignore_errors=True)
    count = 0
    for src, dst, pattern in COPIES:
        source, target = NODE / src, fresh / dst
        files = [(source, target)] if pattern is None else [
            (f, target / f.relative_to(source)) for f in sorted(source.rglob(pattern))]
        for f, t in files:
            t.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f, t)
            count += 1
    for shim in sorted(SHIMS.glob("*.js")):
        shutil.copyfile(shim, fresh / "ipywidgets" / shim.name)
        count += 1
    old = NODE / f".vendor-old-{os.getpid()}"
    if VENDOR.exists():
        VENDOR.rename(old)
    fresh.rename(VENDOR)
    shutil.rmtree(old, ignore_errors=True)
    size = sum(f.stat().st_size for f in VENDOR.rglob("*") if f.is_file())
    print(f"book/vendor.py: {count} files, {size / 1e6:.1f} MB in {VENDOR.relative_to(ROOT)}/")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
