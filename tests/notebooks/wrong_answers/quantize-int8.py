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
    # rounds halves up, not to even
    "def quantize_int8(x, scale, zero_point):\n"
    "    return (torch.floor(x / scale + 0.5) + zero_point).clamp(-128, 127).to(torch.int8)",
    # rounds halves away from zero (C's round, not torch.round)
    "def quantize_int8(x, scale, zero_point):\n"
    "    v = x / scale\n"
    "    return (torch.sign(v) * torch.floor(v.abs() + 0.5) + zero_point).clamp(-128, 127).to(torch.int8)",
]

RIGHT = [
    "def quantize_int8(x, scale, zero_point):\n"
    "    q = torch.round(x / scale).to(torch.int32) + zero_point\n"
    "    return torch.clamp(q, min=-128, max=127).to(torch.int8)",
    # column by column (the result is built column-major)
    "def quantize_int8(x, scale, zero_point):\n"
    "    cols = [(torch.round(c / scale) + zero_point).clamp(-128, 127).to(torch.int8) for c in x.T]\n"
    "    return torch.stack(cols, dim=1)",
    # in place on x, which the task allows
    "def quantize_int8(x, scale, zero_point):\n"
    "    x.div_(scale).round_().add_(zero_point).clamp_(-128, 127)\n"
    "    return x.to(torch.int8)",
    # float64 inside, the zero point added before rounding
    "def quantize_int8(x, scale, zero_point):\n"
    "    q = torch.round(x.double() / scale + zero_point)\n"
    "    return q.clamp(-128, 127).to(torch.int8)",
    # NumPy-built (np.round also rounds halves to even)
    "import numpy as np\n"
    "def quantize_int8(x, scale, zero_point):\n"
    "    q = np.clip(np.round(x.numpy() / scale) + zero_point, -128, 127)\n"
    "    return torch.from_numpy(q.astype(np.int8))",
    # PyTorch's own (deprecated) quantised tensors give the same codes (it adds the zero point before rounding,
    # which differs only for a tie with an odd zero point: the checks' ties all have even zero points)
    "def quantize_int8(x, scale, zero_point):\n"
    "    return torch.quantize_per_tensor(x, scale, zero_point, torch.qint8).int_repr()",
]
