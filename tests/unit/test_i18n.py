"""What the code shows a learner, in the learner's language: the language chosen as gettext would choose
it, the catalog in step with the code and the notebooks' checks, and a check's message translated."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from torchcourse import i18n
from torchcourse.translation import catalogs, code_strings, quality
from torchcourse.translation.catalogs import merge

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def clean_env(monkeypatch):
    for name in ("TORCHCOURSE_LANGUAGE", "JPY_SESSION_NAME", "LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_the_language_is_chosen_as_gettext_chooses_it(clean_env, tmp_path):
    assert i18n.language() == "en"
    clean_env.setenv("LANG", "zh_CN.UTF-8")
    assert i18n.language() == "zh_CN"
    clean_env.setenv("LC_ALL", "C.UTF-8")  # LC_ALL comes before LANG
    assert i18n.language() == "en"
    clean_env.setenv("LANGUAGE", "fr:zh_TW:en")  # a list: the first the course knows
    assert i18n.language() == "zh_CN"
    notebook = tmp_path / "a.ipynb"
    notebook.write_text(json.dumps({"cells": [], "metadata": {"torchcourse": {"language": "en"}}}))
    clean_env.setenv("JPY_SESSION_NAME", str(notebook))  # the notebook's own language wins over LANG
    assert i18n.language() == "en"
    clean_env.setenv("TORCHCOURSE_LANGUAGE", "zh_CN")  # what the grader sets wins over everything
    assert i18n.language() == "zh_CN"
    with i18n.speaking("en"):
        assert i18n.language() == "en"
    assert i18n.language() == "zh_CN"


def test_unknown_or_odd_names_fall_back_to_english(clean_env):
    assert [i18n.normalise(n) for n in ("zh-Hans", "zh_CN.GB2312", "en_GB", "C", "POSIX", "de_DE", "", None)] == [
        "zh_CN", "zh_CN", "en", "en", "en", None, None, None,
    ]
    clean_env.setenv("LANG", "de_DE.UTF-8")
    assert i18n.language() == "en"


def test_the_code_catalog_is_in_step_with_the_code_and_the_checks(tmp_path):
    path = code_strings.catalog_path(ROOT, "zh_CN")
    copy = tmp_path / path.name
    shutil.copy(path, copy)
    merge(copy, code_strings.template(ROOT), "zh_CN")
    assert copy.read_bytes() == path.read_bytes(), "run `python -m torchcourse.translation update`"


def test_the_checks_strings_are_found():
    source = (
        'taught = "section 2, \'Views\'"\n'
        'expect_equal(g, w, call="f()", taught=taught, hint="use view" if a else "use reshape")\n'
        'expect_true(ok, "the tensor must not change", taught=taught)\n'
        'expect_unchanged(a, b, call="f(a)", what="its argument a", hint=f"dynamic {x}")\n'
    )
    assert code_strings.check_strings(source) == [
        "section 2, 'Views'", "use view", "use reshape", "the tensor must not change", "its argument a",
    ]


def test_a_failed_check_speaks_the_learners_language():
    """In a fresh interpreter, as a kernel would be: the same check, once in English and once in Chinese."""
    program = (
        "from torchcourse.grading import CheckFailed, expect_equal\n"
        "try:\n"
        "    expect_equal(3, 4, call='f(1)', hint='a NumPy scalar is not a Python float: convert it with float(...)')\n"
        "except CheckFailed as e:\n"
        "    print(e)\n"
    )
    outputs = {}
    for lang in ("en", "zh_CN"):
        env = {"PATH": "/usr/bin:/bin", "TORCHCOURSE_LANGUAGE": lang, "HOME": "/tmp"}
        outputs[lang] = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True,
                                       check=True).stdout
    assert outputs["en"].startswith("f(1) returned an int 3; expected an int 4.\nHint: a NumPy scalar")
    chinese = outputs["zh_CN"]
    assert chinese != outputs["en"] and chinese.startswith("f(1) ") and "float(...)" in chinese
    assert _has_chinese(chinese.splitlines()[0]) and _has_chinese(chinese.splitlines()[1])


def _has_chinese(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


#: Messages whose Chinese is the English itself: widget labels that are code (the expression box's "out =",
#: the dtype drop-down), as the notebooks' code names them.
KEPT_AS_CODE = {"out =", "dtype"}


def test_every_code_message_is_translated_and_keeps_what_it_must():
    """Like a released chapter's catalogs: no message untranslated or fuzzy, none with a quality problem
    (placeholders, code, numbers kept; Chinese in it)."""
    catalog = catalogs.read(code_strings.catalog_path(ROOT, "zh_CN"), "zh_CN")
    gaps = []
    for message in catalog:
        if not message.id:
            continue
        if message.fuzzy or not message.string:
            gaps.append(f"{'fuzzy' if message.fuzzy else 'untranslated'}: {message.id[:70]}")
        elif message.id in KEPT_AS_CODE:
            if message.string != message.id:
                gaps.append(f"a label that is code must stay as it is: {message.id!r} -> {message.string!r}")
        else:
            gaps += [f"{problem}: {message.id[:70]}" for problem in quality.problems(message.id, message.string, ROOT)]
    assert not gaps, "\n".join(gaps[:40]) + f"\n({len(gaps)} in all)"


EXPLORERS_PROGRAM = """
import hashlib, json
from torchcourse.autograd.graph import GraphExplorer
from torchcourse.tensors.memory import MemoryExplorer
from torchcourse.widgets import figure_png
shown = {}
for name, explorer in (("memory", MemoryExplorer()), ("graph", GraphExplorer(expression="x +"))):
    shown[name] = {"title": explorer.title, "labels": [c.description for c in explorer.controls.values()],
                   "caption": explorer.message.value,
                   "figure": hashlib.sha256(figure_png(explorer.figure)).hexdigest()}
