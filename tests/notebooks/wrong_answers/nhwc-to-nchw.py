_STRIDES = (
    "\n\n"
    "def nchw_strides(n, h, w, c):\n"
    "    return (h * w * c, 1, w * c, c)"
)

WRONG = [
    # reshape keeps the memory order: right shape, scrambled pixels
    "def nhwc_to_nchw(batch):\n"
    "    n, h, w, c = batch.shape\n"
    "    return batch.reshape(n, c, h, w)" + _STRIDES,
    # view: the same scramble
    "def nhwc_to_nchw(batch):\n"
    "    n, h, w, c = batch.shape\n"
    "    return batch.view(n, c, h, w)" + _STRIDES,
    # the right permutation, then a copy
    "def nhwc_to_nchw(batch):\n"
    "    return batch.permute(0, 3, 1, 2).contiguous()" + _STRIDES,
    # the right values, cloned
    "def nhwc_to_nchw(batch):\n"
    "    return batch.permute(0, 3, 1, 2).clone()" + _STRIDES,
    # height and width swapped: (N, C, W, H)
    "def nhwc_to_nchw(batch):\n"
    "    return batch.permute(0, 3, 2, 1)" + _STRIDES,
    # one transpose swaps C with W only
    "def nhwc_to_nchw(batch):\n"
    "    return batch.transpose(1, 3)" + _STRIDES,
    # the right permute, but the strides of a contiguous NCHW tensor
    "def nhwc_to_nchw(batch):\n"
    "    return batch.permute(0, 3, 1, 2)\n\n"
    "def nchw_strides(n, h, w, c):\n"
    "    return (c * h * w, h * w, w, 1)",
    # the right permute, strides off by one dimension
    "def nhwc_to_nchw(batch):\n"
    "    return batch.permute(0, 3, 1, 2)\n\n"
    "def nchw_strides(n, h, w, c):\n"
    "    return (n * h * w * c, 1, h * w * c, w * c)",
    # the right permute, strides as floats
    "def nhwc_to_nchw(batch):\n"
    "    return batch.permute(0, 3, 1, 2)\n\n"
    "def nchw_strides(n, h, w, c):\n"
    "    return (h * w * c / 1, 1.0, w * c / 1, c / 1)",
    # the right permute, strides as a list
    "def nhwc_to_nchw(batch):\n"
    "    return batch.permute(0, 3, 1, 2)\n\n"
    "def nchw_strides(n, h, w, c):\n"
    "    return [h * w * c, 1, w * c, c]",
]

RIGHT = [
    "def nhwc_to_nchw(batch):\n"
    "    return batch.movedim(-1, 1)" + _STRIDES,
    "def nhwc_to_nchw(batch):\n"
    "    return batch.transpose(1, 3).transpose(2, 3)\n\n"
    "def nchw_strides(n, h, w, c):\n"
    "    return tuple(torch.empty(n, h, w, c).permute(0, 3, 1, 2).stride())",
    # as_strided with the permuted strides: the same view
    "def nhwc_to_nchw(batch):\n"
    "    n, h, w, c = batch.shape\n"
    "    s = batch.stride()\n"
    "    return batch.as_strided((n, c, h, w), (s[0], s[3], s[1], s[2]), batch.storage_offset())\n"
    "\n"
    "def nchw_strides(n, h, w, c):\n"
    "    return (h * w * c, 1, w * c, c)",
    # einops-style rearrangement written with permute by name
    "def nhwc_to_nchw(batch):\n"
    "    order = [0, 3, 1, 2]\n"
    "    return batch.permute(*order)\n"
    "\n"
    "def nchw_strides(n, h, w, c):\n"
    "    s = (h * w * c, w * c, c, 1)\n"
    "    return (s[0], s[3], s[1], s[2])",
]

# What the task makes wrong among the generated variants of the solution.
FAILING_VARIANTS = {
    "restrided": "the task asks for a view of batch, whose strides the checks compare",
    "copied": "the result must share batch's memory",
    "noisy": "the result must share batch's memory and hold exactly its values",
    "inputs-copied": "the result must share the memory of the batch the caller passed",
    "inputs-changed": "the task says batch itself must not change",
}
