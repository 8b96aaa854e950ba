"""Widgets and helpers for chapter 3, Parallel computing (``03-parallel``).

- ``costs``: link figures with sources, transfer and collective cost models, ZeRO memory;
- ``split``: pipeline, tensor and data parallelism over simulated devices, DataParallel's steps on CPU;
- ``ring``: ring all-reduce simulated over N ranks and run for real with ``torch.distributed``;
- ``launch``, ``ddp_train`` and ``ddp_practice``: real ``torchrun`` DDP jobs over ``gloo`` (or ``nccl``, chosen by
  ``devices``), streamed into a notebook: training, checkpoints, restarts, ``no_sync``, ``Join``;
- ``thread_ranks``: a real ``gloo`` group whose ranks are threads of one process (the graded DDP step);
- widgets: ``planner`` (parallelism planner), ``ringanim`` (ring all-reduce animator),
  ``timeline`` (DDP timeline); ``redraw``: their figures, kept and redrawn in place.
"""

from torchcourse.budgets import ChapterBudgets, WidgetBudget

#: Imported by the grader's warm worker before any job of a chapter that uses this package: torch.optim's
#: optimizers import TorchDynamo on first use (Optimizer.add_param_group is wrapped with
#: torch._disable_dynamo), about 1.2 s, once per graded notebook otherwise.
WARM = ("torch._dynamo",)

BUDGETS = ChapterBudgets(
    chapter="03-parallel",
    notebook_s=60.0,
    widgets=[
        WidgetBudget("torchcourse.parallel.planner", "ParallelismPlanner",
                     {"strategy": ["DataParallel", "DDP", "FSDP (ZeRO-3)", "pipeline", "tensor"],
                      "devices": [2, 4, 8]}),
        WidgetBudget("torchcourse.parallel.ringanim", "RingAnimator",
                     {"step": [0, 1, 2, 3, 4, 5, 6], "ranks": [3, 4, 5]}),
        WidgetBudget("torchcourse.parallel.timeline", "DDPTimeline", {"buckets": [1, 2, 4, 8], "devices": [2, 4, 8]}),
    ],
)
