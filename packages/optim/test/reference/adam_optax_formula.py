"""Adam's first three updates by optax's formula, in IEEE double (Python floats), for
test/adam.test.ts: the literals there are this script's output.

optax (read at google-deepmind/optax 2edbcbe2390da13983b92cbef94ac0460ecde1c5, August 2026:
optax/_src/transform.py scale_by_adam, optax/tree_utils/_tree_math.py,
optax/_src/alias.py adam = chain(scale_by_adam, scale_by_learning_rate)):
  mu      = (1 - b1) * g + b1 * mu               tree_update_moment(g, mu, b1, 1)
  nu      = (1 - b2) * g**2 + b2 * nu            tree_update_moment_per_elem_norm(g, nu, b2, 2)
  count   = count + 1                            safe_increment
  mu_hat  = mu / (1 - b1**count)                 tree_bias_correction
  nu_hat  = nu / (1 - b2**count)
  u       = mu_hat / (sqrt(nu_hat + eps_root) + eps)
  update  = (-1 * lr) * u                        scale_by_learning_rate: scale(m * lr), m = -1
  params  = params + update                      apply_updates
"""
import math

def adam(params, grads_per_step, lr, b1=0.9, b2=0.999, eps=1e-8, eps_root=0.0):
    mu = [0.0] * len(params)
    nu = [0.0] * len(params)
    out = []
    for count, g in enumerate(grads_per_step, start=1):
        mu = [(1 - b1) * gi + b1 * m for gi, m in zip(g, mu)]
        nu = [(1 - b2) * gi**2 + b2 * v for gi, v in zip(g, nu)]
        c1 = 1 - b1**count
        c2 = 1 - b2**count
        u = [(m / c1) / (math.sqrt(v / c2 + eps_root) + eps) for m, v in zip(mu, nu)]
        update = [(-1 * lr) * ui for ui in u]
        params = [p + d for p, d in zip(params, update)]
        out.append({"updates": update, "params": params})
    return out

GRADS = [[0.1, -2.5, 1e-3, 100.0, 0.0], [0.3, -2.0, -1e-3, 50.0, 1e-9], [-0.2, 1.5, 2e-3, 25.0, -3.0]]
PARAMS = [0.5, -1.25, 3.0, 1e-4, 0.0]
for name, kw in [("default", dict(lr=1e-3)), ("epsRoot", dict(lr=0.05, b1=0.8, b2=0.99, eps=1e-6, eps_root=1e-10))]:
    print(name)
    for step in adam(PARAMS, GRADS, **kw):
        print("  updates", [repr(v) for v in step["updates"]])
        print("  params ", [repr(v) for v in step["params"]])
