WRONG = [
    # nonzero()'s (count, ndim) rows used as one index: they index the first dimension only
    "def my_masked_select(x, mask):\n"
    "    return x[mask.nonzero()]",
    # only the first coordinate of each hit, applied to the flattened tensor
    "def my_masked_select(x, mask):\n"
    "    return x.flatten()[mask.nonzero()[:, 0]]",
    # zeros where the mask is False: the wrong shape
    "def my_masked_select(x, mask):\n"
    "    return x * mask",
    # torch.where keeps the shape too
    "def my_masked_select(x, mask):\n"
    "    return torch.where(mask, x, torch.zeros_like(x))",
    # column-major order
    "def my_masked_select(x, mask):\n"
    "    return x.mT[mask.mT] if x.ndim >= 2 else x[mask]",
    # float result for integer input
    "def my_masked_select(x, mask):\n"
    "    return x[mask.nonzero(as_tuple=True)].float()",
    # the flat positions of the hits instead of the values
    "def my_masked_select(x, mask):\n"
    "    return mask.flatten().nonzero().flatten()",
]

RIGHT = [
    "def my_masked_select(x, mask):\n"
    "    return x[tuple(mask.nonzero().T)]",
    "def my_masked_select(x, mask):\n"
    "    return x.flatten()[mask.flatten().nonzero().flatten()]",
    "def my_masked_select(x, mask):\n"
    "    return x[mask]",
]
