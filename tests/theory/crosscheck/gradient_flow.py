#!/usr/bin/python3
"""Independent numpy/scipy cross-check: gradient flow of the 7-parameter population risk
started from the key/value-swapped point.

Written from the mathematical description only (no project C++ was consulted).

Parameters theta = (m_kk, m_vk, m_kv, m_vv, a, b, c); the student noise covariance is
R = Lc Lc^T with Lc = [[a, 0], [b, c]].  For one sequence of length L with teacher fields
chi*_l, z*_l and location posterior p_l, and one standard normal xi_l per token:

    chi_l  = m_kk chi*_l + m_kv z*_l + a xi_l          (student key field)
    zb_l   = m_vk chi*_l + m_vv z*_l + b xi_l          (student value field, c-part removed)
    f      = sum_l s_l(chi) zb_l,     y = sum_j p_j z*_j
    e      = sum_j p_j z*_j^2 - 2 y f + f^2 + c^2 sum_l s_l^2

(the independent c-noise in the value field is averaged out exactly, and the label location
is averaged out given chi*).  E(theta) is the sample mean of e (noise-free labels).

Modes
  --selftest               gradient vs finite differences, pure-swap closed forms at S = 2e5
  --point TASK NU ACT      one gradient-flow run (NU may be 'inf')
  --fig5                   the fixed list of points, writes gradient_flow_fig5.json
"""
import argparse
import json
import math
import os
import sys
import time

# One thread for BLAS; and keep glibc from mmap/munmap-ing every large numpy temporary
# (that cost ~1/3 of the run time as system time).  The malloc variables only act at process
# start, so re-execute once with them set.
if __name__ == "__main__" and os.environ.get("MALLOC_MMAP_THRESHOLD_") is None:
    env = dict(os.environ, MALLOC_MMAP_THRESHOLD_="1000000000", MALLOC_TRIM_THRESHOLD_="1000000000")
    env.setdefault("OMP_NUM_THREADS", "1")
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    os.execve(sys.executable, [sys.executable] + sys.argv, env)
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np
from scipy.integrate import solve_ivp
from scipy.optimize import minimize
from scipy.special import erf, expit

HERE = os.path.dirname(os.path.abspath(__file__))
NAMES = ["m_kk", "m_vk", "m_kv", "m_vv", "a", "b", "c"]
BOX = 40.0


