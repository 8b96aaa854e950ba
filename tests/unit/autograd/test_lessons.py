"""Chapter 2's lessons say what PyTorch does: the released notebooks run in a real kernel, and each claim their
prose makes about a lesson cell's output (a sum, an equality with PyTorch, a warning, an error) is read back here.

The cells compare with PyTorch themselves (a loop of backward passes, finite differences, `G.sum(0)`); this test
fails when a cell's printed verdict changes, for example after an upgrade of torch.
"""

from __future__ import annotations

import pytest

from tests.helpers.notebooks import ROOT, execute

pytestmark = pytest.mark.notebooks

CHAPTER = ROOT / "chapters" / "02-autograd"

#: notebook -> {cell id: [text its output must contain, ...]}
CLAIMS = {
    "01-graph-and-backward.ipynb": {
        # one pass: the engine sums before the node runs, so a hook on y runs once with 6 + 6
        "one-pass-code": ["the hook on y ran 1 time, with [12.0] | x.grad = tensor(24.)",
                          "torch.autograd.grad(x * x, x): 6.0 | x.grad stays None"],
        "nonleaf-code": ["h.grad: None | x.grad: tensor([18., 36.])",
                         "PyTorch warned: The .grad attribute of a Tensor that is not a leaf Tensor "
                         "is being accessed."],
        "hooks-code": ["h.grad with retain_grad(): tensor([ 6., 12.]) = 2h | "
                       "the hook saw: tensor([ 6., 12.])",
                       "x.grad with h's gradient clipped at 10: tensor([18., 30.])"],
    },
    "03-custom-functions-and-engine.ipynb": {
        "topo-code": ["topological order: x y a b c",
                      "in that order: dc/dx = 24.0  dc/dy = -20.0"],
    },
    "04-gradients-in-practice.ipynb": {
        "cell-003": ["dy/dx   = 12.0 | requires_grad: True", "d2y/dx2 = 12.0 | by hand, 6x = 12.0",
                     "torch.func, grad of grad: 12.0"],
        "cell-005": ["x.grad.requires_grad: True", "reference cycle between the parameter and its gradient"],
        "cell-007": ["equal: True True", "shapes: (3,) (4, 1)"],
        "cell-009": ["0.weight  requires_grad=False  grad is None: True   changed: False",
                     "2.weight  requires_grad=True   grad is None: False  changed: True"],
        "cell-011": ["eval():     dropout off: True | recorded, requires_grad: True", "| requires_grad: False"],
        "cell-013": ["per-sample gradients: weight (5, 1, 3), bias (5, 1) (one per sample)",
                     "equal to 5 backward passes: True",
                     "their mean is the batch's gradient: True"],
        "cell-015": ["it must override the setup_context staticmethod"],
        "cell-017": ["torch.func.grad:        tensor([1.0000, 2.7183, 7.3891])",
                     "vmap(grad), per element: tensor([1.0000, 2.7183, 7.3891])",
                     ".backward() as before:   tensor([1.0000, 2.7183, 7.3891])", "gradcheck in float64:    True"],
    },
    "05-a-network-on-your-engine.ipynb": {
        "cell-003": ["predictions: [-1.0, 1.0, 1.0, -1.0] targets: [-1.0, 1.0, 1.0, -1.0]"],
    },
}


def _printed(cell) -> str:
    return "".join(out.get("text", "") for out in cell.get("outputs", []) if out.output_type == "stream")


@pytest.mark.parametrize("name", sorted(CLAIMS))
def test_lesson_outputs_say_what_the_prose_says(name, tmp_path):
    nb = execute(CHAPTER / name, tmp_path, allow_errors=True)
    cells = {cell.get("id"): cell for cell in nb.cells}
    for cell_id, texts in CLAIMS[name].items():
        assert cell_id in cells, f"{name} has no cell {cell_id}"
        printed = _printed(cells[cell_id])
        for text in texts:
            assert text in printed, f"{name}, cell {cell_id}: {text!r} not in\n{printed}"
