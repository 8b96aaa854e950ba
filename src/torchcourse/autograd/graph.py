"""Graph explorer: the graph PyTorch really recorded, and backward run through it one node at a time.

Used in notebook 2.1 (``solutions/02-autograd/01-graph-and-backward.ipynb``): the explorer in section 2
"The graph, drawn as it is built"; ``trace`` and ``draw_graph`` in section 3 "Backward on a scalar:
the worked example".

core: ``record(expression, x, y, step)`` -> ``GraphState``: the expression is evaluated with real
      PyTorch on two scalar leaves; the graph is walked from ``out.grad_fn`` through
      ``next_functions`` down to the ``AccumulateGrad`` leaves (never re-derived from the text);
      a real ``backward`` runs with a hook on every node, so the steps are the order in which
      PyTorch's engine ran the nodes and the gradients each one received and sent.
      ``trace(out, leaves)`` does the same for any tensor you built yourself.
renderer: ``draw_graph(state)`` -> matplotlib Figure (layered layout from networkx)
wrapper: ``GraphExplorer()`` (expression box, x, y, backward step slider)
static stand-in: ``static_graph_explorer()`` shows one expression at four stages of backward.

Layout: ``networkx.multipartite_layout`` on the nodes' depth (longest path from the output), so a
node always sits below every node that consumes it. networkx is already in the course's pinned
stack and is pure Python; Graphviz's ``dot`` would need a system binary and pygraphviz.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import ipywidgets as widgets
import networkx as nx
import numpy as np
import torch
from matplotlib.collections import LineCollection, PatchCollection, PolyCollection
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from matplotlib.path import Path
from torch.overrides import TorchFunctionMode

from torchcourse.autograd.textpaths import patch, place
from torchcourse.i18n import N_
from torchcourse.i18n import gettext as _
from torchcourse.widgets import Explorer, figure_and_axes

#: Expressions offered by the explorer's box (any other can be typed).
EXAMPLES = (
    "x * x",
    "x * y + x",
    "(x + y) * (x - y)",
    "tanh(x * y) + x ** 2",
    "exp(x) * sin(y) + x / y",
    "3 * x ** 4",
)
#: Functions an expression may call, by name.
FUNCTIONS = {name: getattr(torch, name) for name in ("sin", "cos", "exp", "log", "tanh", "sigmoid", "sqrt", "relu")}
#: The explorer refuses larger graphs (the drawing would be unreadable, and typing must stay fast).
MAX_NODES = 40


@dataclass(frozen=True)
class GNode:
    """One node of the recorded graph: a ``grad_fn`` (``MulBackward0``) or a leaf's ``AccumulateGrad``."""

    id: int
    name: str  # type(grad_fn).__name__
    leaf: str | None  # the leaf's name for an AccumulateGrad node ("x", "y"), else None
    value: str  # the forward value this node produced (its output), as text; "" if unknown
    depth: int  # longest path from the output node (0)


@dataclass(frozen=True)
class GEdge:
    """``src.next_functions[slot]`` is ``dst``: during backward, src sends a gradient to dst."""

    src: int
    dst: int
    slot: int


@dataclass(frozen=True)
class Step:
    """One node run by the backward engine: the gradient it received, and what it sent per edge."""

    node: int
    received: str
    sent: tuple[tuple[int, str], ...]  # (edge index, gradient) for each edge the node sends along


@dataclass(frozen=True)
class GraphState:
    expression: str
    nodes: tuple[GNode, ...]
    edges: tuple[GEdge, ...]
    steps: tuple[Step, ...]  # in the order PyTorch ran them
    step: int  # how many steps the drawing shows as done (0: before backward)
    grads: dict  # leaf name -> its gradient after the full backward, as text
    positions: dict  # node id -> (x, y)
    message: str  # the caption, in the learner's language
    figure_text: str = ""  # what the figure says when there is no graph: English, as all figure text

    @property
    def ok(self) -> bool:
        return bool(self.nodes)