print(json.dumps(shown))
"""


def test_an_explorer_speaks_the_learners_language_and_so_does_its_figure_where_a_font_can_draw_it():
    """In a fresh interpreter, as a kernel would be: the same explorers in English and in Chinese. The title,
    the labels (but those that are code) and the caption are Chinese; so are the figure's words where a CJK font
    is installed (torchcourse.figure_words), and without one the figure is the English picture (never boxes)."""
    from torchcourse.figure_words import cjk_family

    shown = {}
    for lang in ("en", "zh_CN"):
        env = {"PATH": "/usr/bin:/bin", "TORCHCOURSE_LANGUAGE": lang, "HOME": "/tmp", "MPLBACKEND": "Agg"}
        done = subprocess.run([sys.executable, "-c", EXPLORERS_PROGRAM], env=env, capture_output=True, text=True,
                              check=True)
        shown[lang] = json.loads(done.stdout.strip().splitlines()[-1])
    en, zh = shown["en"], shown["zh_CN"]
    assert en["memory"]["title"] == "Memory explorer"
    assert en["memory"]["labels"] == ["shape", "source x", "operation"]
    assert en["memory"]["caption"] == (
        "<code>x[1:, ::2]</code> is a <b>view</b>: basic slicing only changes the shape, strides and offset; it "
        "reads the source's storage. Result shape (2, 2), strides (4, 2), offset 4.")
    assert en["graph"]["caption"].startswith("Could not read 'x +': invalid syntax")
    assert en["graph"]["labels"] == ["out =", "x", "y", "backward step"]
    for name in ("memory", "graph"):
        assert _has_chinese(zh[name]["title"]) and _has_chinese(zh[name]["caption"])
        drawn_in_chinese = zh[name]["figure"] != en[name]["figure"]
        assert drawn_in_chinese == (cjk_family() is not None), f"the {name} explorer's figure in Chinese"
    assert all(_has_chinese(label) for label in zh["memory"]["labels"])
    assert zh["graph"]["labels"][:3] == ["out =", "x", "y"] and _has_chinese(zh["graph"]["labels"][3])
    assert "<code>x[1:, ::2]</code>" in zh["memory"]["caption"] and "(4, 2)" in zh["memory"]["caption"]
    assert "'x +'" in zh["graph"]["caption"]


def test_no_message_hides_inside_an_f_string():
    """gettext's extractor reads `_("...")` only as a plain call: one inside an f-string's braces never reaches
    the catalog, and its words would stay English in every language."""
    import ast

    hidden = []
    for path in code_strings._python_files(ROOT):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.JoinedStr):
                for call in ast.walk(node):
                    literal = isinstance(call, ast.Call) and call.args and isinstance(call.args[0], ast.Constant)
                    if literal and getattr(call.func, "id", "") in ("_", "N_"):
                        hidden.append(f"{path.relative_to(ROOT)}:{call.lineno}")
    assert not hidden, hidden


def test_a_widgets_options_are_shown_in_the_learners_language_and_keep_their_english_values(clean_env):
    """Live in JupyterLab: each drop-down's words in the learner's language, as (label, value) pairs whose values stay
    the English identifiers the code, saved widget state and the site's frames use; a label that is code (a method's
    name, a dtype, a product, a dataflow's short name) as it is, even where the catalog has the same word."""
    from torchcourse.autograd.descent import SURFACES, DescentPlayground
    from torchcourse.autograd.jacobian import FUNCTIONS, JacobianExplorer
    from torchcourse.hardware.roofline import OPERATIONS, RooflineExplorer
    from torchcourse.hardware.systolic import SystolicAnimator
    from torchcourse.parallel.planner import STRATEGIES, ParallelismPlanner
    from torchcourse.tensors.memory import LAYOUTS, OPS, MemoryExplorer

    zh = i18n.translations("zh_CN").gettext

    def shown(explorer, control):
        return dict((value, label) for label, value in explorer.controls[control]._options_full)

    clean_env.setenv("TORCHCOURSE_LANGUAGE", "en")
    english = MemoryExplorer()
    assert shown(english, "layout") == {"contiguous": "contiguous", "transposed": "transposed"}
    assert english.controls["op"].options == tuple(OPS)

    clean_env.setenv("TORCHCOURSE_LANGUAGE", "zh_CN")
    planner = ParallelismPlanner(strategy="pipeline")
    assert planner.controls["strategy"].value == "pipeline" and planner.state.strategy == "pipeline"
    assert [v for _label, v in planner.controls["strategy"]._options_full] == STRATEGIES
    labels = shown(planner, "strategy")
    assert labels["pipeline"] == zh("pipeline") == "流水线并行" and labels["tensor"] == "张量并行"
    assert labels["single device"] == "单设备" and labels["DDP"] == "DDP" and labels["FSDP (ZeRO-3)"] == "FSDP (ZeRO-3)"
    assert all(label == value for value, label in shown(planner, "link").items())  # PCIe 4.0 x16, NVLink 4 (H100 SXM)
    planner.controls["strategy"].value = "tensor"
    assert planner.state.strategy == "tensor"

    roofline = RooflineExplorer()
    labels = shown(roofline, "operation")
    assert list(labels) == OPERATIONS and all(labels[op] == zh(op) != op for op in OPERATIONS)
    assert all(_has_chinese(label) for label in labels.values())
    assert shown(roofline, "dtype") == {"float32": "float32", "bfloat16": "bfloat16", "int8": "int8"}
    roofline.controls["operation"].value = OPERATIONS[1]
    assert roofline.state.operation == OPERATIONS[1]

    memory = MemoryExplorer(layout="transposed", op="contiguous")
    assert shown(memory, "layout") == {"contiguous": "连续", "transposed": "转置"} and list(LAYOUTS) == list(
        shown(memory, "layout"))
    ops = shown(memory, "op")
    assert list(ops) == list(OPS) and memory.controls["op"].value == "contiguous"
    assert ops["contiguous"] == "contiguous" and ops["view"] == "view" and ops["detach"] == "detach"
    assert ops["advanced indexing"] == "高级索引" and ops["boolean mask"] == "布尔掩码" and ops["slice"] == "切片"
    assert memory.state.layout == "transposed" and memory.state.op == "contiguous" and memory.state.kind == "copy"

    surfaces = shown(DescentPlayground(), "surface")
    assert list(surfaces) == list(SURFACES) and all(_has_chinese(label) for label in surfaces.values())
    functions = shown(JacobianExplorer(), "function")
    assert list(functions) == list(FUNCTIONS)
    assert all(functions[code] == code for code in ("softmax (3 -> 3)", "W tanh(x) (3 -> 2)"))
    polar = functions["polar to cartesian (2 -> 2)"]
    assert _has_chinese(polar) and "2 -> 2" in polar
    assert shown(SystolicAnimator(), "dataflow") == {"ws": "ws", "os": "os", "is": "is"}


def test_the_sites_player_names_the_options_as_the_live_widget_does(clean_env):
    """The site build runs in English: its frames' labels are the English ones, and the Chinese labels it carries
    beside them are the live widget's, "contiguous" the layout (a word) and "contiguous" the method (code) apart."""
    from torchcourse.tensors.memory import MemoryExplorer

    clean_env.setenv("TORCHCOURSE_LANGUAGE", "en")
    memory = MemoryExplorer()
    axes, _states = memory.frame_states()
    by_name = {a.name: a for a in axes}
    assert by_name["layout"].labels == ["contiguous", "transposed"]
    assert "contiguous" in by_name["op"].labels and "advanced indexing" in by_name["op"].labels
    chinese = dict(zip((a.name for a in axes), memory.translated_labels(axes)["zh_CN"]))
    assert chinese["layout"] == ["连续", "转置"]
    ops = dict(zip(by_name["op"].values, chinese["op"]))
    assert ops["contiguous"] == "contiguous" and ops["advanced indexing"] == "高级索引" and ops["reshape"] == "reshape"
    described = " ".join(memory.frame_space_description("zh_CN"))
    assert "连续、转置" in described and "切片、view、reshape" in described
