WRONG = [
    # truncates instead of rounding
    "def quantize_int8(x, scale, zero_point):\n"
    "    return (torch.trunc(x / scale) + zero_point).clamp(-128, 127).to(torch.int8)",
    # floor instead of round
    "def quantize_int8(x, scale, zero_point):\n"
    "    return (torch.floor(x / scale) + zero_point).clamp(-128, 127).to(torch.int8)",
    # no saturation: out-of-range values wrap around
    "def quantize_int8(x, scale, zero_point):\n"
    "    return (torch.round(x / scale) + zero_point).to(torch.int32).to(torch.int8)",
    # clamps before adding the zero point, then wraps
    "def quantize_int8(x, scale, zero_point):\n"
    "    return (torch.round(x / scale).clamp(-128, 127).to(torch.int32) + zero_point).to(torch.int8)",
    # forgets the zero point
    "def quantize_int8(x, scale, zero_point):\n"
    "    return torch.round(x / scale).clamp(-128, 127).to(torch.int8)",
    # subtracts the zero point
    "def quantize_int8(x, scale, zero_point):\n"
    "    return (torch.round(x / scale) - zero_point).clamp(-128, 127).to(torch.int8)",
    # multiplies by the scale
    "def quantize_int8(x, scale, zero_point):\n"
    "    return (torch.round(x * scale) + zero_point).clamp(-128, 127).to(torch.int8)",
    # uint8 range
    "def quantize_int8(x, scale, zero_point):\n"
    "    return (torch.round(x / scale) + zero_point).clamp(0, 255).to(torch.uint8)",
    # right values, int32 dtype
    "def quantize_int8(x, scale, zero_point):\n"
    "    return (torch.round(x / scale) + zero_point).clamp(-128, 127).to(torch.int32)",
]

RIGHT = [
    "def quantize_int8(x, scale, zero_point):\n"
    "    q = torch.round(x / scale).to(torch.int32) + zero_point\n"
    "    return torch.clamp(q, min=-128, max=127).to(torch.int8)",
]