def fmt(t: torch.Tensor | None) -> str:
    """A tensor as short text: its value when small, otherwise its shape."""
    if t is None:
        return ""
    t = t.detach()
    if t.numel() == 1:
        return f"{float(t.reshape(())):.4g}"
    if t.numel() <= 4:
        return "[" + ", ".join(f"{float(v):.3g}" for v in t.reshape(-1)) + "]"
    return "shape " + "x".join(map(str, t.shape))


class _Recorder(TorchFunctionMode):
    """Remembers each operation's output, keyed by the output's ``grad_fn``, while a line runs."""

    def __init__(self) -> None:
        super().__init__()
        self.values: dict = {}
        self._keep: list = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if isinstance(out, torch.Tensor) and out.grad_fn is not None:
            self.values[out.grad_fn] = fmt(out)
            self._keep.append(out.grad_fn)  # keep node objects alive so the keys stay unique
        return out


@contextmanager
def recording() -> Iterator[dict]:
    """``with recording() as values: out = ...``: afterwards ``trace(out, ..., values=values)`` shows forward values."""
    rec = _Recorder()
    with rec:
        yield rec.values


def walk(out: torch.Tensor) -> tuple[list, list[GEdge]]:
    """The recorded graph below ``out``: its nodes (grad_fn objects, output first) and edges.

    Follows ``grad_fn.next_functions`` exactly as the backward engine does; ``None`` entries (inputs
    that need no gradient) are skipped. A node used twice appears once, with two edges into it.
    """
    if out.grad_fn is None:
        return [], []
    order, index, edges = [out.grad_fn], {out.grad_fn: 0}, []
    i = 0
    while i < len(order):
        fn = order[i]
        for slot, (nxt, _input_nr) in enumerate(fn.next_functions):
            if nxt is None:
                continue
            if nxt not in index:
                index[nxt] = len(order)
                order.append(nxt)
            edges.append(GEdge(index[fn], index[nxt], slot))
        i += 1
    return order, edges


def _depths(n: int, edges: list[GEdge]) -> list[int]:
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    g.add_edges_from((e.src, e.dst) for e in edges)
    depth = [0] * n
    for v in nx.topological_sort(g):
        for w in g.successors(v):
            depth[w] = max(depth[w], depth[v] + 1)
    return depth


def layout(nodes: tuple[GNode, ...]) -> dict:
    """Positions from ``networkx.multipartite_layout``: one row per depth, the output on top."""
    g = nx.Graph()
    for node in nodes:
        g.add_node(node.id, layer=node.depth)
    pos = nx.multipartite_layout(g, subset_key="layer", align="horizontal", scale=1.0)
    return {k: (float(v[0]), float(-v[1])) for k, v in pos.items()}


def trace(out: torch.Tensor, leaves: dict[str, torch.Tensor], *, step: int | None = None,
          values: dict | None = None, expression: str = "") -> GraphState:
    """Walk ``out``'s graph and run a real backward through it with a hook on every node.

    ``leaves`` names the leaf tensors ({"x": x}); ``values`` maps grad_fn -> forward value text (from
    ``recording()``). The leaves' ``.grad`` is put back as it was afterwards, and the graph is kept
    (``retain_graph=True``), so tracing has no effect on your own tensors.
    """
    values = values or {}
    fns, edges = walk(out)
    if not fns:
        name = next((k for k, t in leaves.items() if t is out), None)
        if out.requires_grad and out.is_leaf:
            if name is None:
                return _failed(expression, N_("This tensor is a leaf: nothing was computed from it, so there is no "
                                              "graph to walk."))
            return _failed(expression, N_("{name} is a leaf: nothing was computed from it, so there is no graph to "
                                          "walk."), name=name)
        return _failed(expression, N_("This result has no grad_fn: no input requires grad, so PyTorch recorded "
                                      "nothing."))
    if len(fns) > MAX_NODES:
        return _failed(expression, N_("The graph has {nodes} nodes; the explorer draws at most {most}."),
                       nodes=len(fns), most=MAX_NODES)
    depth = _depths(len(fns), edges)
    names = {id(t): k for k, t in leaves.items()}
    nodes = []
    for i, fn in enumerate(fns):
        var = getattr(fn, "variable", None)
        leaf = names.get(id(var), "leaf") if var is not None else None
        value = fmt(var) if var is not None else _forward_value(fn, values)
        nodes.append(GNode(i, type(fn).__name__, leaf, value, depth[i]))
    index = {fn: i for i, fn in enumerate(fns)}
    out_edges: dict[int, list[int]] = {}
    for k, e in enumerate(edges):
        out_edges.setdefault(e.src, []).append(k)
    steps: list[Step] = []

    def hook_for(i: int):
        def hook(grad_inputs, grad_outputs):
            sent = []
            for k in out_edges.get(i, []):
                g = grad_inputs[edges[k].slot]
                sent.append((k, fmt(g)))
            steps.append(Step(i, fmt(grad_outputs[0]), tuple(sent)))
        return hook

    handles = [fn.register_hook(hook_for(index[fn])) for fn in fns]
    saved = {k: t.grad for k, t in leaves.items()}
    for t in leaves.values():
        t.grad = None
    try:
        out.backward(torch.ones_like(out), retain_graph=True)
        grads = {k: fmt(t.grad) for k, t in leaves.items()}
    finally:
        for h in handles:
            h.remove()
        for k, t in leaves.items():
            t.grad = saved[k]
    nodes_t = tuple(nodes)
    n_steps = len(steps)
    step = n_steps if step is None else max(0, min(int(step), n_steps))
    return GraphState(expression, nodes_t, tuple(edges), tuple(steps), step, grads, layout(nodes_t),
                      _message(nodes_t, edges, steps, step, grads))


