WRONG = [
    # floor division rounds down
    "def batches_needed(n_items, batch_size):\n    return n_items // batch_size",
    # one too many whenever the count is an exact multiple
    "def batches_needed(n_items, batch_size):\n    return n_items // batch_size + 1",
    # true division: a float32 result
    "def batches_needed(n_items, batch_size):\n    return (n_items / batch_size).ceil()",
    # back to int64, but float32 has already rounded large counts
    "def batches_needed(n_items, batch_size):\n    return (n_items / batch_size).ceil().long()",
    # float64 is exact only up to 2**53
    "def batches_needed(n_items, batch_size):\n    return (n_items.double() / batch_size).ceil().long()",
    # truncation is floor for counts: still rounds down
    "def batches_needed(n_items, batch_size):\n    return torch.div(n_items, batch_size, rounding_mode='trunc')",
    # in place: changes the caller's counts
    "def batches_needed(n_items, batch_size):\n    n_items += batch_size - 1\n    return n_items // batch_size",
]
RIGHT = [
    "def batches_needed(n_items, batch_size):\n    return torch.div(n_items + batch_size - 1, batch_size, rounding_mode='floor')",
    # a bool tensor promotes to int64 when added to one
    "def batches_needed(n_items, batch_size):\n    return n_items // batch_size + (n_items % batch_size > 0)",
    # negated floor division, with torch.div
    "def batches_needed(n_items, batch_size):\n"
    "    return -torch.div(-n_items, batch_size, rounding_mode='floor')",
    # in place on a copy of its own
    "def batches_needed(n_items, batch_size):\n"
    "    out = n_items.clone()\n"
    "    out += batch_size - 1\n"
    "    out //= batch_size\n"
    "    return out",
    # NumPy-built
    "import numpy as np\n"
    "def batches_needed(n_items, batch_size):\n"
    "    return torch.from_numpy(-(-n_items.numpy() // batch_size))",
]

# What the task makes wrong among the generated variants of the solution.
FAILING_VARIANTS = {
    "inputs-changed": "the task says n_items itself must not change",
}
