_HEAD = "def ring_allreduce(tensors):\n    n = len(tensors)\n"


def _ring(copy="t.clone()", rs_chunk="(src - step) % n", ag_chunk="(src + 1 - step) % n", dst="(src + 1) % n",
          add="mine += data", put="mine.copy_(data)", phases="(('reduce-scatter', 0), ('all-gather', 1))", finish="bufs"):
    return (_HEAD + f"    bufs = [{copy} for t in tensors]\n    log = []\n"
            f"    for phase, shift in {phases}:\n        for step in range(n - 1):\n            sends = []\n"
            "            for src in range(n):\n"
            f"                c = {rs_chunk} if phase == 'reduce-scatter' else {ag_chunk}\n"
            "                sends.append((src, c, torch.tensor_split(bufs[src], n)[c].clone()))\n"
            "            for src, c, data in sends:\n"
            f"                dst = {dst}\n"
            "                mine = torch.tensor_split(bufs[dst], n)[c]\n"
            "                if phase == 'reduce-scatter':\n"
            f"                    {add}\n"
            "                else:\n"
            f"                    {put}\n"
            "                log.append((phase, step, src, dst, c))\n"
            f"    return {finish}, log")


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
]
RIGHT = [
    # a rotation-based formulation of the same schedule
    _ring(rs_chunk="(src + n - step) % n", ag_chunk="(src + 1 + n - step) % n"),
]
