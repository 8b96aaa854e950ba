"""Simulators and widgets for chapter 4, AI hardware (``04-hardware``).

- ``machines``: this machine measured from PyTorch, and published accelerators (4.1);
- ``roofline``: their roofs, the roofline explorer, performance per watt (4.1);
- ``weight_stationary``: a cycle-level weight-stationary systolic array (4.2);
- ``systolic``: its animator, in any dataflow, and its utilisation plot (4.2, 4.4);
- ``dataflows``: output- and input-stationary arrays, SRAM reads per dataflow, im2col convolution (4.4);
- ``tpu_memory``: TPU v1's weight stalls, its latency against batch size, the TPUs after it (4.4);
- ``scalesim_reference``: SCALE-Sim 3.0.0's counts on the shapes the notebooks print (4.2, 4.4);
- ``numerics``: int8 with scale and zero point, 16-bit fixed point, a piecewise-linear sigmoid (4.2, 4.3);
- ``npu``: DianNao's NFU, DaDianNao's tiles and eDRAM, ShiDianNao's neighbour reuse, PuDianNao's algorithms (4.3);
- ``fixedpoint``: the fixed-point explorer (4.3).
"""

from torchcourse.budgets import ChapterBudgets, WidgetBudget

BUDGETS = ChapterBudgets(
    chapter="04-hardware",
    notebook_s=20.0,
    widgets=[
        WidgetBudget("torchcourse.hardware.systolic", "SystolicAnimator",
                     {"cycle": [0, 5, 10, 15, 20, 25, 30, 40], "rows": [16], "cols": [16], "k": [16], "n": [16],
                      "m": [16], "dataflow": ["ws", "os", "is"]}),
        WidgetBudget("torchcourse.hardware.roofline", "RooflineExplorer",
                     {"operation": ["matmul n x n x n", "add (n x n elements)",
                                    "conv2d 3x3, 64->64 channels, n x n image"],
                      "n": [8, 64, 512, 4096], "dtype": ["float32", "bfloat16", "int8"]}),
        WidgetBudget("torchcourse.hardware.fixedpoint", "FixedPointExplorer",
                     {"int_bits": [0, 2, 5, 8, 15], "value": [3.14159, -0.3, 40.0, -40.0, 0.001]}),
    ],
    probes=["torchcourse.hardware.weight_stationary:measure_throughput"],  # simulated MACs per second
)