def _parts(steps, edges, upto: int, node: int) -> list[str]:
    """The gradients that the first ``upto`` steps sent along edges into ``node``."""
    return [g for s in steps[:upto] for k, g in s.sent if edges[k].dst == node]


def summed(parts: list[str], total: str) -> str:
    """What a node received: the one gradient, or the contributions and the sum the engine formed of them."""
    return total if len(parts) < 2 else " + ".join(parts) + f" = {total}"


def _message(nodes, edges, steps, step, grads) -> str:
    """The caption, in the learner's language: whole sentences with named placeholders; a sentence that
    follows another starts with its space, so a language that needs none can drop it."""
    n_leaf = sum(1 for n in nodes if n.leaf)
    head = _("{nodes} nodes ({leaves} AccumulateGrad), {edges} edges.").format(
        nodes=len(nodes), leaves=n_leaf, edges=len(edges))
    if step == 0:
        return head + _(" Before backward: move the step slider to run the engine one node at a time.")
    s = steps[step - 1]
    node = nodes[s.node]
    parts = _parts(steps, edges, step - 1, s.node)
    values = dict(step=step, total=len(steps), node=node.name, received=summed(parts, s.received), count=len(parts))
    if node.leaf:
        sentence = (N_(" Step {step}/{total}: {node} received {received} (the engine summed the {count} "
                       "contributions before running the node) and accumulated it into {leaf}.grad.")
                    if len(parts) > 1 else
                    N_(" Step {step}/{total}: {node} received {received} and accumulated it into {leaf}.grad."))
        values["leaf"] = node.leaf
    else:
        sentence = (N_(" Step {step}/{total}: {node} received {received} (the engine summed the {count} "
                       "contributions before running the node), and sent {sent} on.")
                    if len(parts) > 1 else
                    N_(" Step {step}/{total}: {node} received {received}, and sent {sent} on."))
        values["sent"] = ", ".join(g for _k, g in s.sent) or _("nothing")
    text = head + _(sentence).format(**values)
    if step == len(steps):
        text += _(" Done: {grads}.").format(grads=", ".join(f"{k}.grad = {v}" for k, v in grads.items()))
    return text


def _failed(typed: str, sentence: str, **values) -> GraphState:
    """A state without a graph for the ``typed`` expression: ``sentence`` (marked N_) as the caption in the
    learner's language, and in English for the figure."""
    return GraphState(typed, (), (), (), 0, {}, {}, _(sentence).format(**values), sentence.format(**values))


def arrivals(state: GraphState) -> dict[int, list[str]]:
    """For each node, the gradients that have arrived along its incoming edges after ``state.step`` steps."""
    got: dict[int, list[str]] = {n.id: [] for n in state.nodes}
    for s in state.steps[: state.step]:
        for k, g in s.sent:
            got[state.edges[k].dst].append(g)
    return got