# ----------------------------------------------------------------------------- sampling
def draw_sample(task, nu, S, L, seed):
    """Teacher key fields X (S,L), value fields Z (S,L), location posterior P (S,L),
    student noise XI (S,L).  nu may be np.inf (max task only)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((S, L))
    if task == "spiked":
        if not np.isfinite(nu):
            raise ValueError("spiked task needs finite nu")
        pos = rng.integers(0, L, size=S)
        X[np.arange(S), pos] += math.sqrt(nu)
        logits = math.sqrt(nu) * X
    elif task == "max":
        logits = None if not np.isfinite(nu) else nu * X
    else:
        raise ValueError(task)
    if logits is None:
        P = np.zeros((S, L))
        P[np.arange(S), np.argmax(X, axis=1)] = 1.0
    else:
        logits = logits - logits.max(axis=1, keepdims=True)
        P = np.exp(logits)
        P /= P.sum(axis=1, keepdims=True)
    Z = rng.standard_normal((S, L))
    XI = rng.standard_normal((S, L))
    F = np.stack([X.ravel(), Z.ravel(), XI.ravel()])
    return dict(X=X, Z=Z, P=P, XI=XI, F=F, ybar=(P * Z).sum(1), pz2=(P * Z * Z).sum(1),
                S=S, L=L, task=task, nu=nu, seed=seed)


# ----------------------------------------------------------------------------- activations
# Each returns (s, vjp) where s = sigma(chi) row-wise and vjp(u)_l = sum_m u_m d s_m / d chi_l.
def act_softmax(chi):
    w = np.exp(chi - chi.max(axis=1, keepdims=True))
    s = w / w.sum(axis=1, keepdims=True)

    def vjp(u):
        return s * (u - (u * s).sum(axis=1, keepdims=True))
    return s, vjp


def act_linear(chi):
    return 1.0 + chi, (lambda u: u)


def act_erf(chi):
    s = 1.0 + erf(chi)
    d = (2.0 / math.sqrt(math.pi)) * np.exp(-chi * chi)
    return s, (lambda u: d * u)


def act_softplus_kernel(chi):
    sp = np.logaddexp(0.0, chi)
    tot = sp.sum(axis=1, keepdims=True)
    s = sp / tot
    dsp = expit(chi) / tot

    def vjp(u):
        return dsp * (u - (u * s).sum(axis=1, keepdims=True))
    return s, vjp


ACTS = {"softmax": act_softmax, "linear": act_linear, "erf": act_erf,
        "softplus": act_softplus_kernel}


# ----------------------------------------------------------------------------- risk
def risk(theta, d, act, grad=True, per_sample=False):
    mkk, mvk, mkv, mvv, a, b, c = theta
    F = d["F"]                                  # rows: chi*, z*, xi, flattened over (S, L)
    S, L = d["S"], d["L"]
    chi = (np.array([mkk, mkv, a]) @ F).reshape(S, L)
    zb = (np.array([mvk, mvv, b]) @ F).reshape(S, L)
    s, vjp = ACTS[act](chi)
    f = (s * zb).sum(1)
    s2 = (s * s).sum(1)
    e = d["pz2"] - 2.0 * d["ybar"] * f + f * f + c * c * s2
    E = e.mean()
    out = [E]
    if grad:
        g = 2.0 * (f - d["ybar"])
        H = g[:, None] * s                                   # d e / d zb_l
        G = vjp(g[:, None] * zb + 2.0 * c * c * s)           # d e / d chi_l
        gG = F @ G.ravel() / S                               # (m_kk, m_kv, a)
        gH = F @ H.ravel() / S                               # (m_vk, m_vv, b)
        gr = np.array([gG[0], gH[0], gG[1], gH[1], gG[2], gH[2], 2.0 * c * s2.mean()])
        out.append(gr)
    if per_sample:
        out.append(e)
    return tuple(out) if len(out) > 1 else E


def fd_hessian(theta, d, act, h=1e-5):
    """Central finite differences of the analytic gradient, symmetrised."""
    n = len(theta)
    Hm = np.empty((n, n))
    for i in range(n):
        step = h * max(1.0, abs(theta[i]))
        tp = np.array(theta, float); tp[i] += step
        tm = np.array(theta, float); tm[i] -= step
        Hm[:, i] = (risk(tp, d, act)[1] - risk(tm, d, act)[1]) / (2 * step)
    return 0.5 * (Hm + Hm.T)


# ----------------------------------------------------------------------------- self-test
def selftest(seed):
    res = {"gradient_check": [], "closed_forms": []}
    rng = np.random.default_rng(seed + 1000)
    print("== gradient vs central finite differences (S=4000, L=10, random theta)")
    worst = 0.0
    for task, nu in [("spiked", 1.0), ("max", 1.7783), ("max", np.inf)]:
        d = draw_sample(task, nu, 4000, 10, seed)
        for act in ACTS:
            for trial in range(2):
                th = rng.normal(0, 0.7, 7)
                _, g = risk(th, d, act)
                fd = np.empty(7)
                for i in range(7):
                    hstep = 1e-6
                    tp = th.copy(); tp[i] += hstep
                    tm = th.copy(); tm[i] -= hstep
                    fd[i] = (risk(tp, d, act, grad=False) - risk(tm, d, act, grad=False)) / (2 * hstep)
                rel = np.max(np.abs(fd - g)) / max(np.max(np.abs(g)), 1e-12)
                worst = max(worst, rel)
                res["gradient_check"].append(dict(task=task, nu=str(nu), act=act, max_rel_err=rel))
                print(f"  {task:6s} nu={nu:<7} {act:9s} max rel err {rel:.2e}")
    print(f"  worst max-relative error: {worst:.2e}")
    res["gradient_worst_rel_err"] = worst

    print("== pure-swap closed forms, theta=(0,d,c,0,0,0,0), L=10, S=2e5")
    cases = [("spiked", 4.0, 1.0, 1.0, {"softmax": 0.95027, "erf": 18.89795, "linear": 25.0}),
             ("max", np.inf, 2.0, 0.4, {"softmax": 0.89545, "erf": 2.78902, "linear": 6.53738})]
    ok_all = True
    for task, nu, cc, dd, ref in cases:
        d = draw_sample(task, nu, 200000, 10, seed)
        th = np.array([0, dd, cc, 0, 0, 0, 0], float)
        for act, val in ref.items():
            E, e = risk(th, d, act, grad=False, per_sample=True)
            se = e.std() / math.sqrt(len(e))
            z = (E - val) / se
            ok = abs(z) < 3
            ok_all &= ok
            res["closed_forms"].append(dict(task=task, nu=str(nu), c=cc, d=dd, act=act, E=E,
                                            stderr=se, reference=val, z=z, pass_=bool(ok)))
            print(f"  {task:6s} nu={nu:<4} (c,d)=({cc},{dd}) {act:8s} MC {E:.5f} +- {se:.5f}"
                  f"  ref {val:.5f}  z={z:+.2f}  {'PASS' if ok else 'FAIL'}")
    res["closed_forms_all_pass"] = bool(ok_all)
    with open(os.path.join(HERE, "selftest_result.json"), "w") as fh:
        json.dump(res, fh, indent=1, default=float)
    return res


# ----------------------------------------------------------------------------- matched minimum
def matched_minimum(d, act):
    def fun(x):
        th = np.array([x[0], 0, 0, x[1], 0, 0, 0], float)
        E, g = risk(th, d, act)
        return E, np.array([g[0], g[3]])
    r = minimize(fun, np.array([1.0, 1.0]), jac=True, method="L-BFGS-B",
                 bounds=[(-BOX, BOX), (-BOX, BOX)],
                 options=dict(ftol=1e-15, gtol=1e-10, maxiter=2000))
    return float(r.fun), r.x.tolist(), float(np.linalg.norm(r.jac))


# ----------------------------------------------------------------------------- flow
def run_flow(d, act, T=1e7, theta0=(0, 1, 1, 0, 0, 0, 0), wall_cap=180.0, verbose=True):
    """Gradient flow integrated with BDF, one solve_ivp call per decade of t
    ([0,1], [1,10], ..., [T/10, T]); between decades the wall clock is checked and the
    run is capped if it exceeds wall_cap seconds."""
    t0w = time.time(); c0 = time.process_time()
    neval = [0]

    def rhs(t, y):
        neval[0] += 1
        return -risk(y, d, act)[1]

    def jac(t, y):
        return -fd_hessian(y, d, act)

    def ev_box(t, y):
        return BOX - np.max(np.abs(y))
    ev_box.terminal = True

    def ev_grad(t, y):
        return math.log(np.linalg.norm(risk(y, d, act)[1]) + 1e-300) - math.log(1e-9)
    ev_grad.terminal = True

    edges = [0.0] + [10.0 ** k for k in range(0, int(round(math.log10(T))) + 1)]
    y = np.array(theta0, float)
    traj_t, traj_y = [0.0], [y.copy()]
    reason, capped, nfev_tot = "T_reached", False, 0
    for lo, hi in zip(edges[:-1], edges[1:]):
        teval = np.unique(np.concatenate([np.geomspace(max(lo, 1e-3), hi, 11), [hi]]))
        teval = teval[(teval > lo) & (teval <= hi)]
        sol = solve_ivp(rhs, (lo, hi), y, method="BDF", jac=jac, rtol=1e-6, atol=1e-9,
                        events=[ev_box, ev_grad], t_eval=teval)
        nfev_tot += sol.nfev
        # (with t_eval, a chunk that stops on an event before its first t_eval point
        # returns empty lists here)
        traj_t += np.asarray(sol.t, float).tolist()
        traj_y += [v for v in np.asarray(sol.y, float).reshape(len(y), -1).T]
        if sol.status == -1:
            reason = "solver_failed: " + sol.message
            t_end, y = (traj_t[-1], traj_y[-1]) if len(traj_t) else (lo, y)
            break
        if sol.status == 1:
            if len(sol.t_events[0]):
                reason, t_end, y = "box", sol.t_events[0][0], sol.y_events[0][0]
            else:
                reason, t_end, y = "grad_small", sol.t_events[1][0], sol.y_events[1][0]
            traj_t.append(t_end); traj_y.append(y.copy())
            break
        y = sol.y[:, -1]
        t_end = hi
        if verbose:
            E, g = risk(y, d, act)
            print(f"    t={hi:9.3g} E={E:.6f} |g|={np.linalg.norm(g):.2e} theta={np.round(y, 4)}"
                  f"  wall={time.time() - t0w:.1f}s", flush=True)
        if time.process_time() - c0 > wall_cap and hi < T:
            reason, capped = f"capped_at_T={hi:g}", True
            break
    return dict(t_end=float(t_end), theta=np.asarray(y, float), reason=reason, capped=capped,
                traj_t=np.array(traj_t), traj_y=np.array(traj_y), nfev=nfev_tot,
                wall=time.time() - t0w, cpu=time.process_time() - c0)


def ksq(th):   # |k|^2/D = m_kk^2 + m_kv^2 + a^2
    return th[0] ** 2 + th[2] ** 2 + th[4] ** 2


def vsq(th):   # |v|^2/D = m_vk^2 + m_vv^2 + b^2 + c^2
    return th[1] ** 2 + th[3] ** 2 + th[5] ** 2 + th[6] ** 2


def analyse_point(task, nu, act, seed, S=20000, L=10, T=1e7, wall_cap=180.0, verbose=True):
    w0 = time.time(); c0 = time.process_time()
    d = draw_sample(task, nu, S, L, seed)
    E_m, x_m, gm = matched_minimum(d, act)
    if verbose:
        print(f"  matched minimum: E={E_m:.6f} (m_kk, m_vv)={np.round(x_m, 4)} |g|={gm:.1e}", flush=True)
    fl = run_flow(d, act, T=T, wall_cap=wall_cap, verbose=verbose)
    th = fl["theta"]
    E, g, e = risk(th, d, act, per_sample=True)
    se = float(e.std() / math.sqrt(S))
    gn = float(np.linalg.norm(g))
    Hs = fd_hessian(th, d, act)
    eig = np.linalg.eigvalsh(Hs)
    # behaviour over the last decade of recorded time
    tt, yy = fl["traj_t"], fl["traj_y"]
    t_end = fl["t_end"]
    sel = tt >= t_end / 10.0
    i0 = int(np.argmax(sel)) if sel.any() else 0
    y_dec = yy[i0]
    E_dec = risk(y_dec, d, act, grad=False)
    k_growth = ksq(th) / max(ksq(y_dec), 1e-300)
    outward = float(-g @ th)        # >0: flow moves outward (d|theta|^2/dt = 2 theta.(-g))
    imax = int(np.argmax(np.abs(th)))
    outward_coord = float(-g[imax] * np.sign(th[imax]))
    # classification
    collapsed = abs(E - E_m) < 2e-4 and abs(th[1]) < 0.05 and abs(th[2]) < 0.05
    if collapsed:
        cls = "collapsed"
    elif fl["reason"] == "box" and (outward > 0 or outward_coord > 0):
        cls = "runaway"
    elif act == "linear" and not fl["reason"] == "grad_small" and k_growth > 1.0 and E_dec - E > 0 \
            and outward > 0 and gn > 1e-9:
        cls = "runaway"
    elif gn < 1e-6 and eig[0] > 0:
        cls = "distinct"
    else:
        cls = "unclear"
    res = dict(task=task, nu=float(nu) if np.isfinite(nu) else "inf", activation=act, seed=seed,
               S=S, L=L, **{"class": cls}, E_end=float(E), E_end_stderr=se, E_matched=E_m,
               matched_m_kk_m_vv=x_m, t_end=t_end, T_max=T, stop_reason=fl["reason"],
               capped=fl["capped"], theta_end=dict(zip(NAMES, map(float, th))),
               k_norm_sq=float(ksq(th)), v_norm_sq=float(vsq(th)), grad_norm=gn,
               hessian_min_eigenvalue=float(eig[0]), hessian_eigenvalues=eig.tolist(),
               last_decade=dict(t_start=float(tt[i0]), E_start=float(E_dec),
                                k_norm_sq_ratio=float(k_growth), E_drop=float(E_dec - E)),
               outward_rate=outward, rhs_evals=int(fl["nfev"]), wall_seconds=time.time() - w0,
               cpu_seconds=time.process_time() - c0, flow_cpu_seconds=fl["cpu"])
    if verbose:
        print(f"  -> {cls}: E_end={E:.6f}+-{se:.6f} (matched {E_m:.6f}) t_end={t_end:.3g} "
              f"[{fl['reason']}] |g|={gn:.2e} lam_min={eig[0]:.3e} theta={np.round(th, 4)} "
              f"wall={res['wall_seconds']:.1f}s", flush=True)
    return res


def nu_grid(k):
    return 10.0 ** (-1 + 2.5 * k / 10)


# (task, nu, activation, starred -> also seed 12)
FIG5_POINTS = [
    ("spiked", nu_grid(2), "linear", True), ("spiked", nu_grid(3), "linear", True),
    ("spiked", nu_grid(4), "linear", False),
    ("spiked", nu_grid(4), "softmax", True), ("spiked", nu_grid(5), "softmax", True),
    ("spiked", nu_grid(3), "erf", True), ("spiked", nu_grid(4), "erf", True),
    ("spiked", nu_grid(4), "softplus", True), ("spiked", nu_grid(5), "softplus", True),
    ("max", nu_grid(3), "linear", True), ("max", nu_grid(4), "linear", True),
    ("max", nu_grid(5), "linear", False),
    ("max", nu_grid(4), "softmax", True), ("max", nu_grid(5), "softmax", True),
    ("max", nu_grid(4), "erf", True), ("max", nu_grid(5), "erf", True), ("max", np.inf, "erf", False),
    ("max", nu_grid(4), "softplus", True), ("max", nu_grid(5), "softplus", True),
    ("max", np.inf, "softplus", False),
    ("max", np.inf, "softmax", False),
]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--selftest", action="store_true")
    ap.add_argument("--point", nargs=3, metavar=("TASK", "NU", "ACT"))
    ap.add_argument("--fig5", action="store_true")
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--seed2", type=int, default=12, help="second seed for starred fig5 points")
    ap.add_argument("--S", type=int, default=20000)
    ap.add_argument("--T", type=float, default=1e7)
    ap.add_argument("--wall-cap", type=float, default=180.0,
                    help="CPU seconds per flow after which no further decade of t is started")
    ap.add_argument("--resume", action="store_true",
                    help="with --fig5: keep the entries already in --out and run only the missing ones")
    ap.add_argument("--out", default=os.path.join(HERE, "gradient_flow_fig5.json"))
    args = ap.parse_args()
    w0 = time.time()
    if args.selftest:
        selftest(args.seed)
    if args.point:
        task, nu, act = args.point
        nu = np.inf if nu == "inf" else float(nu)
        r = analyse_point(task, nu, act, args.seed, S=args.S, T=args.T, wall_cap=args.wall_cap)
        print(json.dumps(r, indent=1))
    if args.fig5:
        results, commands, prev_wall, prev_cpu = [], [], 0.0, 0.0
        if args.resume and os.path.exists(args.out):
            with open(args.out) as fh:
                old = json.load(fh)
            results = old["results"]
            commands = old.get("commands", [old.get("command")])
            prev_wall, prev_cpu = old.get("total_wall_seconds", 0.0), old.get("total_cpu_seconds", 0.0)
        commands.append("/usr/bin/python3 " + " ".join(sys.argv))
        done = {(r["task"], str(r["nu"]), r["activation"], r["seed"]) for r in results}
        jobs = []
        for task, nu, act, star in FIG5_POINTS:
            jobs.append((task, nu, act, args.seed))
            if star:
                jobs.append((task, nu, act, args.seed2))
        for task, nu, act, seed in jobs:
            key = (task, str(float(nu)) if np.isfinite(nu) else "inf", act, seed)
            if key in done:
                continue
            print(f"== {task} nu={nu:.4g} {act} seed={seed}", flush=True)
            results.append(analyse_point(task, nu, act, seed, S=args.S, T=args.T,
                                         wall_cap=args.wall_cap))
            with open(args.out, "w") as fh:
                json.dump(dict(commands=commands, results=results,
                               total_wall_seconds=prev_wall + time.time() - w0,
                               total_cpu_seconds=prev_cpu + time.process_time()), fh, indent=1)
        print(f"{'task':6s} {'nu':>7s} {'act':9s} seed {'class':9s} {'E_end':>9s} {'se':>8s} "
              f"{'E_match':>9s} {'t_end':>9s} {'|grad|':>8s} {'lam_min':>9s} {'wall':>6s}")
        for r in results:
            print(f"{r['task']:6s} {str(r['nu'])[:7]:>7s} {r['activation']:9s} {r['seed']:4d} "
                  f"{r['class']:9s} {r['E_end']:9.5f} {r['E_end_stderr']:8.5f} {r['E_matched']:9.5f} "
                  f"{r['t_end']:9.3g} {r['grad_norm']:8.1e} {r['hessian_min_eigenvalue']:9.2e} "
                  f"{r['wall_seconds']:6.1f}")
    print(f"total wall {time.time() - w0:.1f}s, cpu {time.process_time():.1f}s")


if __name__ == "__main__":
    main()
