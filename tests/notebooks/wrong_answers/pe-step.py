WRONG = [
    # int8 x int8 product overflows before it reaches the int32 sum
    "def pe_step(a_in, psum_in, weight):\n"
    "    return a_in, psum_in + a_in * weight",
    # passes the partial sum to the right and the activation down
    "def pe_step(a_in, psum_in, weight):\n"
    "    return psum_in + a_in.to(torch.int32) * weight.to(torch.int32), a_in",
    # drops the partial sum from above
    "def pe_step(a_in, psum_in, weight):\n"
    "    return a_in, a_in.to(torch.int32) * weight.to(torch.int32)",
    # accumulates in int8
    "def pe_step(a_in, psum_in, weight):\n"
    "    return a_in, (psum_in + a_in.to(torch.int32) * weight.to(torch.int32)).to(torch.int8)",
    # does not pass the activation on
    "def pe_step(a_in, psum_in, weight):\n"
    "    return torch.zeros_like(a_in), psum_in + a_in.to(torch.int32) * weight.to(torch.int32)",
    # float arithmetic
    "def pe_step(a_in, psum_in, weight):\n"
    "    return a_in, psum_in + a_in.float() * weight.float()",
    # int64 sums
    "def pe_step(a_in, psum_in, weight):\n"
    "    return a_in, psum_in.long() + a_in.long() * weight.long()",
]

RIGHT = [
    "def pe_step(a_in, psum_in, weight):\n"
    "    psum_down = psum_in.clone()\n"
    "    psum_down += a_in.int() * weight.int()\n"
    "    return a_in.clone(), psum_down",
    "def pe_step(a_in, psum_in, weight):\n"
    "    return a_in, torch.addcmul(psum_in, a_in.to(torch.int32), weight.to(torch.int32))",
]
