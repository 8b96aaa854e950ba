_HEAD = "def ring_allreduce(tensors):\n    n = len(tensors)\n"


def _ring(copy="t.clone()", rs_chunk="(src - step) % n", ag_chunk="(src + 1 - step) % n", dst="(src + 1) % n",
          add="mine += data", put="mine.copy_(data)", phases="(('reduce-scatter', 0), ('all-gather', 1))",
          finish="bufs", split="torch.tensor_split(BUF, n)"):
    return (_HEAD + f"    bufs = [{copy} for t in tensors]\n    log = []\n"
            f"    for phase, shift in {phases}:\n        for step in range(n - 1):\n            sends = []\n"
            "            for src in range(n):\n"
            f"                c = {rs_chunk} if phase == 'reduce-scatter' else {ag_chunk}\n"
            f"                sends.append((src, c, {split.replace('BUF', 'bufs[src]')}[c].clone()))\n"
            "            for src, c, data in sends:\n"
            f"                dst = {dst}\n"
            f"                mine = {split.replace('BUF', 'bufs[dst]')}[c]\n"
            "                if phase == 'reduce-scatter':\n"
            f"                    {add}\n"
            "                else:\n"
            f"                    {put}\n"
            "                log.append((phase, step, src, dst, c))\n"
            f"    return {finish}, log")


_LOG = ("    log = [(ph, s, r, (r + 1) % n, (r + sh - s) % n) for ph, sh in (('reduce-scatter', 0), ('all-gather', 1))\n"
        "           for s in range(n - 1) for r in range(n)]\n")

WRONG = [
    # averages where a sum was asked
    _ring(finish="[b / n for b in bufs]"),
    # sends the wrong chunk in the all-gather (one step behind)
    _ring(ag_chunk="(src - step) % n"),
    # one step off: the last reduce-scatter step sends the chunk one index ahead
    _ring(rs_chunk="(src - step) % n if step < n - 2 else (src - step + 1) % n"),
    # sends to the left neighbour
    _ring(dst="(src - 1) % n"),
    # stops after the reduce-scatter
    _ring(phases="(('reduce-scatter', 0),)"),
    # works on the inputs themselves (modifies the caller's tensors)
    _ring(copy="t"),
    # the all-gather adds instead of copying
    _ring(put="mine += data"),
    # log entries as lists, not tuples
    _ring().replace("log.append((phase, step, src, dst, c))", "log.append([phase, step, src, dst, c])"),
    # no ring at all: the right log, and every rank gets sum(tensors), added in rank order
    _HEAD + _LOG + "    return [sum(tensors) for _ in range(n)], log",
    # no ring: one vectorised sum over a stacked tensor
    _HEAD + _LOG + "    total = torch.stack(tensors).sum(0)\n    return [total.clone() for _ in range(n)], log",
    # torch.chunk instead of torch.tensor_split (other chunk boundaries, and sometimes fewer chunks)
    _ring(split="BUF.chunk(n)"),
    # float32 buffers whatever the inputs' dtype
    _ring(copy="t.float()"),
    # float32 results: the right ring, converted at the end
    _ring(finish="[b.float() for b in bufs]"),
    # the results as a tuple
    _ring(finish="tuple(bufs)"),
    # each chunk summed in rank order 0, 1, ..., N-1 (right values in exact arithmetic, not the ring's rounding)
    _HEAD + _LOG + "    out = [t.clone() for t in tensors]\n"
    "    for c, idx in enumerate(torch.tensor_split(torch.arange(len(tensors[0])), n)):\n"
    "        acc = tensors[0][idx].clone()\n        for k in range(1, n):\n            acc = acc + tensors[k][idx]\n"
    "        for b in out:\n            b[idx] = acc\n    return out, log",
]
RIGHT = [
    # a rotation-based formulation of the same schedule
    _ring(rs_chunk="(src + n - step) % n", ag_chunk="(src + 1 + n - step) % n"),
    # senders one after another, each message delivered at once (no rank receives the chunk it sends in a step)
    _HEAD + "    bufs = [t.clone() for t in tensors]\n    log = []\n"
    "    for phase, shift in (('reduce-scatter', 0), ('all-gather', 1)):\n        for step in range(n - 1):\n"
    "            for src in range(n):\n                c, dst = (src + shift - step) % n, (src + 1) % n\n"
    "                data = torch.tensor_split(bufs[src], n)[c]\n                mine = torch.tensor_split(bufs[dst], n)[c]\n"
    "                mine.copy_(mine + data if phase == 'reduce-scatter' else data)\n"
    "                log.append((phase, step, src, dst, c))\n    return bufs, log",
    # slices from the chunk boundaries, the received chunk on the left of the addition
    _HEAD + "    length = len(tensors[0])\n    base, extra = divmod(length, n)\n"
    "    starts = [c * base + min(c, extra) for c in range(n + 1)]\n"
    "    bufs = [t.detach().clone() for t in tensors]\n    log = []\n"
    "    for phase, shift in (('reduce-scatter', 0), ('all-gather', 1)):\n        for step in range(n - 1):\n"
    "            sent = [(src, (src + shift - step) % n) for src in range(n)]\n"
    "            data = [bufs[src][starts[c]:starts[c + 1]].clone() for src, c in sent]\n"
    "            for (src, c), d in zip(sent, data):\n                dst = (src + 1) % n\n"
    "                if phase == 'reduce-scatter':\n"
    "                    bufs[dst][starts[c]:starts[c + 1]] = d + bufs[dst][starts[c]:starts[c + 1]]\n"
    "                else:\n                    bufs[dst][starts[c]:starts[c + 1]] = d\n"
    "                log.append((phase, step, src, dst, c))\n    return bufs, log",
    # NumPy buffers (the same float64 additions), back to tensors at the end
    "import numpy as np\n" + _HEAD + "    bufs = [t.numpy().copy() for t in tensors]\n    log = []\n"
    "    for phase, shift in (('reduce-scatter', 0), ('all-gather', 1)):\n        for step in range(n - 1):\n"
    "            sent = [(src, (src + shift - step) % n) for src in range(n)]\n"
    "            data = [np.array_split(bufs[src], n)[c].copy() for src, c in sent]\n"
    "            for (src, c), d in zip(sent, data):\n                dst = (src + 1) % n\n"
    "                mine = np.array_split(bufs[dst], n)[c]\n"
    "                if phase == 'reduce-scatter':\n                    mine += d\n"
    "                else:\n                    mine[:] = d\n"
    "                log.append((phase, step, src, dst, c))\n    return [torch.from_numpy(b) for b in bufs], log",
    # no messages: each chunk summed in the ring's own order, starting at the rank whose index it has
    _HEAD + _LOG + "    out = [torch.empty_like(t) for t in tensors]\n"
    "    for c, idx in enumerate(torch.tensor_split(torch.arange(len(tensors[0])), n)):\n"
    "        acc = tensors[c][idx]\n        for k in range(1, n):\n            acc = tensors[(c + k) % n][idx] + acc\n"
    "        for b in out:\n            b[idx] = acc\n    return out, log",
]

FAILING_VARIANTS = {
    "noisy": "the task promises results exactly as the ring's additions give them, bit for bit",
    "inputs-changed": "the task says to leave the input tensors unchanged",
}
