WRONG = [
    # reseeds the global generator: same numbers, but it changes everyone else's random stream
    "def seeded_noise(shape, seed):\n    torch.manual_seed(seed)\n    return torch.randn(shape, dtype=torch.float64)",
    # float32 numbers converted afterwards: a different stream of numbers
    "def seeded_noise(shape, seed):\n    g = torch.Generator().manual_seed(seed)\n    return torch.randn(shape, generator=g).double()",
    # ignores the seed
    "def seeded_noise(shape, seed):\n    return torch.randn(shape, generator=torch.Generator().manual_seed(0), dtype=torch.float64)",
    # uniform instead of normal
    "def seeded_noise(shape, seed):\n    g = torch.Generator().manual_seed(seed)\n    return torch.rand(shape, generator=g, dtype=torch.float64)",
    # restores the global state, but draws float32 numbers and converts them: not the named call's numbers
    "def seeded_noise(shape, seed):\n    s = torch.get_rng_state()\n    torch.manual_seed(seed)\n    x = torch.randn(shape)\n    torch.set_rng_state(s)\n    return x.double()",
]
RIGHT = [
    # exactly the call the task names
    "def seeded_noise(shape, seed):\n    g = torch.Generator()\n    g.manual_seed(seed)\n"
    "    return torch.randn(*shape, generator=g, dtype=torch.float64)",
    # a fork of the global generator that restores it afterwards is also fine
    "def seeded_noise(shape, seed):\n    with torch.random.fork_rng():\n        torch.manual_seed(seed)\n        return torch.randn(shape, dtype=torch.float64)",
    # normal_ with a generator draws the same stream as randn
    "def seeded_noise(shape, seed):\n"
    "    g = torch.Generator().manual_seed(seed)\n"
    "    return torch.empty(shape, dtype=torch.float64).normal_(generator=g)",
    # the shape as a list
    "def seeded_noise(shape, seed):\n"
    "    return torch.randn(list(shape), generator=torch.Generator().manual_seed(seed), dtype=torch.float64)",
]

# What the task makes wrong among the generated variants of the solution.
FAILING_VARIANTS = {
    "noisy": "the task asks for exactly the numbers torch.randn draws, bit for bit",
}
