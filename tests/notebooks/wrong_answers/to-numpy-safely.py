WRONG = [
    # refuses tensors that require grad
    "def to_numpy_safely(t):\n    return t.numpy()",
    # a copy
    "def to_numpy_safely(t):\n    return t.detach().clone().numpy()",
    # np.array copies by default
    "def to_numpy_safely(t):\n    return np.array(t.detach())",
    # contiguous() copies a transposed or sliced tensor
    "def to_numpy_safely(t):\n    return t.detach().contiguous().numpy()",
    # through Python lists: a copy, and float32 becomes float64
    "def to_numpy_safely(t):\n    return np.array(t.tolist())",
    # switches off the caller's requires_grad (and fails on a non-leaf)
    "def to_numpy_safely(t):\n    t.requires_grad_(False)\n    return t.numpy()",
    # a copy made on the NumPy side
    "def to_numpy_safely(t):\n    return t.detach().numpy().copy()",
    # changes the dtype
    "def to_numpy_safely(t):\n    return t.detach().double().numpy()",
    # writes into t's memory
    "def to_numpy_safely(t):\n"
    "    a = t.detach().numpy()\n"
    "    a[...] = 0\n"
    "    return a",
]
RIGHT = [
    "def to_numpy_safely(t):\n    return t.numpy(force=True)",
    "def to_numpy_safely(t):\n    return np.asarray(t.detach().cpu())",
    "def to_numpy_safely(t):\n    return t.cpu().detach().numpy()",
    # t.data is a detached view of the same memory
    "def to_numpy_safely(t):\n"
    "    return t.data.numpy()",
    # np.asarray of a detached tensor shares
    "def to_numpy_safely(t):\n"
    "    return np.asarray(t.detach())",
]

# What the task makes wrong among the generated variants of the solution.
FAILING_VARIANTS = {
    "restrided": "the array must share t's memory: one with other strides is new memory",
    "copied": "the array must share t's memory, not copy it",
    "noisy": "the array must share t's memory and hold exactly its values",
    "inputs-copied": "the array must share the memory of the tensor the caller passed",
    "inputs-changed": "the task says t itself must not change",
}
