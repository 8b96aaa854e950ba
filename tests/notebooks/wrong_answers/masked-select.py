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
    # selects by value, so a selected zero is lost
    "def my_masked_select(x, mask):\n"
    "    kept = x * mask\n"
    "    return x[kept != 0]",
    # keeps only positive products, so selected zeros and negatives are lost
    "def my_masked_select(x, mask):\n"
    "    kept = x * mask\n"
    "    return kept[kept > 0]",
    # squeeze() turns a single hit into a 0-dim index: shape () instead of (1,)
    "def my_masked_select(x, mask):\n"
    "    return x.flatten()[mask.flatten().nonzero().squeeze()]",
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
