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
    # detaches the caller's t in place: the result is t itself, and t no longer requires grad
    "def frozen(t):\n    return t.detach_()",
    "def frozen(t):\n    t.requires_grad_(False)\n    return t",
]
RIGHT = [
    # detach, then a view of the detached tensor: same memory, same version counter
    "def frozen(t):\n    return t.detach().view(t.shape)",
    "def frozen(t):\n    return t.detach()",
    # a view of t first, then detached: the view shares t's version counter too
    "def frozen(t):\n    return t[...].detach()",
    "def frozen(t):\n    return torch.detach(t).reshape(t.shape)",
]
FAILING_VARIANTS = {
    "restrided": "the task asks for t's values in t's own memory: a result in new memory is a copy",
    "copied": "the task asks for t's values in t's own memory: a copy is what the exercise rules out",
    "noisy": "the task asks for t's values in t's own memory: changed values in new memory are a copy",
    "inputs-copied": "the result must share the caller's t's memory, not a copy's",
    "inputs-changed": "the result must share t's memory; this variant hands back a copy (and t requires grad, so "
                      "it cannot be changed)",
}
