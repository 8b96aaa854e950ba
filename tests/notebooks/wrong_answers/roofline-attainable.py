WRONG = [
    # the higher roof instead of the lower
    "def roofline_bound(intensity, peak, bandwidth):\n"
    "    return max(peak, intensity * bandwidth), ('memory' if intensity * bandwidth < peak else 'compute')",
    # labels swapped
    "def roofline_bound(intensity, peak, bandwidth):\n"
    "    return min(peak, intensity * bandwidth), ('compute' if intensity * bandwidth < peak else 'memory')",
    # the ridge point itself counted as memory-bound
    "def roofline_bound(intensity, peak, bandwidth):\n"
    "    return min(peak, intensity * bandwidth), ('memory' if intensity * bandwidth <= peak else 'compute')",
    # divides by the bandwidth
    "def roofline_bound(intensity, peak, bandwidth):\n"
    "    return min(peak, intensity / bandwidth), ('memory' if intensity / bandwidth < peak else 'compute')",
    # a list instead of a tuple
    "def roofline_bound(intensity, peak, bandwidth):\n"
    "    return [min(peak, intensity * bandwidth), 'memory' if intensity * bandwidth < peak else 'compute']",
    # the label capitalised
    "def roofline_bound(intensity, peak, bandwidth):\n"
    "    return min(peak, intensity * bandwidth), ('Memory' if intensity * bandwidth < peak else 'Compute')",
    # the intensity itself instead of operations per second
    "def roofline_bound(intensity, peak, bandwidth):\n"
    "    return (intensity, 'memory') if intensity * bandwidth < peak else (peak, 'compute')",
    # a NumPy scalar for the rate
    "import numpy as np\n"
    "def roofline_bound(intensity, peak, bandwidth):\n"
    "    return np.minimum(peak, intensity * bandwidth), ('memory' if intensity * bandwidth < peak else 'compute')",
]

RIGHT = [
    "def roofline_bound(intensity, peak, bandwidth):\n"
    "    roof = intensity * bandwidth\n"
    "    return (roof, 'memory') if roof < peak else (peak, 'compute')",
    # the same test against the ridge point, peak / bandwidth
    "def roofline_bound(intensity, peak, bandwidth):\n"
    "    ridge = peak / bandwidth\n"
    "    limit = 'memory' if intensity < ridge else 'compute'\n"
    "    return min(peak, bandwidth * intensity), limit",
    # float32 arithmetic inside, a Python float out
    "import numpy as np\n"
    "def roofline_bound(intensity, peak, bandwidth):\n"
    "    roofs = torch.tensor([peak, intensity * bandwidth], dtype=torch.float32)\n"
    "    label = 'memory' if intensity * bandwidth < peak else 'compute'\n"
    "    return float(roofs.min()), label",
    # NumPy, converted back
    "import numpy as np\n"
    "def roofline_bound(intensity, peak, bandwidth):\n"
    "    roofs = np.array([intensity * bandwidth, peak])\n"
    "    i = int(np.argmin(roofs))\n"
    "    if roofs[0] == roofs[1]:\n"
    "        i = 1\n"
    "    return float(roofs[i]), ('memory', 'compute')[i]",
]
