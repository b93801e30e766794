# Coefficients of wengert's tanh kernel (packages/ops/src/tanh.ts), printed as it writes them.
# Near-minimax fits by Chebyshev interpolation, computed with 200-bit mpmath arithmetic.
import mpmath as mp
mp.mp.prec = 200

def interpolate(f, lo, hi, deg, origin):
    """Coefficients of the polynomial in (x - origin) interpolating f at deg+1 Chebyshev nodes of [lo, hi]."""
    n = deg + 1
    xs = [(lo + hi) / 2 + (hi - lo) / 2 * mp.cos(mp.pi * (k + mp.mpf(1) / 2) / n) for k in range(n)]
    A = mp.matrix([[(x - origin) ** j for j in range(n)] for x in xs])
    c = mp.lu_solve(A, mp.matrix([f(x) for x in xs]))
    return [c[j] for j in range(n)]

def small(z):
    if z == 0: return mp.mpf(-1) / 3
    s = mp.sqrt(z)
    return (mp.tanh(s) / s - 1) / z

SMALL_DEG = 7
STEP = 16            # intervals per unit on [0.25, 2)
TABLE_DEG = 8
P = interpolate(small, mp.mpf(0), mp.mpf(1) / 16, SMALL_DEG, 0)
rows = []
for i in range(4, 32):
    lo = mp.mpf(i) / STEP; hi = mp.mpf(i + 1) / STEP; c = (lo + hi) / 2
    co = interpolate(mp.tanh, lo, hi, TABLE_DEG, c)
    hi0 = float(co[0]); lo0 = float(co[0] - hi0)
    rows.append([hi0, lo0] + [float(x) for x in co[1:]])
r = lambda x: repr(float(x))
# P's coefficients (p0 … p7), then TABLE's rows as tanh.ts writes them: hi, lo, c1 … c3 / c4 … c8
print("P: " + ", ".join(r(x) for x in P))
for row in rows:
    print("  " + ", ".join(r(x) for x in row[:5]) + ",")
    print("  " + ", ".join(r(x) for x in row[5:]) + ",")