def _check_expression(text: str) -> ast.Expression:
    tree = ast.parse(text, mode="eval")
    allowed = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Call, ast.Name, ast.Load, ast.Constant,
               ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow, ast.USub, ast.UAdd)
    for node in ast.walk(tree):
        if not isinstance(node, allowed):
            raise ValueError(f"{type(node).__name__} is not allowed")
        if isinstance(node, ast.Name) and node.id not in ("x", "y", *FUNCTIONS):
            raise ValueError(f"unknown name {node.id!r}")
        if isinstance(node, ast.Constant) and type(node.value) not in (int, float):
            raise ValueError("only numbers may appear as constants")
        if isinstance(node, ast.Call) and (node.keywords or not isinstance(node.func, ast.Name)
                                           or node.func.id not in FUNCTIONS):
            raise ValueError("call only " + ", ".join(FUNCTIONS))
    return tree


#: The functions a part without x or y is computed with: Python's own numbers, as plain code would give.
MATH_FUNCTIONS = {"sin": math.sin, "cos": math.cos, "exp": math.exp, "log": math.log, "tanh": math.tanh,
                  "sqrt": math.sqrt,
                  "sigmoid": lambda v: 1.0 / (1.0 + math.exp(-v)) if v >= 0 else math.exp(v) / (1.0 + math.exp(v)),
                  "relu": lambda v: max(v, 0)}
#: A constant power whose integer result would have more bits than this is refused: Python would compute it
#: exactly, and ``9 ** 9 ** 9`` would keep the explorer busy for minutes.
MAX_INT_BITS = 4096


def _uses_leaves(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Name) and n.id in ("x", "y") for n in ast.walk(node))


def _number(node: ast.AST) -> int | float:
    """The value of a part of the expression without x or y, as Python computes it (functions from ``math``)."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp):
        v = _number(node.operand)
        return -v if isinstance(node.op, ast.USub) else +v
    if isinstance(node, ast.Call):
        return MATH_FUNCTIONS[node.func.id](_number(node.args[0]))
    a, b = _number(node.left), _number(node.right)
    if isinstance(node.op, ast.Add):
        return a + b
    if isinstance(node.op, ast.Sub):
        return a - b
    if isinstance(node.op, ast.Mult):
        return a * b
    if isinstance(node.op, ast.Div):
        return a / b
    if type(a) is int and type(b) is int and b > 0 and abs(a) > 1 and b * math.log2(abs(a)) > MAX_INT_BITS:
        raise OverflowError(f"{a} ** {b} has more than {MAX_INT_BITS} bits")
    return a ** b


class _Constants(ast.NodeTransformer):
    """Replaces each largest part without x or y by its value as a Python number.

    The explorer must record the graph of the code as typed, and Python numbers are not tensors:
    ``x ** 2`` records ``PowBackward0`` and ``1 / x`` a reciprocal and a product, where a tensor ``2`` or
    ``1`` would record ``PowBackward1`` and a division. So numbers stay numbers, and a part such as
    ``sin(2.0)`` is computed with ``math``, as plain Python would need to.
    """

    def __init__(self) -> None:
        self.numbers: dict[str, int | float] = {}

    def visit(self, node: ast.AST) -> ast.AST:
        if isinstance(node, (ast.Constant, ast.UnaryOp, ast.BinOp, ast.Call)) and not _uses_leaves(node):
            name = f"_c{len(self.numbers)}"
            value = _number(node)
            if isinstance(value, complex):
                raise ValueError(f"it is the complex number {value:.4g}, and the explorer draws real values only")
            self.numbers[name] = value
            return ast.copy_location(ast.Name(id=name, ctx=ast.Load()), node)
        return super().visit(node)


def _forward_value(fn, values: dict) -> str:
    """A node's forward value: recorded by ``recording()``, or the output the node saved for backward."""
    if fn in values:
        return values[fn]
    saved = getattr(fn, "_saved_result", None)
    return fmt(saved) if isinstance(saved, torch.Tensor) else ""


