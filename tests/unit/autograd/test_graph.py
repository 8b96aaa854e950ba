"""The graph explorer: its core against PyTorch's own graph and gradients, its renderer, its wrapper."""

from __future__ import annotations

import math
import random

import pytest
import torch
from matplotlib.collections import LineCollection, PatchCollection
from matplotlib.figure import Figure

from torchcourse.autograd import BUDGETS, GRAPH_30
from torchcourse.autograd.graph import (
    EXAMPLES,
    MAX_NODES,
    GraphExplorer,
    arrivals,
    draw_graph,
    fmt,
    record,
    recording,
    static_graph_explorer,
    trace,
    walk,
)


def _grads(expression: str, x: float, y: float) -> dict[str, float]:
    xt = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    yt = torch.tensor(y, dtype=torch.float64, requires_grad=True)
    out = eval(expression, {"__builtins__": {}}, {"x": xt, "y": yt, "tanh": torch.tanh, "exp": torch.exp,
                                                  "sin": torch.sin, "cos": torch.cos, "log": torch.log,
                                                  "sigmoid": torch.sigmoid, "sqrt": torch.sqrt})
    gx, gy = torch.autograd.grad(out, (xt, yt), allow_unused=True)
    return {"x": gx, "y": gy}


def _random_expression(r: random.Random, depth: int = 3) -> str:
    if depth == 0 or r.random() < 0.2:
        return r.choice(["x", "y", "x", "y", "2.0"])
    if r.random() < 0.25:
        return f"{r.choice(['tanh', 'sin', 'exp', 'sigmoid'])}({_random_expression(r, depth - 1)})"
    op = r.choice(["+", "*", "-"])
    return f"({_random_expression(r, depth - 1)} {op} {_random_expression(r, depth - 1)})"


@pytest.mark.parametrize("expression", EXAMPLES + (GRAPH_30,))
def test_leaf_gradients_are_pytorchs(expression):
    state = record(expression, 1.5, 2.0)
    want = _grads(expression, 1.5, 2.0)
    for name, text in state.grads.items():
        assert math.isclose(float(text), float(want[name]), rel_tol=1e-3, abs_tol=1e-3), (name, text)


def test_graph_is_the_recorded_one():
    state = record("x * y + x", 2.0, 3.0)
    assert [n.name for n in state.nodes] == ["AddBackward0", "MulBackward0", "AccumulateGrad", "AccumulateGrad"]
    assert [n.leaf for n in state.nodes] == [None, None, "x", "y"]
    assert [n.value for n in state.nodes] == ["8", "6", "2", "3"]
    assert sum(1 for e in state.edges if e.dst == 2) == 2  # x is used twice: two edges into its node
    assert state.grads == {"x": "4", "y": "2"}


def test_x_times_x_has_two_parallel_edges_and_accumulates():
    state = record("x * x", 3.0)
    assert len(state.nodes) == 2 and len(state.edges) == 2
    assert {(e.src, e.dst) for e in state.edges} == {(0, 1)}
    assert arrivals(state)[1] == ["3", "3"]
    assert state.grads == {"x": "6"}


def _typed(text: str, x: float, y: float):
    """``text`` run as plain Python code: Python numbers, torch functions on tensors and math's on numbers."""
    def either(name):
        scalar = {"sigmoid": lambda u: 1 / (1 + math.exp(-u)), "relu": lambda u: max(u, 0)}
        return lambda v: getattr(torch, name)(v) if isinstance(v, torch.Tensor) else \
            scalar.get(name, getattr(math, name, None))(v)
    xt = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    yt = torch.tensor(y, dtype=torch.float64, requires_grad=True)
    functions = ("sin", "cos", "exp", "log", "tanh", "sigmoid", "sqrt", "relu")
    names = {"x": xt, "y": yt, **{f: either(f) for f in functions}}
    return eval(text, {"__builtins__": {}}, names), xt, yt


def _plain_graph(out, xt, yt):
    """Node names (breadth first from out.grad_fn), edges (src, dst, slot) and the engine's order of names."""
    order, index, edges = [out.grad_fn], {out.grad_fn: 0}, []
    for fn in order:
        for slot, (nxt, _) in enumerate(fn.next_functions):
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = len(order)
                    order.append(nxt)
                edges.append((index[fn], index[nxt], slot))
    ran = []
    handles = [fn.register_hook(lambda gi, go, i=index[fn]: ran.append(i)) for fn in order]
    out.backward()
    for h in handles:
        h.remove()
    names = [type(fn).__name__ for fn in order]
    return names, edges, ran, {k: t.grad for k, t in (("x", xt), ("y", yt))}


