"""SciPy's minimize on the test problems of problems.ts, for `pnpm bench:optim`.

Reads on stdin a JSON object {"runs": [{"problem", "kind", "x0", "data", "bounds",
"method", "options", "repeat"}]} and writes on stdout one JSON object {"version", "results": [...]}:
per run, SciPy's iterations, evaluations, final value and gradient norm, and the median
time of `repeat` runs. Every derivative is exact and written by hand (SciPy's rosen_der,
rosen_hess and rosen_hess_prod for Rosenbrock), as SciPy is meant to be given them.
"""
import json
import sys
import time

import numpy as np
import scipy
from scipy.optimize import minimize, rosen, rosen_der, rosen_hess, rosen_hess_prod


def beale():
    def terms(v):
        x, y = v
        t = np.array([1.5 - x + x * y, 2.25 - x + x * y**2, 2.625 - x + x * y**3])
        dt = np.array([[y - 1, x], [y**2 - 1, 2 * x * y], [y**3 - 1, 3 * x * y**2]])
        d2t = np.array([[[0, 1], [1, 0]], [[0, 2 * y], [2 * y, 2 * x]], [[0, 3 * y**2], [3 * y**2, 6 * x * y]]])
        return t, dt, d2t

    def f(v):
        return float(np.sum(terms(v)[0] ** 2))

    def g(v):
        t, dt, _ = terms(v)
        return 2 * dt.T @ t

    def h(v):
        t, dt, d2t = terms(v)
        return 2 * (dt.T @ dt + np.einsum("k,kij->ij", t, d2t))

    return f, g, h


def powell():
    def f(v):
        a, b, c, d = v
        return (a + 10 * b) ** 2 + 5 * (c - d) ** 2 + (b - 2 * c) ** 4 + 10 * (a - d) ** 4

    def g(v):
        a, b, c, d = v
        return np.array([
            2 * (a + 10 * b) + 40 * (a - d) ** 3,
            20 * (a + 10 * b) + 4 * (b - 2 * c) ** 3,
            10 * (c - d) - 8 * (b - 2 * c) ** 3,
            -10 * (c - d) - 40 * (a - d) ** 3,
        ])

    def h(v):
        a, b, c, d = v
        u, w = 120 * (a - d) ** 2, 12 * (b - 2 * c) ** 2
        return np.array([
            [2 + u, 20, 0, -u],
            [20, 200 + w, -2 * w, 0],
            [0, -2 * w, 10 + 4 * w, -10],
            [-u, 0, -10, 10 + u],
        ])

    return f, g, h


def quadratic(data):
    lam = np.array(data["lambda"])
    return (lambda x: 0.5 * float(lam @ (x - 1) ** 2), lambda x: lam * (x - 1), lambda x: np.diag(lam))


def logistic(data):
    X, y, mu = np.array(data["X"]), np.array(data["y"]), data["mu"]
    m = len(y)

    def f(w):
        z = X @ w
        return float(np.mean(np.logaddexp(0, z) - y * z) + mu / 2 * w @ w)

    def g(w):
        s = 1 / (1 + np.exp(-(X @ w)))
        return X.T @ (s - y) / m + mu * w

    def h(w):
        s = 1 / (1 + np.exp(-(X @ w)))
        return (X.T * (s * (1 - s))) @ X / m + mu * np.eye(len(w))

    return f, g, h


def problem(kind, data):
    if kind == "rosen":
        return rosen, rosen_der, rosen_hess
    if kind == "beale":
        return beale()
    if kind == "powell":
        return powell()
    if kind == "quadratic":
        return quadratic(data)
    if kind == "logistic":
        return logistic(data)
    raise ValueError(kind)


def projected_gradient(x, g, bounds):
    """P(x - g) - x, the gradient where nothing bounds x: zero at a first-order point."""
    if bounds is None:
        return g
    return np.clip(x - g, bounds["lower"], bounds["upper"]) - x


def run(spec):
    f, g, h = problem(spec["kind"], spec.get("data"))
    x0 = np.array(spec["x0"], dtype=float)
    method = spec["method"]
    extra = {}
    if method == "Newton-CG":
        extra["hessp"] = rosen_hess_prod if spec["kind"] == "rosen" else (lambda x, p: h(x) @ p)
    if method == "trust-exact":
        extra["hess"] = h
    times = []
    for _ in range(spec.get("repeat", 1)):
        start = time.perf_counter()
        bounds = spec.get("bounds")
        if bounds is not None:
            extra["bounds"] = [(bounds["lower"], bounds["upper"])] * len(x0)
        r = minimize(f, x0, jac=g, method=method, options=spec["options"], **extra)
        times.append(time.perf_counter() - start)
    return {
        "problem": spec["problem"],
        "method": method,
        "nit": int(r.nit),
        "nfev": int(r.nfev),
        "njev": int(getattr(r, "njev", 0)),
        "nhev": int(getattr(r, "nhev", 0)),
        "fun": float(r.fun),
        "gnorm": float(np.max(np.abs(projected_gradient(r.x, g(r.x), spec.get("bounds"))))),
        "x": [float(v) for v in r.x],
        "success": bool(r.success),
        "message": str(r.message),
        "ms": 1e3 * float(np.median(times)),
    }


def main():
    request = json.load(sys.stdin)
    results = [run(spec) for spec in request["runs"]]
    json.dump({"version": scipy.__version__, "numpy": np.__version__, "results": results}, sys.stdout)


if __name__ == "__main__":
    main()