def record(expression: str, x: float = 2.0, y: float = 3.0, step: int | None = None) -> GraphState:
    """The explorer's core: evaluate ``expression`` with float64 scalar leaves x and y, then ``trace`` it.

    Numbers stay Python numbers, and a part without x or y is computed in plain Python (``math``), so the
    graph is the one PyTorch records for the expression typed as code.
    """
    try:
        tree = _check_expression(expression)
    except (SyntaxError, ValueError) as exc:
        return _failed(expression, N_("Could not read {expression}: {error}. Write an expression in x and y, such "
                                      "as x * y + x."), expression=repr(expression), error=exc)
    xt = torch.tensor(float(x), dtype=torch.float64, requires_grad=True)
    yt = torch.tensor(float(y), dtype=torch.float64, requires_grad=True)
    constants = _Constants()
    try:
        body = constants.visit(tree.body)
    except (ArithmeticError, ValueError) as exc:
        return _failed(expression, N_("Python could not compute a part of {expression} without x or y: {error}."),
                       expression=repr(expression), error=exc)
    code = compile(ast.fix_missing_locations(ast.Expression(body=body)), "<expression>", "eval")
    names = {"x": xt, "y": yt, **FUNCTIONS, **constants.numbers}
    try:
        with recording() as values:
            out = eval(code, {"__builtins__": {}}, names)  # only the names checked above
    except (RuntimeError, TypeError, ValueError, ZeroDivisionError) as exc:
        return _failed(expression, N_("PyTorch could not evaluate {expression}: {error}"),
                       expression=repr(expression), error=exc)
    if not isinstance(out, torch.Tensor):
        return _failed(expression, N_("The expression does not use x or y."))
    used = {k: t for k, t in (("x", xt), ("y", yt))
            if t is out or any(getattr(f, "variable", None) is t for f in walk(out)[0])}
    state = trace(out, used, step=step, values=values, expression=expression)
    if state.ok and not math.isfinite(float(out.detach())):
        return GraphState(expression, state.nodes, state.edges, state.steps, state.step, state.grads,
                          state.positions, _("The value is {value} at x={x}, y={y}. ").format(
                              value=float(out.detach()), x=x, y=y) + state.message)
    return state


# --------------------------------------------------------------------------- renderer

_DONE, _NOW, _PART, _TODO, _LEAF = "#b7e4c7", "#f4a261", "#ffe8a3", "#e9ecef", "#a9c7ee"


#: Drawing units: node boxes are _BOX_W x _BOX_H, rows _ROW apart, neighbours at least _COL apart.
_BOX_W, _BOX_H, _ROW, _COL, _FONT = 3.4, 1.3, 2.4, 3.8, 0.28


def _edge_path(p0, p1, rad: float, n: int = 16) -> np.ndarray:
    """Points along an edge: straight, or bowed sideways by ``rad`` when two edges join the same nodes."""
    (x0, y0), (x1, y1) = p0, p1
    t = np.linspace(0.0, 1.0, n)
    bow = rad * np.sin(np.pi * t)
    return np.column_stack([x0 + (x1 - x0) * t + bow * (y1 - y0), y0 + (y1 - y0) * t - bow * (x1 - x0)])


def _arrowhead(tip, back, size: float = 0.28) -> np.ndarray:
    d = np.asarray(tip) - np.asarray(back)
    d = d / (np.hypot(*d) or 1.0)
    perp = np.array([-d[1], d[0]])
    base = np.asarray(tip) - d * size
    return np.array([tip, base + perp * size * 0.4, base - perp * size * 0.4])


def _text_at(lines: list[str], x: float, y: float, paths: list[Path]) -> None:
    for i, line in enumerate(lines):
        dy = ((len(lines) - 1) / 2 - i) * _FONT * 1.25
        paths.append(place(line, x, y + dy, _FONT))


def _scaled(state: GraphState) -> dict[int, tuple[float, float]]:
    """networkx's positions stretched to drawing units: rows _ROW apart, row neighbours >= _COL apart."""
    pos = state.positions
    rows: dict[int, list[float]] = {}
    for n in state.nodes:
        rows.setdefault(n.depth, []).append(pos[n.id][0])
    gaps = [b - a for xs in rows.values() for a, b in zip(sorted(xs), sorted(xs)[1:]) if b > a]
    sx = _COL / min(gaps) if gaps else 1.0
    return {n.id: (pos[n.id][0] * sx, -n.depth * _ROW) for n in state.nodes}


