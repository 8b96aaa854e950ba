_FROM = ("def from_fixed(q, frac_bits):\n"
         "    return q.to(torch.float32) / 2**frac_bits\n")
_TO = ("def to_fixed(x, frac_bits):\n"
       "    return torch.round(x * 2**frac_bits).clamp(-32768, 32767).to(torch.int16)\n")

WRONG = [
    # truncation instead of rounding
    "def to_fixed(x, frac_bits):\n"
    "    return torch.trunc(x * 2**frac_bits).clamp(-32768, 32767).to(torch.int16)\n" + _FROM,
    # a plain cast: truncation, and wrap-around beyond the range
    "def to_fixed(x, frac_bits):\n"
    "    return (x * 2**frac_bits).to(torch.int32).to(torch.int16)\n" + _FROM,
    # rounds but wraps around instead of saturating
    "def to_fixed(x, frac_bits):\n"
    "    return torch.round(x * 2**frac_bits).to(torch.int32).to(torch.int16)\n" + _FROM,
    # floor
    "def to_fixed(x, frac_bits):\n"
    "    return torch.floor(x * 2**frac_bits).clamp(-32768, 32767).to(torch.int16)\n" + _FROM,
    # symmetric saturation: -32767 instead of -32768
    "def to_fixed(x, frac_bits):\n"
    "    return torch.round(x * 2**frac_bits).clamp(-32767, 32767).to(torch.int16)\n" + _FROM,
    # from_fixed multiplies
    _TO + "def from_fixed(q, frac_bits):\n"
    "    return q.to(torch.float32) * 2**frac_bits\n",
    # from_fixed returns float64
    _TO + "def from_fixed(q, frac_bits):\n"
    "    return q.to(torch.float64) / 2**frac_bits\n",
    # to_fixed returns int32
    "def to_fixed(x, frac_bits):\n"
    "    return torch.round(x * 2**frac_bits).clamp(-32768, 32767).to(torch.int32)\n" + _FROM,
]

RIGHT = [
    "def to_fixed(x, frac_bits):\n"
    "    scaled = torch.round(torch.ldexp(x, torch.tensor(frac_bits)))\n"
    "    return torch.clamp(scaled, -2**15, 2**15 - 1).short()\n"
    "def from_fixed(q, frac_bits):\n"
    "    return q.float() * 2.0**-frac_bits\n",
]
