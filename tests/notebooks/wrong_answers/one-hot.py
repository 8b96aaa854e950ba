WRONG = [
    # PyTorch's one_hot returns int64
    "def one_hot(labels, n_classes):\n    return torch.nn.functional.one_hot(labels, n_classes)",
    # without num_classes it guesses the largest label + 1
    "def one_hot(labels, n_classes):\n    return torch.nn.functional.one_hot(labels).float()",
    # a bool mask, not numbers
    "def one_hot(labels, n_classes):\n    return labels[:, None] == torch.arange(n_classes)",
    # transposed: (n_classes, N)
    "def one_hot(labels, n_classes):\n    return (torch.arange(n_classes)[:, None] == labels).float()",
    # float64
    "def one_hot(labels, n_classes):\n    return (labels[:, None] == torch.arange(n_classes)).double()",
    # the label's value written in, not 1.0
    "def one_hot(labels, n_classes):\n    return (labels[:, None] == torch.arange(n_classes)) * labels[:, None].float()",
]
RIGHT = [
    "def one_hot(labels, n_classes):\n    return torch.eye(n_classes)[labels]",
    "def one_hot(labels, n_classes):\n    return torch.nn.functional.one_hot(labels, n_classes).float()",
    "def one_hot(labels, n_classes):\n    return torch.zeros(len(labels), n_classes).scatter_(1, labels[:, None], 1.0)",
    # the transposed comparison, transposed back
    "def one_hot(labels, n_classes):\n"
    "    return (torch.arange(n_classes)[:, None] == labels).float().T",
    # NumPy-built
    "import numpy as np\n"
    "def one_hot(labels, n_classes):\n"
    "    return torch.from_numpy((labels.numpy()[:, None] == np.arange(n_classes)).astype(np.float32))",
    # index_put_ with a row index
    "def one_hot(labels, n_classes):\n"
    "    out = torch.zeros(len(labels), n_classes)\n"
    "    out[torch.arange(len(labels)), labels] = 1.0\n"
    "    return out",
]

# What the task makes wrong among the generated variants of the solution.
FAILING_VARIANTS = {
    "noisy": "the task asks for exactly 0.0 and 1.0",
}