def _label_point(path: np.ndarray, text: str, occupied: list[tuple[float, float, float, float]]) -> np.ndarray:
    """The point of ``path`` nearest its middle where a label ``text`` (8 pt, about _FONT tall in drawing
    units) covers none of the ``occupied`` rectangles; that label's rectangle is added to them. Where every
    point is covered, the middle."""
    half_w, half_h = 0.33 * _FONT * len(text) + 0.1, 0.65 * _FONT + 0.05  # the glyphs and the white pad
    middle = len(path) // 2
    for i in sorted(range(len(path)), key=lambda i: abs(i - middle)):
        x, y = path[i]
        if all(x + half_w <= x0 or x - half_w >= x1 or y + half_h <= y0 or y - half_h >= y1
               for x0, y0, x1, y1 in occupied):
            break
    else:
        i = middle
    x, y = path[i]
    occupied.append((x - half_w, y - half_h, x + half_w, y + half_h))
    return path[i]


def _short(parts: list[str], limit: int = 2) -> str:
    return " + ".join(parts) if len(parts) <= limit else " + ".join(parts[:limit]) + " + ..."


def draw_graph(state: GraphState, ax=None) -> Figure:
    """Nodes as labelled boxes (name, forward value, gradients arrived), edges as arrows from consumer to input.

    Drawn as a few collections (all edges, all arrowheads, all boxes, all node text as one outline),
    so a 30-node graph redraws within the explorer's budget.
    """
    fig, ax = figure_and_axes(ax, figsize=(8, 5.6))
    ax.set_xticks([])
    ax.set_yticks([])
    ax.axis("off")
    if not state.ok:
        ax.text(0.5, 0.5, state.figure_text, ha="center", va="center", wrap=True, transform=ax.transAxes)
        return fig
    got = arrivals(state)
    done = {s.node for s in state.steps[: state.step]}
    now = state.steps[state.step - 1].node if state.step else None
    indeg: dict[int, int] = {}
    for e in state.edges:
        indeg[e.dst] = indeg.get(e.dst, 0) + 1
    sent_before = {k for s in state.steps[: state.step] for k, _ in s.sent}
    sent_now = dict(state.steps[state.step - 1].sent) if state.step else {}
    pos = _scaled(state)
    seen_pairs: dict[tuple[int, int], int] = {}
    lines, colours, heads, texts = [], [], [], []
    # What an edge's label must not cover: every node's box (an edge may pass by or through a third node's)
    # and the labels placed before it.
    occupied = [(x - _BOX_W / 2, y - _BOX_H / 2, x + _BOX_W / 2, y + _BOX_H / 2) for x, y in pos.values()]
    for k, e in enumerate(state.edges):
        n_before = seen_pairs.get((e.src, e.dst), 0)
        seen_pairs[(e.src, e.dst)] = n_before + 1
        rad = 0.0 if n_before == 0 else 0.3 * (1 if n_before % 2 else -1)
        path = _edge_path(pos[e.src], pos[e.dst], rad)
        # Keep the part of the edge between the two boxes, so both ends stay visible.
        outside = np.ones(len(path), dtype=bool)
        for end in (e.src, e.dst):
            cx, cy = pos[end]
            outside &= ~((np.abs(path[:, 0] - cx) < _BOX_W / 2) & (np.abs(path[:, 1] - cy) < _BOX_H / 2 + 0.05))
        keep = path[outside] if outside.sum() >= 2 else path
        colour = "#2a9d8f" if k in sent_before else "#999999"
        lines.append(keep)
        colours.append(colour)
        heads.append(_arrowhead(keep[-1], keep[-2]))
        if k in sent_now:  # label only what the current step sent; the boxes show what arrived earlier
            at = _label_point(keep, sent_now[k], occupied)
            ax.text(at[0], at[1], sent_now[k], fontsize=8, color="#1d6f65", ha="center", va="center",
                    bbox={"fc": "white", "ec": "none", "pad": 0.3})
    ax.add_collection(LineCollection(lines, colors=colours, linewidths=1.0))
    ax.add_collection(PolyCollection(heads, facecolors=colours, edgecolors="none"))
    boxes, faces, widths = [], [], []
    for node in state.nodes:
        if node.id == now:
            face = _NOW
        elif node.id in done:
            face = _DONE
        elif got[node.id]:
            face = _PART
        else:
            face = _LEAF if node.leaf else _TODO
        x, y = pos[node.id]
        boxes.append(Rectangle((x - _BOX_W / 2, y - _BOX_H / 2), _BOX_W, _BOX_H))
        faces.append(face)
        widths.append(2.2 if node.id == now else 0.8)
        label = [f"{node.leaf}: AccumulateGrad" if node.leaf else node.name]
        if node.value:
            label.append(f"value {node.value}")
        if node.id == now and len(got[node.id]) > 1:  # the sum the engine formed, arriving at the node
            # on two lines: on one, a sum of two long numbers runs past the box's edge, over its border
            label += [f"grad {_short(got[node.id])}", f"= {state.steps[state.step - 1].received}"]
        elif got[node.id]:
            label.append(f"grad {_short(got[node.id])} ({len(got[node.id])}/{indeg.get(node.id, 0)})")
        _text_at(label, x, y, texts)
    ax.add_collection(PatchCollection(boxes, facecolors=faces, edgecolors="#333333", linewidths=widths, zorder=0.5))
    ax.add_artist(patch(texts, size=_FONT, zorder=3))
    xs = [p[0] for p in pos.values()]
    ys = [p[1] for p in pos.values()]
    ax.set_xlim(min(xs) - _BOX_W * 0.6, max(xs) + _BOX_W * 0.6)
    ax.set_ylim(min(ys) - _BOX_H, max(ys) + _BOX_H)
    ax.set_aspect("equal")
    title = f"out = {state.expression}" if state.expression else N_("recorded graph")
    ax.text(0.5, 1.0, N_("{title}   (backward step {step}/{steps})").format(title=title, step=state.step,
                                                                             steps=len(state.steps)), fontsize=9,
            ha="center",
            va="bottom", transform=ax.transAxes)
    return fig


