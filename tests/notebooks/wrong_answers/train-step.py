# Chapter 2, notebook 2.3, exercise 3: one training step in the right order.
def _step(*lines: str) -> str:
    return "def train_step(model, optimizer, loss_fn, X, t):\n" + "".join(f"    {line}\n" for line in lines)


WRONG = [
    # forgets zero_grad: gradients of every step add up (and the stale ones too)
    _step("loss = loss_fn(model(X), t)", "loss.backward()", "optimizer.step()", "return loss.item()"),
    # zero_grad after backward: the step sees no gradient, nothing moves
    _step("loss = loss_fn(model(X), t)", "loss.backward()", "optimizer.zero_grad()", "optimizer.step()",
          "return loss.item()"),
    # zero_grad at the end: fine later, but the stale gradients leak into the first step
    _step("loss = loss_fn(model(X), t)", "loss.backward()", "optimizer.step()", "optimizer.zero_grad()",
          "return loss.item()"),
    # step before backward: each update uses the previous step's gradient
    _step("optimizer.zero_grad()", "loss = loss_fn(model(X), t)", "optimizer.step()", "loss.backward()",
          "return loss.item()"),
    # returns the loss tensor, not a float
    _step("optimizer.zero_grad()", "loss = loss_fn(model(X), t)", "loss.backward()", "optimizer.step()",
          "return loss"),
    # returns the loss after the update
    _step("optimizer.zero_grad()", "loss = loss_fn(model(X), t)", "loss.backward()", "optimizer.step()",
          "return loss_fn(model(X), t).item()"),
    # updates by hand with .data and ignores the optimizer (no momentum)
    _step("model.zero_grad()", "loss = loss_fn(model(X), t)", "loss.backward()",
          "for p in model.parameters():", "    p.data -= optimizer.param_groups[0]['lr'] * p.grad",
          "return loss.item()"),
    # clears each .grad with zero_(): a fresh model's .grad is None, so the task's own example crashes
    _step("for p in model.parameters():", "    p.grad.zero_()", "loss = loss_fn(model(X), t)", "loss.backward()",
          "optimizer.step()", "return loss.item()"),
    # the loss as a one-element NumPy array
    _step("optimizer.zero_grad()", "loss = loss_fn(model(X), t)", "loss.backward()", "optimizer.step()",
          "return loss.detach().numpy()"),
]
RIGHT = [
    _step("optimizer.zero_grad(set_to_none=False)", "loss = loss_fn(model(X), t)", "loss.backward()",
          "optimizer.step()", "return float(loss)"),
    _step("model.zero_grad()", "loss = loss_fn(model(X), t)", "loss.backward()", "optimizer.step()",
          "return loss.item()"),
    # each .grad cleared by hand, where there is one
    _step("for p in model.parameters():", "    if p.grad is not None:", "        p.grad.zero_()",
          "loss = loss_fn(model(X), t)", "loss.backward()", "optimizer.step()", "return loss.item()"),
    # .grad set to None by hand; the loss read before the step
    _step("for p in model.parameters():", "    p.grad = None", "loss = loss_fn(model(X), t)", "value = loss.item()",
          "loss.backward()", "optimizer.step()", "return value"),
    # X and t changed in place (the checks pass copies), the loss through NumPy
    _step("optimizer.zero_grad()", "X.mul_(2.0)", "loss = loss_fn(model(X / 2.0), t)", "loss.backward()", "optimizer.step()",
          "return float(loss.detach().numpy())"),
]
FAILING_VARIANTS = {
    "inputs-copied": "the task updates the caller's model through the caller's optimizer: a step taken on a copy of "
                     "the model leaves the caller's parameters where they were",
}
