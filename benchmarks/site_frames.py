"""Budgets of the site's widget frame players, measured on a built learner site.

- page weight added per widget (its player's HTML, frames included) <= 2 MB; whole site <= 50 MB
- a control change redraws (frame and message swapped, image decoded) in < 50 ms in Chromium
- cold site build (only without --site: it builds one) and a one-notebook rebuild (the notebook's
  execution-cache record dropped, so it re-executes and recomputes its frames) < 30 s

    .venv/bin/python benchmarks/site_frames.py [--site PATH-OUTPUT] [--rebuild chapters/NN-x/NN-y]

--site takes the --path-output of a finished learner build (html in PATH/_build/html); without it
the site is built cold into a throw-away folder first. Prints one line per measurement.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.helpers import site as sitebuild  # noqa: E402

WIDGET_BYTES = 2_000_000
SITE_BYTES = 50_000_000
REDRAW_MS = 50.0
REBUILD_S = 30.0
PLAYER = re.compile(r'<div class="tc-player" data-widget="([^"]+)">.*?'
                    r'<script type="application/json" class="tc-player-data">(.*?)</script>', re.S)

# In the page: change each control of each player a few times and time each swap until the new image is decoded.
REDRAW_JS = """async () => {
  const out = [];
  for (const [i, p] of [...document.querySelectorAll('.tc-player')].entries()) {
    const img = p.querySelector('img.tc-player-frame');
    for (const input of p.querySelectorAll('[data-axis]')) {
      const count = input.tagName === 'SELECT' ? input.options.length : input.type === 'range' ? +input.max + 1 : 2;
      for (let k = 1; k <= Math.min(count, 6); k++) {
        const t0 = performance.now();
        if (input.type === 'checkbox') { input.click(); }
        else { input.value = String((+input.value + 1) % count);
               input.dispatchEvent(new Event(input.type === 'range' ? 'input' : 'change')); }
        await img.decode();
        out.push([i, input.dataset.axis, performance.now() - t0]);
      }
    }
  }
  return out;
}"""


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def page_weights(html: Path) -> list[tuple[str, str, int, int, int]]:
    rows = []
    for page in sorted(html.rglob("*.html")):
        for m in PLAYER.finditer(page.read_text(encoding="utf-8")):
            data = json.loads(m.group(2))
            rows.append((page.relative_to(html).as_posix(), m.group(1).rsplit(".", 1)[1], len(data["frames"]),
                         len(data["images"]), len(m.group(0).encode())))
    return rows


def redraws(html: Path, pages: list[str]) -> dict[str, list[float]]:
    from playwright.sync_api import sync_playwright

    from tests.helpers.browser import CHROMIUM, CHROMIUM_ARGS, Traffic, offline_context

    times: dict[str, list[float]] = {}
    traffic = Traffic()
    with sync_playwright() as p, sitebuild.serve(html) as base:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        ctx = offline_context(browser, traffic)
        page = ctx.new_page()
        for path in pages:
            page.goto(base + path, wait_until="load")
            page.wait_for_selector(".tc-player-ready", timeout=20_000)
            page.wait_for_load_state("networkidle")  # a reader moves controls on a page that has loaded
            names = page.eval_on_selector_all(".tc-player", "ps => ps.map(p => p.dataset.widget.split('.').pop())")
            for i, _axis, ms in page.evaluate(REDRAW_JS):
                times.setdefault(f"{path} {names[i]}", []).append(ms)
        browser.close()
    if traffic.blocked or traffic.page_errors:
        print(f"  (offline check: {len(traffic.blocked)} blocked requests, {len(traffic.page_errors)} page errors)")
    return times


def rebuild_one(out: Path, doc: str) -> float:
    import nbformat
    from jupyter_cache import get_cache

    cache = get_cache(out / "_build" / ".jupyter_cache")
    try:
        record = cache.match_cache_notebook(nbformat.read(ROOT / f"{doc}.ipynb", as_version=4))
        cache.remove_cache(record.pk)  # as if its code had changed: it re-executes and recomputes its frames
    except KeyError:
        pass  # not cached (an earlier run removed it and stopped): it will execute anyway
    os.utime(ROOT / f"{doc}.ipynb")  # and Sphinx re-reads only sources newer than its last build
    site = sitebuild.jupyter_book(out)
    if "Executing notebook" not in site.log:
        sys.exit(f"rebuild did not re-execute {doc}")
    return site.seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, help="--path-output of a finished learner build")
    parser.add_argument("--rebuild", default="chapters/01-tensors/01-what-is-a-tensor")
    args = parser.parse_args()
    if args.site:
        out = args.site
    else:
        sitebuild.vendor()
        site = sitebuild.jupyter_book(sitebuild._WORK / "learner")
        out = site.out
        print(f"cold site build: {site.seconds:.0f} s")
    html = out / "_build" / "html"

    rows = page_weights(html)
    for page, cls, states, images, size in rows:
        print(f"{verdict(size <= WIDGET_BYTES)} {cls:20s} {states:3d} states, {images:3d} distinct frames, "
              f"{size / 1e6:.2f} MB on {page} (budget {WIDGET_BYTES / 1e6:.0f} MB)")
    total = sum(f.stat().st_size for f in html.rglob("*") if f.is_file())
    print(f"{verdict(total <= SITE_BYTES)} whole site {total / 1e6:.1f} MB, of which frame players "
          f"{sum(r[4] for r in rows) / 1e6:.1f} MB (budget {SITE_BYTES / 1e6:.0f} MB)")

    times = redraws(html, sorted({r[0] for r in rows}))
    every = sorted(t for ts in times.values() for t in ts)
    for name, ts in times.items():
        print(f"{verdict(max(ts) < REDRAW_MS)} redraw {name}: median {statistics.median(ts):.1f} ms, "
              f"max {max(ts):.1f} ms over {len(ts)} changes")
    p95 = every[int(0.95 * (len(every) - 1))]
    print(f"{verdict(max(every) < REDRAW_MS)} redraw, all widgets: median {statistics.median(every):.1f} ms, "
          f"95th percentile {p95:.1f} ms, max {max(every):.1f} ms over {len(every)} changes "
          f"(budget {REDRAW_MS:.0f} ms)")

    seconds = rebuild_one(out, args.rebuild)
    print(f"{verdict(seconds < REBUILD_S)} one-notebook rebuild ({args.rebuild} re-executed): {seconds:.1f} s "
          f"(budget {REBUILD_S:.0f} s)")


if __name__ == "__main__":
    start = time.perf_counter()
    main()
    print(f"({time.perf_counter() - start:.0f} s)")
