"""Cost models for chapter 3: link speeds with their sources, CUDA_VISIBLE_DEVICES, and the ZeRO byte counts.

Used by ``chapters/03-parallel/01-devices-and-cuda.ipynb`` (sections 2-3) and by the parallelism planner.
Everything here is a *model*: published peak figures and arithmetic, labelled as such wherever it is shown.
The formulas the chapter's exercises ask for (a transfer's time, an all-reduce's bytes, ZeRO's memory per
rank) are written out in the notebooks' own cells, not here: this package is importable by learners.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Link:
    name: str
    gb_per_s: float  # decimal gigabytes (1e9 bytes) per second, one direction unless said otherwise
    note: str
    source: str


#: Published peak figures. PCIe: per direction, x16, after line encoding (128b/130b from 3.0 on).
LINKS = [
    Link("PCIe 3.0 x16", 15.75, "8 GT/s per lane, per direction",
         "PCI-SIG, PCI Express Base Specification 3.0 (8 GT/s, 128b/130b encoding)"),
    Link("PCIe 4.0 x16", 31.5, "16 GT/s per lane, per direction",
         "PCI-SIG, PCI Express Base Specification 4.0 (16 GT/s)"),
    Link("PCIe 5.0 x16", 63.0, "32 GT/s per lane, per direction",
         "PCI-SIG, PCI Express Base Specification 5.0 (32 GT/s)"),
    Link("NVLink 3 (A100)", 300.0, "600 GB/s total both directions, so 300 GB/s each way",
         "NVIDIA A100 Tensor Core GPU datasheet (NVLink: 600 GB/s)"),
    Link("NVLink 4 (H100 SXM)", 450.0, "900 GB/s total both directions, so 450 GB/s each way",
         "NVIDIA H100 Tensor Core GPU datasheet (NVLink: 900 GB/s)"),
]


#: Between servers (nodes) no GPU link reaches: each GPU's traffic to another server goes through a network
#: port. 400 Gb/s per port is 50 GB/s each way; Llama 3's training cluster gave every GPU such a port
#: (Grattafiori et al., "The Llama 3 Herd of Models", 2024: RoCE and InfiniBand fabrics, "400 Gbps
#: interconnects between GPUs"; 8 GPUs per server joined by NVLink).
INTER_NODE = Link("InfiniBand/RoCE 400G", 50.0, "400 Gb/s per GPU's network port, per direction",
                  "NVIDIA ConnectX-7 (InfiniBand NDR, 400 Gb/s); Grattafiori et al., The Llama 3 Herd of Models")


def visible_devices(value: str | None, n_physical: int) -> list[int]:
    """Which physical GPUs a process sees, in the order it numbers them, for a ``CUDA_VISIBLE_DEVICES``.

    Follows the rule in NVIDIA's CUDA C++ Programming Guide ("CUDA Environment Variables"): only the
    listed indices are visible, numbered in the order listed; an invalid index hides itself and every
    index after it. ``None`` (unset) shows every device; an empty string shows none. (CUDA also accepts
    GPU UUIDs; this model handles integer indices only, and refuses a repeated index.)
    """
    if value is None:
        return list(range(n_physical))
    seen: list[int] = []
    for item in value.split(","):
        item = item.strip()
        if item.isdigit() and int(item) in seen:
            raise ValueError(f"index {item} is repeated; this model does not say what CUDA does then")
        if not item.isdigit() or int(item) >= n_physical:
            break
        seen.append(int(item))
    return seen


#: Bytes per parameter in mixed-precision Adam training, as the ZeRO paper counts them
#: (Rajbhandari et al., "ZeRO: Memory Optimizations Toward Training Trillion Parameter Models", SC 2020):
#: fp16 parameters (2), fp16 gradients (2), and K = 12 bytes of fp32 optimizer state
#: (a parameter copy, momentum and variance).
PARAM_BYTES, GRAD_BYTES, OPTIM_BYTES = 2, 2, 12
