_HEAD = "def transfer_time(nbytes, gb_per_s, latency_us):\n"
WRONG = [
    # binary gigabytes (2**30) where the task says decimal ones
    _HEAD + "    return latency_us * 1e-6 + nbytes / (gb_per_s * 2**30)",
    # forgets the start-up latency
    _HEAD + "    return nbytes / (gb_per_s * 1e9)",
    # reads the latency as milliseconds
    _HEAD + "    return latency_us * 1e-3 + nbytes / (gb_per_s * 1e9)",
    # treats the bandwidth as gigabits per second
    _HEAD + "    return latency_us * 1e-6 + 8 * nbytes / (gb_per_s * 1e9)",
    # answers in microseconds
    _HEAD + "    return latency_us + nbytes / (gb_per_s * 1e3)",
    # rounds to whole microseconds, returning an int count of them
    _HEAD + "    return round(latency_us + nbytes / (gb_per_s * 1e3))",
    # a NumPy scalar where a Python float is asked
    "import numpy as np\n" + _HEAD + "    return np.float64(latency_us) * 1e-6 + nbytes / (gb_per_s * 1e9)",
    # a tensor where a Python float is asked
    _HEAD + "    return torch.tensor(latency_us * 1e-6 + nbytes / (gb_per_s * 1e9), dtype=torch.float64)",
    # float16 arithmetic: far outside the stated relative 1e-6
    _HEAD + "    t = torch.tensor([latency_us * 1e-6, nbytes / (gb_per_s * 1e9)], dtype=torch.float16)\n"
    "    return float(t.sum())",
]
RIGHT = [
    _HEAD + "    return float(latency_us / 1e6 + nbytes / gb_per_s / 1e9)",
    # float32 arithmetic throughout: within the task's relative 1e-6
    _HEAD + "    t = torch.tensor([latency_us * 1e-6, float(nbytes)], dtype=torch.float32)\n"
    "    return float(t[0] + t[1] / (torch.tensor(gb_per_s, dtype=torch.float32) * 1e9))",
    # float32 in NumPy, converted back to a Python float
    "import numpy as np\n" + _HEAD
    + "    return float(np.float32(latency_us) / np.float32(1e6) + np.float32(nbytes) / np.float32(gb_per_s * 1e9))",
    # bytes per microsecond first, then seconds
    _HEAD + "    bytes_per_us = gb_per_s * 1e3\n    return (latency_us + nbytes / bytes_per_us) / 1e6",
    # exact rational arithmetic, rounded to a float once
    _HEAD + "    from fractions import Fraction\n"
    "    return float(Fraction(latency_us) / 10**6 + Fraction(nbytes) / (Fraction(gb_per_s) * 10**9))",
]
