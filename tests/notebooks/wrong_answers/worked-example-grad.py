# Chapter 2, notebook 2.1, exercise 1: d out / d x for out = (3 * (x**2)**2).mean().
WRONG = [
    # the 2x2 case hard-coded: divides by 4 whatever the number of elements
    "def worked_example_grad(x):\n    return 3 * x ** 3",
    # forgot the mean: the gradient of the sum
    "def worked_example_grad(x):\n    return 12 * x ** 3",
    # the derivative of 3 * y**2 taken with respect to y, not x
    "def worked_example_grad(x):\n    return 6 * x ** 2 / x.numel()",
    # the value, not the derivative
    "def worked_example_grad(x):\n    return 3 * x ** 4 / x.numel()",
    # lost the sign: |x| cubed
    "def worked_example_grad(x):\n    return 12 * x.abs() ** 3 / x.numel()",
    # right numbers, float32 whatever the input
    "def worked_example_grad(x):\n    return (12 * x ** 3 / x.numel()).float()",
    # right numbers, as a list
    "def worked_example_grad(x):\n    return (12 * x ** 3 / x.numel()).tolist()",
]
RIGHT = [
    # autograd inside the function gives the same tensor
    "def worked_example_grad(x):\n    leaf = x.detach().clone().requires_grad_()\n"
    "    (3 * (leaf ** 2) ** 2).mean().backward()\n    return leaf.grad",
    "def worked_example_grad(x):\n    return 3 * 4 * x.pow(3) / x.numel()",
    # in place on the copy the check passes
    "def worked_example_grad(x):\n    return x.pow_(3).mul_(12 / x.numel())",
    # computed in float64, handed back in x's dtype
    "def worked_example_grad(x):\n    return (12 * x.double() ** 3 / x.numel()).to(x.dtype)",
    # NumPy-built: float32 stays float32, float64 stays float64
    "import numpy as np\ndef worked_example_grad(x):\n    return torch.from_numpy(12 * x.numpy() ** 3 / x.numel())",
    # torch.func.grad of the scalar function
    "def worked_example_grad(x):\n    return torch.func.grad(lambda v: (3 * (v ** 2) ** 2).mean())(x)",
    # a transposed (non-contiguous) result of the same values
    "def worked_example_grad(x):\n    g = 12 * x.T.contiguous() ** 3 / x.numel()\n    return g.T if x.dim() == 2 else 12 * x ** 3 / x.numel()",
]
