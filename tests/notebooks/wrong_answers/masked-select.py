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
    # a Python list of values made into a tensor: int32 becomes int64
    "def my_masked_select(x, mask):\n"
    "    return torch.tensor([v.item() for v, m in zip(x.flatten(), mask.flatten()) if m])",
    # a view of x when one element is selected, not new memory
    "def my_masked_select(x, mask):\n"
    "    flat = x.reshape(-1)\n"
    "    pos = mask.reshape(-1).nonzero().flatten()\n"
    "    return flat[int(pos[0]):int(pos[0]) + 1] if len(pos) == 1 else flat[pos]",
]

RIGHT = [
    "def my_masked_select(x, mask):\n"
    "    return x[tuple(mask.nonzero().T)]",
    "def my_masked_select(x, mask):\n"
    "    return x.flatten()[mask.flatten().nonzero().flatten()]",
    "def my_masked_select(x, mask):\n"
    "    return x[mask]",
    # torch.masked_select itself, as the task allows
    "def my_masked_select(x, mask):\n"
    "    return torch.masked_select(x, mask)",
    # NumPy-built, back to a tensor of x's dtype
    "def my_masked_select(x, mask):\n"
    "    return torch.from_numpy(x.numpy()[mask.numpy()].copy())",
]

# What the task makes wrong among the generated variants of the solution.
FAILING_VARIANTS = {
    "noisy": "the task asks for exactly x's values",
}