def _typed_expression(r: random.Random, depth: int) -> str:
    """Expressions as a learner types them: ints and floats, constant parts, 1 / x, powers, unary minus."""
    if depth == 0 or r.random() < 0.2:
        return r.choice(["x", "y", "x", "y", "2", "3.0", "0.5", "1"])
    kind = r.random()
    if kind < 0.2:
        return f"{r.choice(['tanh', 'sin', 'exp', 'sigmoid', 'cos'])}({_typed_expression(r, depth - 1)})"
    if kind < 0.3:
        return f"-{_typed_expression(r, depth - 1)}"
    if kind < 0.45:
        return f"({_typed_expression(r, depth - 1)}) ** {r.choice(['2', '3', '0.5', '-1', '2.0', 'y'])}"
    op = r.choice(["+", "*", "-", "/"])
    return f"({_typed_expression(r, depth - 1)} {op} {_typed_expression(r, depth - 1)})"


def test_the_drawn_graph_is_the_one_plain_pytorch_records():
    """Names, edges with their slots and the engine's order equal those of the same text run as Python code."""
    r = random.Random(2026)
    checked = 0
    for _ in range(300):
        text = _typed_expression(r, 4)
        x, y = r.uniform(0.5, 2.0), r.uniform(0.5, 2.0)
        state = record(text, x, y)
        try:
            out, xt, yt = _typed(text, x, y)
        except (ArithmeticError, ValueError):
            assert not state.ok and "could not compute" in state.message, text
            continue
        if not isinstance(out, torch.Tensor) or out.grad_fn is None:
            assert not state.ok, text
            continue
        names, edges, ran, grads = _plain_graph(out, xt, yt)
        if len(names) > MAX_NODES:
            continue
        assert [n.name for n in state.nodes] == names, text
        assert [(e.src, e.dst, e.slot) for e in state.edges] == edges, text
        assert [s.node for s in state.steps] == ran, text
        for k, g in grads.items():
            if k in state.grads:
                assert state.grads[k] == fmt(g), (text, k)
        checked += 1
    assert checked > 200


def test_numbers_stay_python_numbers():
    assert [n.name for n in record("x ** 2").nodes] == ["PowBackward0", "AccumulateGrad"]
    assert [n.name for n in record("1 / x").nodes] == ["MulBackward0", "ReciprocalBackward0", "AccumulateGrad"]
    assert [n.name for n in record("2 ** x").nodes] == ["PowBackward2", "AccumulateGrad"]
    assert [n.name for n in record("sin(2.0) * x").nodes] == ["MulBackward0", "AccumulateGrad"]
    assert record("1 / x", 2.0).nodes[1].value == "0.5"  # read from what the reciprocal saved


def test_the_step_shows_the_sum_arriving():
    state = record("x * y + x", 2.0, 3.0, step=3)
    assert "AccumulateGrad received 1 + 3 = 4 (the engine summed the 2 contributions" in state.message
    labels = " ".join(t.get_text() for t in draw_graph(state).axes[0].texts)
    assert "backward step 3/4" in labels


def test_constants_are_not_nodes():
    state = record("x * 3", 2.0)
    assert [n.name for n in state.nodes] == ["MulBackward0", "AccumulateGrad"]


@pytest.mark.parametrize("seed", range(25))
def test_steps_follow_a_topological_order_and_sums_match(seed):
    """Every node runs after all its consumers, and what it received is the sum of what arrived."""
    expression = _random_expression(random.Random(seed))
    state = record(expression, 0.7, -1.3)
    if not state.ok:
        assert any(text in state.message for text in ("does not use", "no grad_fn", "is a leaf: nothing was computed"))
        return
    ran = {s.node: k for k, s in enumerate(state.steps)}
    assert set(ran) == {n.id for n in state.nodes}
    for e in state.edges:
        assert ran[e.src] < ran[e.dst], expression
    full = arrivals(state)
    for s in state.steps:
        if s.node == 0:
            assert s.received == "1"
            continue
        total = sum(float(g) for g in full[s.node])
        assert math.isclose(total, float(s.received), rel_tol=1e-3, abs_tol=1e-3), expression


