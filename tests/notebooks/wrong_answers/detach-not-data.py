# Chapter 2, notebook 2.2, exercise 3: values without history that autograd still watches.
WRONG = [
    # .data: shares memory, but bypasses the version counter (erratum E9)
    "def frozen(t):\n    return t.data",
    # a copy: does not share t's memory
    "def frozen(t):\n    return t.detach().clone()",
    "def frozen(t):\n    return t.clone().detach()",
    # a copy made under no_grad
    "def frozen(t):\n    with torch.no_grad():\n        return t * 1",
    # t itself still requires grad
    "def frozen(t):\n    return t",
    # detached, then asked to require grad again
    "def frozen(t):\n    return t.detach().requires_grad_()",
    # a NumPy array, not a tensor
    "def frozen(t):\n    return t.detach().numpy()",
    # a view made under no_grad shares memory, but as a view of t it still reports requires_grad=True
    "def frozen(t):\n    with torch.no_grad():\n        return t.view_as(t)",
]
RIGHT = [
    # detach, then a view of the detached tensor: same memory, same version counter
    "def frozen(t):\n    return t.detach().view(t.shape)",
]
