WRONG = [
    # both copy
    "def share_and_copy(a):\n    return torch.tensor(a), torch.tensor(a)",
    # both share
    "def share_and_copy(a):\n    return torch.from_numpy(a), torch.as_tensor(a)",
    # the legacy constructor converts to float32, so it copies and changes the dtype
    "def share_and_copy(a):\n    return torch.Tensor(a), torch.tensor(a)",
    # swapped
    "def share_and_copy(a):\n    return torch.tensor(a), torch.from_numpy(a)",
    # a list, not a tuple
    "def share_and_copy(a):\n    return [torch.from_numpy(a), torch.tensor(a)]",
    # shares but changes the dtype
    "def share_and_copy(a):\n    return torch.from_numpy(a).float(), torch.tensor(a)",
]
RIGHT = [
    "def share_and_copy(a):\n    return torch.as_tensor(a), torch.from_numpy(a).clone()",
    "def share_and_copy(a):\n    shared = torch.from_numpy(a)\n    return shared, shared.clone()",
]