# --------------------------------------------------------------------------- wrapper and stand-in

class GraphExplorer(Explorer):
    """Type an expression in x and y; see the graph PyTorch recorded and step through backward."""

    def __init__(self, expression: str = "x * y + x", x: float = 2.0, y: float = 3.0, step: int = 0) -> None:
        controls = {
            "expression": widgets.Combobox(value=expression, options=list(EXAMPLES), ensure_option=False,
                                           description=N_("out ="), continuous_update=False),
            "x": widgets.FloatText(value=x, description=N_("x"), layout=widgets.Layout(width="150px")),
            "y": widgets.FloatText(value=y, description=N_("y"), layout=widgets.Layout(width="150px")),
            "step": widgets.IntSlider(value=step, min=0, max=MAX_NODES * 2, description=N_("backward step")),
        }
        super().__init__(controls, record, draw_graph, title=N_("Graph explorer"))

    def frame_space(self) -> list[dict]:
        # Every example stepped through backward at x=2, y=3, and the default at other x and y.
        blocks = [{"expression": [e], "x": [2.0], "y": [3.0], "step": range(len(record(e, 2.0, 3.0).steps) + 1)}
                  for e in EXAMPLES]
        return blocks + [{"expression": ["x * y + x"], "x": [2.0, -1.0, 0.5], "y": [3.0, -2.0], "step": [0, 4]}]

    def update(self) -> None:
        super().update()
        slider = self.controls["step"]
        n = len(self.state.steps)
        if slider.max != n:
            slider.max = n  # clamping the value re-runs update with a valid step


def static_graph_explorer() -> Figure:
    """``x * y + x`` before backward, after two steps, after three, and done: the explorer's stand-in."""
    fig = Figure(figsize=(7.6, 7.4))  # narrow enough for the page's column to show it at full size
    axes = fig.subplots(2, 2)
    for ax, step in zip(axes.flat, (0, 2, 3, None)):
        draw_graph(record("x * y + x", 2.0, 3.0, step=step), ax=ax)
    fig.tight_layout()
    return fig
