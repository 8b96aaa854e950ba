"""Widgets and helpers for chapter 1, Tensors (``01-tensors``)."""

from torchcourse.budgets import ChapterBudgets, WidgetBudget

#: What the grader's warm worker imports before any job (grader/inside/base.py). Shapes that do not broadcast
#: make torch.broadcast_shapes import torch's symbolic-shapes module, and with it SymPy, on first use: in every
#: graded notebook's checker otherwise (the hidden checks of broadcast_shape try dozens of such pairs).
WARM = ("torch.fx.experimental.symbolic_shapes",)

BUDGETS = ChapterBudgets(
    chapter="01-tensors",
    notebook_s=20.0,
    widgets=[
        WidgetBudget("torchcourse.tensors.ranks", "RankGallery", {"rank": [0, 1, 2, 3, 4, 5]}),
        WidgetBudget("torchcourse.tensors.broadcast", "BroadcastExplorer",
                     {"text_a": ["3, 1", "2, 1, 3", "2, 3", "5, 1, 4, 1"],
                      "text_b": ["4", "4, 1", "2", "3, 1, 7", "6, 5"]}),
        WidgetBudget("torchcourse.tensors.memory", "MemoryExplorer", None),
    ],
)