def test_walk_matches_next_functions():
    x = torch.tensor(1.0, requires_grad=True)
    out = (x.exp() * x).sin()
    fns, edges = walk(out)
    assert fns[0] is out.grad_fn
    assert all(fns[e.dst] is fns[e.src].next_functions[e.slot][0] for e in edges)
    assert walk(torch.tensor(1.0) * 2) == ([], [])


def test_trace_leaves_your_gradients_alone():
    x = torch.ones(2, 2, requires_grad=True)
    x.grad = torch.full((2, 2), 7.0)
    with recording() as values:
        y = x ** 2
        out = (y * y * 3).mean()
    state = trace(out, {"x": x}, values=values)
    assert torch.equal(x.grad, torch.full((2, 2), 7.0))
    assert state.grads == {"x": "[3, 3, 3, 3]"}
    assert state.nodes[0].value == "3"
    assert [state.nodes[s.node].name for s in state.steps][0] == "MeanBackward0"
    out.backward()  # the graph was retained
    assert torch.equal(x.grad, torch.full((2, 2), 10.0))


@pytest.mark.parametrize("bad", ["import os", "__import__('os')", "x.grad", "open('f')", "x +", "lambda: 1", "'a'"])
def test_bad_input_is_a_sentence(bad):
    state = record(bad)
    assert not state.ok and state.message.startswith("Could not read")


def test_other_messages():
    assert "does not use" in record("2 + 3").message or "no grad_fn" in record("2 + 3").message
    assert "more than" in record("9 ** 9 ** 9 ** 9 * x").message
    assert "division by zero" in record("x + 1 / 0").message
    assert "complex" in record("x * (-8) ** 0.5").message
    assert record("sin(2.0) * x").ok and record("sigmoid(-1000) * x").ok
    big = " + ".join(["x * y"] * 30)
    assert f"at most {MAX_NODES}" in record(big).message
    assert "inf" in record("log(x)", 0.0).message


def test_step_is_clamped_and_described():
    state = record("x * y + x", 2.0, 3.0, step=2)
    assert state.step == 2 and "MulBackward0 received 1" in state.message
    assert record("x * y + x", step=99).step == 4
    assert record("x * y + x", step=0).message.endswith("one node at a time.")


def test_renderer_draws_collections():
    fig = draw_graph(record(GRAPH_30, 1.5, 2.0, step=5))
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    assert len(record(GRAPH_30, 1.5, 2.0).nodes) == 30
    lines = [c for c in ax.collections if isinstance(c, LineCollection)]
    boxes = [c for c in ax.collections if isinstance(c, PatchCollection)]
    assert len(lines) == 1 and len(lines[0].get_segments()) == len(record(GRAPH_30, 1.5, 2.0).edges)
    assert len(boxes) == 1 and len(boxes[0].get_paths()) == 30
    assert "backward step 5/30" in " ".join(t.get_text() for t in ax.texts)
    bad = draw_graph(record("import os"))
    assert "Could not read" in bad.axes[0].texts[0].get_text()


def test_wrapper_updates_state_and_slider():
    w = GraphExplorer("x * x", x=3.0)
    assert w.controls["step"].max == 2
    w.controls["expression"].value = "x * y + x"
    assert w.state.expression == "x * y + x" and w.controls["step"].max == 4
    w.controls["step"].value = 3
    assert w.state.step == 3 and "AccumulateGrad" in w.message.value
    w.controls["expression"].value = "x * x"
    assert w.state.step <= 2


def test_static_stand_in_has_four_panels():
    assert len(static_graph_explorer().axes) == 4


def test_budgets_name_real_widgets():
    import importlib
    assert BUDGETS.chapter == "02-autograd"
    for wb in BUDGETS.widgets:
        cls = getattr(importlib.import_module(wb.module), wb.cls)
        widget = cls()
        for name, values in (wb.values or {}).items():
            for v in values:
                widget.controls[name].value = v
                assert widget.figure is not None


def test_a_bare_leaf_is_named_as_a_leaf():
    assert record("x").message == "x is a leaf: nothing was computed from it, so there is no graph to walk."
    assert "no grad_fn" in record("2 + 3").message or "does not use" in record("2 + 3").message
