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
    # rounds halves up
    "def to_fixed(x, frac_bits):\n"
    "    return torch.floor(x * 2**frac_bits + 0.5).clamp(-32768, 32767).to(torch.int16)\n" + _FROM,
    # rounds halves away from zero
    "def to_fixed(x, frac_bits):\n"
    "    v = x * 2**frac_bits\n"
    "    return (torch.sign(v) * torch.floor(v.abs() + 0.5)).clamp(-32768, 32767).to(torch.int16)\n" + _FROM,
    # Q5.10 whatever frac_bits says
    "def to_fixed(x, frac_bits):\n"
    "    return torch.round(x * 2**10).clamp(-32768, 32767).to(torch.int16)\n"
    "def from_fixed(q, frac_bits):\n"
    "    return q.to(torch.float32) / 2**10\n",
    # from_fixed in float16: not float32, and inexact
    _TO + "def from_fixed(q, frac_bits):\n"
    "    return q.to(torch.float16) / 2**frac_bits\n",
]

RIGHT = [
    "def to_fixed(x, frac_bits):\n"
    "    scaled = torch.round(torch.ldexp(x, torch.tensor(frac_bits)))\n"
    "    return torch.clamp(scaled, -2**15, 2**15 - 1).short()\n"
    "def from_fixed(q, frac_bits):\n"
    "    return q.float() * 2.0**-frac_bits\n",
    # in place on x, which the task allows; from_fixed through float64
    "def to_fixed(x, frac_bits):\n"
    "    x.mul_(2**frac_bits).round_().clamp_(-32768, 32767)\n"
    "    return x.to(torch.int16)\n"
    "def from_fixed(q, frac_bits):\n"
    "    return (q.double() / 2**frac_bits).float()\n",
    # NumPy-built (np.rint rounds halves to even)
    "import numpy as np\n"
    "def to_fixed(x, frac_bits):\n"
    "    codes = np.clip(np.rint(x.numpy() * 2.0**frac_bits), -32768, 32767)\n"
    "    return torch.from_numpy(codes.astype(np.int16))\n"
    "def from_fixed(q, frac_bits):\n"
    "    return torch.from_numpy((q.numpy() / 2**frac_bits).astype(np.float32))\n",
    # float64 inside, and int32 before the final int16
    "def to_fixed(x, frac_bits):\n"
    "    codes = torch.round(x.to(torch.float64) * 2**frac_bits).to(torch.int32)\n"
    "    return codes.clamp(-32768, 32767).to(torch.int16)\n"
    "def from_fixed(q, frac_bits):\n"
    "    return torch.ldexp(q.to(torch.float32), torch.tensor(-frac_bits))\n",
    # integer true division gives float32 by default
    "def to_fixed(x, frac_bits):\n"
    "    return torch.clamp(torch.round(x / 2.0**-frac_bits), -32768, 32767).to(torch.int16)\n"
    "def from_fixed(q, frac_bits):\n"
    "    return q / 2**frac_bits\n",
]

FAILING_VARIANTS = {
    "noisy": "the task promises from_fixed's values exactly: q / 2**frac_bits is exact in float32, so a value one "
             "unit in the last place away is wrong",
}
