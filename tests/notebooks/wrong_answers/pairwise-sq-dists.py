WRONG = [
    # distances, not squared distances
    "def pairwise_sq_dists(a, b):\n    return torch.cdist(a, b)",
    # only the pairs (a[i], b[i]): no broadcast at all
    "def pairwise_sq_dists(a, b):\n    return ((a - b) ** 2).sum(-1)",
    # transposed: (M, N)
    "def pairwise_sq_dists(a, b):\n    return ((a[None, :, :] - b[:, None, :]) ** 2).sum(-1)",
    # sums over the points instead of the coordinates
    "def pairwise_sq_dists(a, b):\n    return ((a[:, None, :] - b[None, :, :]) ** 2).sum(1)",
    # the dot products alone
    "def pairwise_sq_dists(a, b):\n    return a @ b.T",
    # float64 whatever the input dtype
    "def pairwise_sq_dists(a, b):\n    return ((a[:, None, :].double() - b[None, :, :].double()) ** 2).sum(-1)",
]
RIGHT = [
    "def pairwise_sq_dists(a, b):\n"
    "    return (a * a).sum(1)[:, None] - 2 * a @ b.T + (b * b).sum(1)[None, :]",
    "def pairwise_sq_dists(a, b):\n    return torch.cdist(a, b) ** 2",
    "def pairwise_sq_dists(a, b):\n    return (a.unsqueeze(1) - b.unsqueeze(0)).pow(2).sum(dim=2)",
    # computed the other way round, then transposed
    "def pairwise_sq_dists(a, b):\n"
    "    return ((b[:, None, :] - a[None, :, :]) ** 2).sum(-1).T",
    # vmap over the points of a
    "def pairwise_sq_dists(a, b):\n"
    "    return torch.vmap(lambda p: ((p - b) ** 2).sum(-1))(a)",
    # float64 inside, back to the input dtype
    "def pairwise_sq_dists(a, b):\n"
    "    d = a.double()[:, None, :] - b.double()[None, :, :]\n"
    "    return (d * d).sum(-1).to(a.dtype)",
]
