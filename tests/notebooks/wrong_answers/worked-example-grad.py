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
]
