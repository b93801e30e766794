# The constants of wengert's exp kernel (packages/ops/src/exp.ts): N/ln 2, ln 2/N as a 32-bit
# head and its tail, and the table S_j = 2^(j/N) rounded with T_j = (2^(j/N) - S_j)/S_j, N = 128,
# computed with 200-bit mpmath arithmetic. Run with Debian's python3 (python3-mpmath).
import mpmath as mp
mp.mp.prec = 200
N = 128
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
s, t = [], []
for j in range(N):
    v = mp.mpf(2) ** (mp.mpf(j) / N)
    sj = float(v)
    s.append(sj)
    t.append(float((v - mp.mpf(sj)) / mp.mpf(sj)))
print("SCALE", ", ".join(repr(x) for x in s))
print("TAIL", ", ".join(repr(x) for x in t))
