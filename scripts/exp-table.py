# The constants of wengert's exp kernel (packages/ops/src/exp.ts): N/ln 2, ln 2/N as a 32-bit
# head and its tail, the table S_j = 2^(j/N) rounded with T_j = (2^(j/N) - S_j)/S_j, N = 512,
# and the polynomial's coefficients, computed with 200-bit mpmath arithmetic. Run with
# Debian's python3 (python3-mpmath).
import mpmath as mp
mp.mp.prec = 200
N = 512
ln2 = mp.log(2)
c = ln2 / N
# hi: c rounded to 32 significant bits, so that k*hi is exact for |k| < 2^21
e = mp.floor(mp.log(c, 2))
scale = mp.mpf(2) ** (31 - e)
hi = mp.nint(c * scale) / scale
lo = c - hi
print("INV_LN2_N", repr(float(N / ln2)))
print("LN2_N_HI", repr(float(hi)), float(hi) == hi)
print("LN2_N_LO", repr(float(lo)))
# e^r ~ 1 + r + r^2 (C2 + r C3 + r^2 C4) on |r| <= a (ln 2/(2N), widened for k's rounding):
# C2..C4 minimize the largest error r^2 (g(r) - q(r)), g(r) = (e^r - 1 - r)/r^2, by Remez's
# exchange (the error equioscillates at four points of [-a, a]).
a = c / 2 * (1 + mp.mpf(2) ** -20)
g = lambda r: mp.nsum(lambda k: r ** k / mp.factorial(k + 2), [0, mp.inf])  # also at r = 0
err = lambda q, r: r ** 2 * (g(r) - (q[0] + q[1] * r + q[2] * r ** 2))
grid = mp.linspace(-a, a, 4001)
points = [a * mp.cos(mp.pi * (3 - i) / 3) for i in range(4)]
for _ in range(6):
    A = mp.matrix([[r ** 2, r ** 3, r ** 4, (-1) ** i] for i, r in enumerate(points)])
    sol = mp.lu_solve(A, mp.matrix([r ** 2 * g(r) for r in points]))
    q = [sol[0], sol[1], sol[2]]
    vals = [err(q, r) for r in grid]
    # the largest |error| of each run of one sign: the next points
    runs = [[0]]
    for i in range(1, len(grid)):
        if vals[i] != 0 and mp.sign(vals[i]) != mp.sign(vals[runs[-1][0]]):
            runs.append([i])
        else:
            runs[-1].append(i)
    if len(runs) == 4:
        points = [grid[max(run, key=lambda j: abs(vals[j]))] for run in runs]
q = [float(x) for x in q]
for name, v in zip(("C2", "C3", "C4"), q):
    print(name, repr(v))
worst = max(abs(err([mp.mpf(x) for x in q], r)) for r in grid)
print("worst error (rounded coefficients)", mp.nstr(worst, 5), "=", mp.nstr(worst / mp.mpf(2) ** -53, 5), "ulp near 2")
s, t = [], []
for j in range(N):
    v = mp.mpf(2) ** (mp.mpf(j) / N)
    sj = float(v)
    s.append(sj)
    t.append(float((v - mp.mpf(sj)) / mp.mpf(sj)))
print("SCALE", ", ".join(repr(x) for x in s))
print("TAIL", ", ".join(repr(x) for x in t))
