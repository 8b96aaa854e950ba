WRONG = [
    # every row's scores at every label: an (N, N) matrix
    "def label_scores(scores, labels):\n    return scores[:, labels]",
    # gather keeps the index's shape: (N, 1), not (N,)
    "def label_scores(scores, labels):\n    return scores.gather(1, labels.unsqueeze(1))",
    # squeeze() also removes N when there is one sample: shape () instead of (1,)
    "def label_scores(scores, labels):\n    return scores.gather(1, labels.unsqueeze(1)).squeeze()",
    # gathers along the wrong dimension: scores[labels[j], j]
    "def label_scores(scores, labels):\n    return scores.gather(0, labels.unsqueeze(0)).squeeze(0)",
    # the best score, not the label's score
    "def label_scores(scores, labels):\n    return scores.max(dim=1).values",
    # whole rows picked by label
    "def label_scores(scores, labels):\n    return scores[labels]",
    # float32 whatever the scores' dtype
    "def label_scores(scores, labels):\n    return scores[torch.arange(len(labels)), labels].float()",
    # the label itself, not its score
    "def label_scores(scores, labels):\n    return labels.to(scores.dtype)",
    # the loop with a float32 output whatever the scores' dtype
    "def label_scores(scores, labels):\n"
    "    out = torch.empty(len(labels))\n"
    "    for i in range(len(labels)):\n"
    "        out[i] = scores[i, labels[i]]\n"
    "    return out",
]
RIGHT = [
    "def label_scores(scores, labels):\n    return scores[torch.arange(len(scores)), labels]",
    "def label_scores(scores, labels):\n    return scores.gather(1, labels[:, None])[:, 0]",
    "def label_scores(scores, labels):\n    return scores.gather(1, labels.unsqueeze(1)).flatten()",
    # the loop of the specification itself
    "def label_scores(scores, labels):\n"
    "    out = torch.empty(len(labels), dtype=scores.dtype)\n"
    "    for i in range(len(labels)):\n"
    "        out[i] = scores[i, labels[i]]\n"
    "    return out",
    # every row at every label, then its diagonal: a view with other strides
    "def label_scores(scores, labels):\n"
    "    return scores.index_select(1, labels).diagonal()",
    # the same with advanced indexing
    "def label_scores(scores, labels):\n"
    "    return scores[:, labels].diagonal()",
    # NumPy-built
    "import numpy as np\n"
    "def label_scores(scores, labels):\n"
    "    return torch.from_numpy(np.take_along_axis(scores.numpy(), labels.numpy()[:, None], axis=1)[:, 0])",
    # gather on the transposed scores, then a transposed result
    "def label_scores(scores, labels):\n"
    "    return scores.T.gather(0, labels[None, :]).T[:, 0]",
    # a stack of 0-dim tensors
    "def label_scores(scores, labels):\n"
    "    return torch.stack([scores[i, labels[i]] for i in range(len(labels))]) if len(labels) else scores[:0, 0]",
]

# What the task makes wrong among the generated variants of the solution.
FAILING_VARIANTS = {
    "noisy": "the task asks for exactly the selected scores",
}
