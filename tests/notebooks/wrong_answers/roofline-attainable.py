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
]

RIGHT = [
    "def roofline_bound(intensity, peak, bandwidth):\n"
    "    roof = intensity * bandwidth\n"
    "    return (roof, 'memory') if roof < peak else (peak, 'compute')",
]
