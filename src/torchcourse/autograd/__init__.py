"""Widgets and helpers for chapter 2, Autograd (``02-autograd``).

- ``graph``: the graph explorer (notebook 2.1), the graph PyTorch recorded, stepped through backward;
- ``jacobian``: the Jacobian explorer (notebook 2.2), J from ``torch.func.jacrev`` and ``v^T J``;
- ``descent``: the descent playground (notebook 2.3), SGD with and without ``zero_grad``.
"""

from torchcourse.budgets import ChapterBudgets, WidgetBudget

#: Imported by the grader's warm worker before any job of a chapter that uses this package: torch.func's
#: transforms and torch.optim's optimizers import TorchDynamo on first use (a second or more, once per graded
#: notebook otherwise).
WARM = ("torch._dynamo",)

#: A 30-node graph: the size the graph explorer's 200 ms budget is stated for.
GRAPH_30 = ("tanh(x*y) + exp(x)*sin(y) + (x+y)*(x-y) + x**3/y + sigmoid(x*2+y) + cos(x*y*x) + log(x*x+y)*y"
            " + sqrt(y)")

BUDGETS = ChapterBudgets(
    chapter="02-autograd",
    notebook_s=20.0,
    widgets=[
        WidgetBudget("torchcourse.autograd.graph", "GraphExplorer",
                     {"expression": [GRAPH_30, "x * y + x", "(x + y) * (x - y)", GRAPH_30],
                      "step": [0, 5, 12, 20, 29]}, update_ms=200.0),
        WidgetBudget("torchcourse.autograd.jacobian", "JacobianExplorer",
                     {"function": ["W tanh(x) (3 -> 2)", "softmax (3 -> 3)", "polar to cartesian (2 -> 2)"],
                      "v_text": ["1, 0", "0, 1, 0", "1, 1", "2, -1, 0.5"]}),
        WidgetBudget("torchcourse.autograd.descent", "DescentPlayground",
                     {"lr": [0.05, 0.1, 0.2, 0.3], "momentum": [0.0, 0.5, 0.9], "steps": [30, 60],
                      "forget_zero_grad": [True, False], "surface": ["elongated bowl", "banana valley"]}),
    ],
)
