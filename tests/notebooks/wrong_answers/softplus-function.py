# Chapter 2, notebook 2.3, exercise 1: a stable softplus as a torch.autograd.Function.
_CLASS = (
    "class Softplus(torch.autograd.Function):\n"
    "    @staticmethod\n"
    "    def forward(ctx, x):\n"
    "        ctx.save_for_backward(x)\n"
    "        return {forward}\n"
    "    @staticmethod\n"
    "    def backward(ctx, grad_output):\n"
    "        (x,) = ctx.saved_tensors\n"
    "        return {backward}\n"
)
_STABLE = "torch.clamp(x, min=0) + torch.log1p(torch.exp(-x.abs()))"
_GRAD = "grad_output * torch.sigmoid(x)"
WRONG = [
    # the formula as written: exp(1000) overflows to inf
    _CLASS.format(forward="torch.log(1 + torch.exp(x))", backward=_GRAD),
    # log1p does not help: exp(x) still overflows
    _CLASS.format(forward="torch.log1p(torch.exp(x))", backward=_GRAD),
    # the derivative as written: inf / inf = nan at large x
    _CLASS.format(forward=_STABLE, backward="grad_output * torch.exp(x) / (1 + torch.exp(x))"),
    # ignores grad_output: right only when the upstream gradient is all ones
    _CLASS.format(forward=_STABLE, backward="torch.sigmoid(x)"),
    # one gradient too many for one input
    _CLASS.format(forward=_STABLE, backward="grad_output * torch.sigmoid(x), grad_output"),
    # sigmoid of -x: the derivative of softplus(-x)
    _CLASS.format(forward=_STABLE, backward="grad_output * torch.sigmoid(-x)"),
    # computed in float32 whatever the input: float64 precision lost, and gradcheck fails
    _CLASS.format(forward="(torch.clamp(x, min=0) + torch.log1p(torch.exp(-x.abs()))).float()",
                  backward="(grad_output * torch.sigmoid(x)).to(x.dtype)"),
    # keeps x as an attribute of ctx instead of saving it with save_for_backward
    "class Softplus(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n        ctx.x = x\n"
    f"        return {_STABLE}\n    @staticmethod\n    def backward(ctx, grad_output):\n"
    "        return grad_output * torch.sigmoid(ctx.x)\n",
    # a float32 answer for float64 input in forward only
    _CLASS.format(forward=f"({_STABLE}).float()", backward=_GRAD),
]
RIGHT = [
    _CLASS.format(forward="torch.logaddexp(x, torch.zeros_like(x))", backward=_GRAD),
    # a trailing None beyond the inputs is tolerated by PyTorch
    _CLASS.format(forward=_STABLE, backward="grad_output * torch.sigmoid(x), None"),
    # torch's own softplus (it returns x itself above x = 20, within the tolerance)
    "class Softplus(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
    "        y = torch.nn.functional.softplus(x)\n        ctx.save_for_backward(x)\n        return y\n"
    "    @staticmethod\n    def backward(ctx, g):\n        (x,) = ctx.saved_tensors\n        return g * torch.special.expit(x)\n",
    # log(1 + exp(-|x|)) without log1p: less accurate for tiny exp(-|x|), still within the tolerance
    _CLASS.format(forward="torch.maximum(x, torch.zeros_like(x)) + torch.log(1 + torch.exp(-torch.abs(x)))",
                  backward=_GRAD),
    # saves the output instead: sigmoid(x) = 1 - exp(-softplus(x))
    "class Softplus(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
    f"        y = {_STABLE}\n        ctx.save_for_backward(y)\n        return y\n"
    "    @staticmethod\n    def backward(ctx, grad_output):\n        (y,) = ctx.saved_tensors\n"
    "        return grad_output * -torch.expm1(-y)\n",
    # saves sigmoid(x) itself
    "class Softplus(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
    f"        ctx.save_for_backward(torch.sigmoid(x))\n        return {_STABLE}\n"
    "    @staticmethod\n    def backward(ctx, grad_output):\n        (s,) = ctx.saved_tensors\n"
    "        return grad_output * s\n",
    # computed in float64, returned in x's dtype
    _CLASS.format(forward="(torch.clamp(x.double(), min=0) + torch.log1p(torch.exp(-x.double().abs()))).to(x.dtype)",
                  backward="(grad_output.double() * torch.sigmoid(x.double())).to(x.dtype)"),
]

