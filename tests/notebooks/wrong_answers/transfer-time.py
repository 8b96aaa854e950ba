WRONG = [
    # binary gigabytes (2**30) where the task says decimal ones
    "def transfer_time(nbytes, gb_per_s, latency_us):\n    return latency_us * 1e-6 + nbytes / (gb_per_s * 2**30)",
    # forgets the start-up latency
    "def transfer_time(nbytes, gb_per_s, latency_us):\n    return nbytes / (gb_per_s * 1e9)",
    # reads the latency as milliseconds
    "def transfer_time(nbytes, gb_per_s, latency_us):\n    return latency_us * 1e-3 + nbytes / (gb_per_s * 1e9)",
    # treats the bandwidth as gigabits per second
    "def transfer_time(nbytes, gb_per_s, latency_us):\n    return latency_us * 1e-6 + 8 * nbytes / (gb_per_s * 1e9)",
    # answers in microseconds
    "def transfer_time(nbytes, gb_per_s, latency_us):\n    return latency_us + nbytes / (gb_per_s * 1e3)",
    # rounds to whole microseconds, returning an int count of them
    "def transfer_time(nbytes, gb_per_s, latency_us):\n    return round(latency_us + nbytes / (gb_per_s * 1e3))",
]
RIGHT = [
    "def transfer_time(nbytes, gb_per_s, latency_us):\n    return float(latency_us / 1e6 + nbytes / gb_per_s / 1e9)",
]
