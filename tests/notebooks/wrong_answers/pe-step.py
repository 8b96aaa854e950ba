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
    # passes the weight on instead of the activation
    "def pe_step(a_in, psum_in, weight):\n"
    "    return weight, psum_in + a_in.to(torch.int32) * weight.to(torch.int32)",
    # the activation passed on as int32
    "def pe_step(a_in, psum_in, weight):\n"
    "    a = a_in.to(torch.int32)\n"
    "    return a, psum_in + a * weight.to(torch.int32)",
    # a list instead of a tuple
    "def pe_step(a_in, psum_in, weight):\n"
    "    return [a_in, psum_in + a_in.to(torch.int32) * weight.to(torch.int32)]",
    # adds the product twice when it also changes psum_in in place
    "def pe_step(a_in, psum_in, weight):\n"
    "    product = a_in.to(torch.int32) * weight.to(torch.int32)\n"
    "    psum_in += product\n"
    "    return a_in, psum_in + product",
]

RIGHT = [
    "def pe_step(a_in, psum_in, weight):\n"
    "    psum_down = psum_in.clone()\n"
    "    psum_down += a_in.int() * weight.int()\n"
    "    return a_in.clone(), psum_down",
    "def pe_step(a_in, psum_in, weight):\n"
    "    return a_in, torch.addcmul(psum_in, a_in.to(torch.int32), weight.to(torch.int32))",
    # in place: the task allows changing the inputs
    "def pe_step(a_in, psum_in, weight):\n"
    "    psum_in += a_in.to(torch.int32) * weight.to(torch.int32)\n"
    "    return a_in, psum_in",
    # int64 inside, int32 out
    "def pe_step(a_in, psum_in, weight):\n"
    "    wide = psum_in.long() + a_in.long() * weight.long()\n"
    "    return a_in, wide.to(torch.int32)",
    # NumPy-built
    "import numpy as np\n"
    "def pe_step(a_in, psum_in, weight):\n"
    "    s = psum_in.numpy() + a_in.numpy().astype(np.int32) * weight.numpy().astype(np.int32)\n"
    "    return a_in, torch.from_numpy(s)",
    # results in column-major layout (transposed copies)
    "def pe_step(a_in, psum_in, weight):\n"
    "    s = (psum_in.T + a_in.T.to(torch.int32) * weight.T.to(torch.int32)).contiguous().T\n"
    "    return a_in.T.contiguous().T, s",
]
