"""GJK / EPA (sim_node.engine.gjk) against independent references.

References, none of which calls the engine:
  * closed forms: sphere-sphere, sphere-box (clamping), capsule-capsule (segment-segment),
    aligned boxes (per-axis gaps and overlaps);
  * brute force over the features of the cores (vertex-triangle, edge-edge, ...) for every pair
    of sphere (point), capsule (segment), box, convex polytope and triangle: exact when separated;
  * SLSQP on min |x - y|^2 with x in A, y in B as convex constraints (pairs with a cylinder);
  * support-function certificates, in numpy closed form per shape: with H(u) = h_A(-u) + h_B(u)
    the signed distance is -min_u H(u) when overlapping and max_u -H(u) when separated, so
    d = -H(n) together with pa in A, pb in B, pa - pb = d n sandwiches a separated distance,
    and min over optimised directions of H bounds the penetration depth.
"""
import numpy as np
import pytest
from hypothesis import given, strategies as st
from scipy.optimize import minimize
from scipy.spatial import ConvexHull
from scipy.spatial.transform import Rotation

from sim_node.engine import gjk

KINDS = ("sphere", "box", "capsule", "cylinder", "convex", "triangle")
PAIRS = [(a, b) for i, a in enumerate(KINDS) for b in KINDS[i:]]
SEPARATED_RTOL = 1e-9       # of the shape scale: the accuracy promised for separated pairs
PENETRATION_RTOL = 1e-7     # of the shape scale: EPA depth
Z = np.array([0.0, 0.0, 1.0])


# ---------------------------------------------------------------------------------------------
# Shapes

def rotation(rng):
    return Rotation.random(random_state=rng).as_matrix()


def random_shape(rng, kind, p=(0.0, 0.0, 0.0)):
    R, p = rotation(rng), np.asarray(p, dtype=float)
    if kind == "sphere":
        return dict(type=kind, size=[rng.uniform(0.1, 1.0)], R=R, p=p)
    if kind == "box":
        return dict(type=kind, size=rng.uniform(0.05, 1.0, 3), R=R, p=p)
    if kind == "capsule":
        return dict(type=kind, size=[rng.uniform(0.05, 0.5), rng.uniform(0.05, 1.0)], R=R, p=p)
    if kind == "cylinder":
        return dict(type=kind, size=[rng.uniform(0.1, 0.8), rng.uniform(0.05, 1.0)], R=R, p=p)
    if kind == "convex":
        pts = rng.normal(size=(60, 3)) * rng.uniform(0.2, 1.0, 3)
        verts = pts[ConvexHull(pts).vertices][:30]
        return dict(type=kind, vertices=verts - verts.mean(axis=0), R=R, p=p)
    verts = rng.uniform(-1.0, 1.0, (3, 3))
    return dict(type=kind, vertices=verts - verts.mean(axis=0), R=R, p=p)


def moved(shape, Q, t):
    """shape after the rigid motion x -> Q x + t."""
    out = dict(shape)
    out["R"] = Q @ shape["R"]
    out["p"] = Q @ shape["p"] + t
    return out


class Ref:
    """Independent numpy model of a shape: support function, membership, core features."""

    def __init__(self, s):
        self.kind = s["type"]
        self.R = np.asarray(s.get("R", np.eye(3)), dtype=float)
        self.p = np.asarray(s.get("p", np.zeros(3)), dtype=float)
        size = np.atleast_1d(np.asarray(s.get("size", [0.0]), dtype=float))
        self.size = size
        self.radius = size[0] if self.kind in ("sphere", "capsule") else 0.0
        self.tris = np.zeros((0, 3), dtype=int)
        self.edges = np.zeros((0, 2), dtype=int)
        if self.kind == "sphere":
            local = np.zeros((1, 3))
        elif self.kind == "capsule":
            local = np.array([[0.0, 0.0, -size[1]], [0.0, 0.0, size[1]]])
            self.edges = np.array([[0, 1]])
        elif self.kind == "box":
            local = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1)
                              for sz in (-1, 1)]) * size
        elif self.kind in ("convex", "triangle"):
            local = np.asarray(s["vertices"], dtype=float)
        else:
            local = None
        if self.kind in ("box", "convex"):
            hull = ConvexHull(local)
            self.equations = hull.equations          # local: E[:, :3] x + E[:, 3] <= 0 inside
            self.tris = hull.simplices
        if self.kind == "triangle":
            self.tris = np.array([[0, 1, 2]])
        if len(self.tris):
            e = np.concatenate([self.tris[:, [0, 1]], self.tris[:, [1, 2]], self.tris[:, [2, 0]]])
            self.edges = np.unique(np.sort(e, axis=1), axis=0)
        self.verts = None if local is None else local @ self.R.T + self.p
        self.scale = {
            "sphere": lambda: size[0], "box": lambda: np.linalg.norm(size),
            "capsule": lambda: size[0] + size[1], "cylinder": lambda: size[0] + size[1],
        }.get(self.kind, lambda: np.abs(local - local.mean(axis=0)).max() * 2)()

    def h(self, u):
        """Support function max_{x in shape} u.x for directions u (..., 3)."""
        u = np.asarray(u, dtype=float)
        ul = u @ self.R          # = (R^T u) row-wise
        base = u @ self.p
        if self.kind == "sphere":
            return base + self.size[0] * np.linalg.norm(u, axis=-1)
        if self.kind == "capsule":
            return base + self.size[1] * np.abs(ul[..., 2]) + self.size[0] * np.linalg.norm(u, axis=-1)
        if self.kind == "box":
            return base + np.abs(ul) @ self.size
        if self.kind == "cylinder":
            return (base + self.size[0] * np.linalg.norm(ul[..., :2], axis=-1)
                    + self.size[1] * np.abs(ul[..., 2]))
        return (u @ self.verts.T).max(axis=-1)

    def local(self, x):
        return (np.asarray(x, dtype=float) - self.p) @ self.R

    def outside(self, x):
        """How far x lies outside the shape (<= 0 inside; exact for all but convex, where it is
        the largest violated face-plane distance)."""
        x = np.asarray(x, dtype=float)
        q = self.local(x)
        if self.kind == "sphere":
            return np.linalg.norm(q) - self.size[0]
        if self.kind == "capsule":
            c = np.array([0.0, 0.0, np.clip(q[2], -self.size[1], self.size[1])])
            return np.linalg.norm(q - c) - self.size[0]
        if self.kind == "box":
            return (np.abs(q) - self.size).max()
        if self.kind == "cylinder":
            return max(np.linalg.norm(q[:2]) - self.size[0], abs(q[2]) - self.size[1])
        if self.kind == "convex":
            return (self.equations[:, :3] @ q + self.equations[:, 3]).max()
        t = self.verts
        return np.linalg.norm(x - point_triangle(x[None], t[None, 0], t[None, 1], t[None, 2])[0])

    def constraints(self, offset):
        """SLSQP inequality constraints g(z) >= 0 on z[offset:offset+3] meaning x in shape."""
        sl = slice(offset, offset + 3)
        if self.kind == "sphere":
            return [dict(type="ineq", fun=lambda z: self.size[0] ** 2 - np.sum((z[sl] - self.p) ** 2))]
        if self.kind == "box":
            return [dict(type="ineq", fun=lambda z: np.concatenate(
                [self.size - self.local(z[sl]), self.size + self.local(z[sl])]))]
        if self.kind == "cylinder":
            return [dict(type="ineq", fun=lambda z: np.array([
                self.size[0] ** 2 - np.sum(self.local(z[sl])[:2] ** 2),
                self.size[1] - self.local(z[sl])[2], self.size[1] + self.local(z[sl])[2]]))]
        if self.kind == "capsule":
            def g(z):
                q = self.local(z[sl])
                c = np.array([0.0, 0.0, np.clip(q[2], -self.size[1], self.size[1])])
                return self.size[0] ** 2 - np.sum((q - c) ** 2)
            return [dict(type="ineq", fun=g)]
        if self.kind == "convex":
            E = self.equations
            return [dict(type="ineq", fun=lambda z: -(E[:, :3] @ self.local(z[sl]) + E[:, 3]))]
        a, b, c = self.verts
        n = np.cross(b - a, c - a)
        edges = [(a, b), (b, c), (c, a)]
        return [dict(type="eq", fun=lambda z: np.array([n @ (z[sl] - a)])),
                dict(type="ineq", fun=lambda z: np.array(
                    [np.cross(q - p, z[sl] - p) @ n for p, q in edges]))]

    def centre(self):
        return self.p if self.verts is None else self.verts.mean(axis=0)


# ---------------------------------------------------------------------------------------------
# Closed forms and brute force (vectorised over feature pairs)

def point_segment(x, a, b):
    """Closest points on segments [a, b] to points x (all (N, 3))."""
    d = b - a
    dd = np.einsum("ij,ij->i", d, d)
    t = np.where(dd > 0, np.einsum("ij,ij->i", x - a, d) / np.where(dd > 0, dd, 1.0), 0.0)
    return a + np.clip(t, 0.0, 1.0)[:, None] * d


def point_triangle(x, a, b, c):
    """Closest points of triangles (a, b, c) to points x (all (N, 3)): the plane projection if
    inside, else the best of the three edges."""
    n = np.cross(b - a, c - a)
    nn = np.einsum("ij,ij->i", n, n)
    safe = np.where(nn > 0, nn, 1.0)
    proj = x - (np.einsum("ij,ij->i", x - a, n) / safe)[:, None] * n
    la = np.einsum("ij,ij->i", np.cross(b - proj, c - proj), n)
    lb = np.einsum("ij,ij->i", np.cross(c - proj, a - proj), n)
    lc = np.einsum("ij,ij->i", np.cross(a - proj, b - proj), n)
    inside = (nn > 0) & (la >= 0) & (lb >= 0) & (lc >= 0)
    cands = np.stack([point_segment(x, a, b), point_segment(x, b, c), point_segment(x, c, a)])
    dist = np.linalg.norm(cands - x, axis=2)
    best = cands[dist.argmin(axis=0), np.arange(len(x))]
    return np.where(inside[:, None], proj, best)


def segment_segment(p1, q1, p2, q2):
    """Closest points of segment pairs (N, 3 each): the minimum of the convex quadratic
    |p1 + s d1 - p2 - t d2|^2 over [0, 1]^2 is the interior stationary point or the best of the
    four edge minimisers."""
    d1, d2, r = q1 - p1, q2 - p2, p1 - p2
    a = np.einsum("ij,ij->i", d1, d1)
    e = np.einsum("ij,ij->i", d2, d2)
    b = np.einsum("ij,ij->i", d1, d2)
    c = np.einsum("ij,ij->i", d1, r)
    f = np.einsum("ij,ij->i", d2, r)
    sa = np.where(a > 0, a, 1.0)
    se = np.where(e > 0, e, 1.0)
    cand = []
    for s_fix in (0.0, 1.0):
        t = np.where(e > 0, np.clip((f + s_fix * b) / se, 0, 1), 0.0)
        cand.append((np.full_like(t, s_fix), t))
    for t_fix in (0.0, 1.0):
        s = np.where(a > 0, np.clip((t_fix * b - c) / sa, 0, 1), 0.0)
        cand.append((s, np.full_like(s, t_fix)))
    den = a * e - b * b
    ok = den > 1e-14 * a * e
    sden = np.where(ok, den, 1.0)
    s_in, t_in = (b * f - c * e) / sden, (a * f - b * c) / sden
    ok &= (s_in >= 0) & (s_in <= 1) & (t_in >= 0) & (t_in <= 1)
    cand.append((np.where(ok, s_in, 0.0), np.where(ok, t_in, 0.0)))
    best = None
    for k, (s, t) in enumerate(cand):
        x, y = p1 + s[:, None] * d1, p2 + t[:, None] * d2
        dist = np.linalg.norm(x - y, axis=1)
        if k == len(cand) - 1:
            dist = np.where(ok, dist, np.inf)
        if best is None:
            best = (dist, x, y)
        else:
            take = dist < best[0]
            best = (np.where(take, dist, best[0]), np.where(take[:, None], x, best[1]),
                    np.where(take[:, None], y, best[2]))
    return best


def brute_force(A: Ref, B: Ref):
    """Exact signed distance and closest points of two separated shapes whose cores are
    points, segments or polytopes: the closest pair of the cores lies on a pair of features
    (vertex-vertex, vertex-edge, edge-edge, vertex-triangle), then the radii are peeled off."""
    best = (np.inf, None, None)

    def consider(d, x, y):
        nonlocal best
        if len(d) and d.min() < best[0]:
            k = d.argmin()
            best = (d[k], x[k], y[k])

    VA, VB = A.verts, B.verts
    ia, ib = np.meshgrid(np.arange(len(VA)), np.arange(len(VB)), indexing="ij")
    ia, ib = ia.ravel(), ib.ravel()
    consider(np.linalg.norm(VA[ia] - VB[ib], axis=1), VA[ia], VB[ib])
    for X, Y, swap in ((A, B, False), (B, A, True)):
        V = X.verts
        if len(Y.edges):
            iv, ie = [g.ravel() for g in np.meshgrid(np.arange(len(V)), np.arange(len(Y.edges)),
                                                     indexing="ij")]
            y = point_segment(V[iv], Y.verts[Y.edges[ie, 0]], Y.verts[Y.edges[ie, 1]])
            d = np.linalg.norm(V[iv] - y, axis=1)
            consider(d, *((y, V[iv]) if swap else (V[iv], y)))
        if len(Y.tris):
            iv, it = [g.ravel() for g in np.meshgrid(np.arange(len(V)), np.arange(len(Y.tris)),
                                                     indexing="ij")]
            T = Y.verts[Y.tris[it]]
            y = point_triangle(V[iv], T[:, 0], T[:, 1], T[:, 2])
            d = np.linalg.norm(V[iv] - y, axis=1)
            consider(d, *((y, V[iv]) if swap else (V[iv], y)))
    if len(A.edges) and len(B.edges):
        i, j = [g.ravel() for g in np.meshgrid(np.arange(len(A.edges)), np.arange(len(B.edges)),
                                               indexing="ij")]
        d, x, y = segment_segment(VA[A.edges[i, 0]], VA[A.edges[i, 1]],
                                  VB[B.edges[j, 0]], VB[B.edges[j, 1]])
        consider(d, x, y)
    dcore, x, y = best
    n = (x - y) / dcore
    return dcore - A.radius - B.radius, x - A.radius * n, y + B.radius * n


def slsqp(A: Ref, B: Ref):
    """min |x - y| over x in A, y in B by SLSQP from a few starts (A, B as convex constraints)."""
    best = None
    ca, cb = A.centre(), B.centre()
    for z0 in (np.concatenate([ca, cb]), np.concatenate([0.9 * ca + 0.1 * cb, 0.1 * ca + 0.9 * cb])):
        res = minimize(lambda z: np.sum((z[:3] - z[3:]) ** 2), z0,
                       jac=lambda z: np.concatenate([2 * (z[:3] - z[3:]), -2 * (z[:3] - z[3:])]),
                       constraints=A.constraints(0) + B.constraints(3), method="SLSQP",
                       options=dict(ftol=1e-16, maxiter=2000))
        d = np.linalg.norm(res.x[:3] - res.x[3:])
        if best is None or d < best[0]:
            best = (d, res.x[:3], res.x[3:])
    return best


def fibonacci_sphere(n):
    k = np.arange(n) + 0.5
    phi = np.arccos(1 - 2 * k / n)
    theta = np.pi * (1 + 5 ** 0.5) * k
    return np.stack([np.cos(theta) * np.sin(phi), np.sin(theta) * np.sin(phi), np.cos(phi)], 1)


def min_translation(A: Ref, B: Ref, n_dirs=3000, refine=8):
    """Penetration depth estimated independently: min over unit u of H(u) = h_A(-u) + h_B(u),
    the translation along u that separates A from B (dense directions, then Nelder-Mead)."""
    U = fibonacci_sphere(n_dirs)
    H = A.h(-U) + B.h(U)

    def H_angles(x):
        u = np.array([np.cos(x[0]) * np.sin(x[1]), np.sin(x[0]) * np.sin(x[1]), np.cos(x[1])])
        return A.h(-u) + B.h(u)

    best = H.min()
    for k in np.argsort(H)[:refine]:
        u = U[k]
        x0 = np.array([np.arctan2(u[1], u[0]), np.arccos(np.clip(u[2], -1, 1))])
        res = minimize(H_angles, x0, method="Nelder-Mead",
                       options=dict(xatol=1e-12, fatol=1e-14, maxiter=4000, initial_simplex=None))
        best = min(best, res.fun)
    return best


# ---------------------------------------------------------------------------------------------
# The checks every answer must pass

def check_certificate(a, b, result, rtol=SEPARATED_RTOL):
    """Answer-independent consistency: pa in A, pb in B, pa - pb = d n, and n a direction in
    which A and B are exactly d apart (d = -H(n)); for separated pairs these sandwich d."""
    d, pa, pb, n, status = result
    A, B = Ref(a), Ref(b)
    scale = max(A.scale, B.scale)
    tol = rtol * scale if status == 0 else PENETRATION_RTOL * scale
    assert np.all(np.isfinite(pa)) and np.all(np.isfinite(pb)) and np.isfinite(d)
    assert abs(np.linalg.norm(n) - 1.0) < 1e-12
    assert np.linalg.norm(pa - pb - d * n) <= 1e-12 * scale + 1e-13 * np.abs(pa).max(), "pa - pb != d n"
    assert A.outside(pa) <= tol, f"pa outside A by {A.outside(pa):.3e}"
    assert B.outside(pb) <= tol, f"pb outside B by {B.outside(pb):.3e}"
    # pa, pb are extreme along n: n.pa = min over A, n.pb = max over B
    assert abs(n @ pa + A.h(-n)) <= tol, f"pa not extreme along -n: {n @ pa + A.h(-n):.3e}"
    assert abs(n @ pb - B.h(n)) <= tol, f"pb not extreme along n: {n @ pb - B.h(n):.3e}"
    assert abs(d + A.h(-n) + B.h(n)) <= tol, f"d != -H(n): {d + A.h(-n) + B.h(n):.3e}"


def check_penetration_minimal(a, b, result):
    d, pa, pb, n, status = result
    A, B = Ref(a), Ref(b)
    tol = PENETRATION_RTOL * max(A.scale, B.scale)
    estimate = min_translation(A, B)
    assert -d <= estimate + tol, f"depth {-d} is not minimal: H = {estimate} in some direction"


def placed_pair(rng, kind_a, kind_b, gap_factor):
    """A random pair with A's centre at gap_factor x (sum of bounding radii) from B's."""
    b = random_shape(rng, kind_b, rng.uniform(-2, 2, 3))
    a = random_shape(rng, kind_a)
    reach = Ref(a).scale + Ref(b).scale
    u = rng.normal(size=3)
    u /= np.linalg.norm(u)
    a["p"] = Ref(b).centre() + gap_factor * reach * u - (Ref(a).centre() - a["p"])
    return a, b


seeds = st.integers(0, 2 ** 32 - 1)


# ---------------------------------------------------------------------------------------------
# Support mappings

@pytest.mark.parametrize("kind", KINDS)
def test_support_point_maximises_the_closed_form_support_function(kind):
    rng = np.random.default_rng(1)
    for _ in range(20):
        s = random_shape(rng, kind, rng.uniform(-1, 1, 3))
        ref = Ref(s)
        for u in rng.normal(size=(10, 3)):
            x = gjk.support_point(s, u)
            assert abs(u @ x - ref.h(u)) <= 1e-12 * (1 + np.abs(x).max()) * np.linalg.norm(u)
            assert ref.outside(x) <= 1e-12


# ---------------------------------------------------------------------------------------------
# Separated pairs against exact references

def test_sphere_sphere_closed_form():
    rng = np.random.default_rng(2)
    for _ in range(100):
        a, b = random_shape(rng, "sphere", rng.uniform(-3, 3, 3)), random_shape(rng, "sphere", rng.uniform(-3, 3, 3))
        d, pa, pb, n, status = gjk.distance(a, b)
        c = a["p"] - b["p"]
        ref = np.linalg.norm(c) - a["size"][0] - b["size"][0]
        assert d == pytest.approx(ref, abs=1e-14 * 10)
        assert np.allclose(n, c / np.linalg.norm(c), atol=1e-14 * 10)
        assert np.allclose(pa, a["p"] - a["size"][0] * n, atol=1e-13)
        assert np.allclose(pb, b["p"] + b["size"][0] * n, atol=1e-13)
        assert status == 0


def test_sphere_box_clamping():
    rng = np.random.default_rng(3)
    for _ in range(200):
        box = random_shape(rng, "box", rng.uniform(-1, 1, 3))
        sph = random_shape(rng, "sphere", box["p"] + rng.uniform(-2.5, 2.5, 3))
        h = np.asarray(box["size"])
        q = (sph["p"] - box["p"]) @ box["R"]
        inside = np.all(np.abs(q) < h)
        d, pa, pb, n, status = gjk.distance(sph, box)
        r = sph["size"][0]
        if not inside:
            closest = box["R"] @ np.clip(q, -h, h) + box["p"]
            ref = np.linalg.norm(sph["p"] - closest) - r
            assert d == pytest.approx(ref, abs=1e-12)
            assert np.allclose(pb, closest, atol=1e-12)
        else:
            # centre inside: the nearest face, pushed out by depth r + (h_k - |q_k|)
            k = np.argmin(h - np.abs(q))
            ref = -(r + h[k] - abs(q[k]))
            assert d == pytest.approx(ref, abs=1e-12)
            assert np.allclose(n, np.sign(q[k]) * box["R"][:, k], atol=1e-12)
            assert status == 1


def test_capsule_capsule_segment_segment():
    rng = np.random.default_rng(4)
    for _ in range(200):
        a = random_shape(rng, "capsule", rng.uniform(-1.5, 1.5, 3))
        b = random_shape(rng, "capsule", rng.uniform(-1.5, 1.5, 3))
        ends = lambda c: (c["p"] - c["size"][1] * c["R"][:, 2], c["p"] + c["size"][1] * c["R"][:, 2])  # noqa: E731
        dseg, x, y = segment_segment(*[e[None] for e in ends(a) + ends(b)])
        d, pa, pb, n, status = gjk.distance(a, b)
        ref = dseg[0] - a["size"][0] - b["size"][0]
        assert d == pytest.approx(ref, abs=1e-12)
        if dseg[0] > 1e-9:
            nref = (x[0] - y[0]) / dseg[0]
            assert np.allclose(n, nref, atol=1e-10)
            assert np.allclose(pa, x[0] - a["size"][0] * nref, atol=1e-10)
            assert status == 0


def test_aligned_boxes_face_separation():
    rng = np.random.default_rng(5)
    for _ in range(100):
        ha, hb = rng.uniform(0.1, 1, 3), rng.uniform(0.1, 1, 3)
        Q = rotation(rng)       # both boxes share the axes Q
        off = np.zeros(3)
        k = rng.integers(3)
        # apart along axis k only, overlapping (in projection) along the two others
        off[k] = rng.choice([-1, 1]) * (ha[k] + hb[k] + rng.uniform(1e-6, 1.0))
        for j in {0, 1, 2} - {k}:
            off[j] = rng.uniform(-1, 1) * 0.9 * (ha[j] + hb[j])
        pb = rng.uniform(-2, 2, 3)
        a = dict(type="box", size=ha, R=Q, p=pb + Q @ off)
        b = dict(type="box", size=hb, R=Q, p=pb)
        d, pa_, pb_, n, status = gjk.distance(a, b)
        assert d == pytest.approx(abs(off[k]) - ha[k] - hb[k], abs=1e-12)
        assert np.allclose(n, np.sign(off[k]) * Q[:, k], atol=1e-12)
        assert status == 0


@pytest.mark.parametrize("kind_a,kind_b", [p for p in PAIRS if "cylinder" not in p])
@given(seed=seeds)
def test_separated_pairs_match_brute_force(kind_a, kind_b, seed):
    rng = np.random.default_rng(seed)
    a, b = placed_pair(rng, kind_a, kind_b, rng.uniform(0.6, 1.5))
    A, B = Ref(a), Ref(b)
    result = gjk.distance(a, b)
    d, pa, pb, n, status = result
    if status == 1:
        return      # the cores overlap: covered by the penetration tests
    dref, xa, xb = brute_force(A, B)
    if dref <= -A.radius - B.radius:
        return
    scale = max(A.scale, B.scale)
    assert d == pytest.approx(dref, abs=SEPARATED_RTOL * scale)
    check_certificate(a, b, result)
    # the closest points are unique for random placements (no parallel features)
    if kind_a not in ("sphere",) and kind_b not in ("sphere",) and d > 0:
        assert np.linalg.norm(pa - xa) <= 1e-6 * scale
        assert np.linalg.norm(pb - xb) <= 1e-6 * scale


@pytest.mark.parametrize("kind_a,kind_b", [p for p in PAIRS if "cylinder" in p])
@given(seed=seeds)
def test_separated_cylinder_pairs_match_slsqp(kind_a, kind_b, seed):
    rng = np.random.default_rng(seed)
    a, b = placed_pair(rng, kind_a, kind_b, rng.uniform(0.8, 1.5))
    result = gjk.distance(a, b)
    d, pa, pb, n, status = result
    if d <= 1e-3:
        return
    A, B = Ref(a), Ref(b)
    scale = max(A.scale, B.scale)
    dref, xa, xb = slsqp(A, B)
    # SLSQP stops at ~1e-8; the certificate below pins the engine's d to 1e-9 x scale
    assert d == pytest.approx(dref, abs=1e-7 * scale)
    assert d <= dref + 1e-9 * scale
    check_certificate(a, b, result)


@pytest.mark.parametrize("kind_a,kind_b", PAIRS)
@given(seed=seeds)
def test_every_answer_passes_the_support_certificate(kind_a, kind_b, seed):
    rng = np.random.default_rng(seed)
    a, b = placed_pair(rng, kind_a, kind_b, rng.uniform(0.0, 1.3))
    result = gjk.distance(a, b)
    check_certificate(a, b, result)


# ---------------------------------------------------------------------------------------------
# Penetration

@pytest.mark.parametrize("kind_a,kind_b", PAIRS)
@given(seed=seeds)
def test_penetration_depth_is_the_minimal_translation(kind_a, kind_b, seed):
    rng = np.random.default_rng(seed)
    a, b = placed_pair(rng, kind_a, kind_b, rng.uniform(0.0, 0.4))
    result = gjk.distance(a, b)
    d = result[0]
    check_certificate(a, b, result)
    if d < 0:
        check_penetration_minimal(a, b, result)
        # translating A by the returned vector leaves the two touching
        after = gjk.distance(moved(a, np.eye(3), -d * result[3]), b)
        assert abs(after[0]) <= PENETRATION_RTOL * max(Ref(a).scale, Ref(b).scale)


def test_aligned_boxes_penetration_along_the_smallest_overlap():
    rng = np.random.default_rng(6)
    for _ in range(100):
        ha, hb = rng.uniform(0.1, 1, 3), rng.uniform(0.1, 1, 3)
        Q = rotation(rng)
        off = rng.uniform(-1, 1, 3) * 0.95 * (ha + hb)
        overlap = ha + hb - np.abs(off)
        k = np.argmin(overlap)
        a = dict(type="box", size=ha, R=Q, p=Q @ off)
        b = dict(type="box", size=hb, R=Q, p=np.zeros(3))
        d, pa, pb, n, status = gjk.distance(a, b)
        assert status == 1
        assert d == pytest.approx(-overlap[k], abs=1e-9)
        assert np.allclose(n, np.sign(off[k]) * Q[:, k], atol=1e-9)


def test_sphere_sphere_and_capsule_capsule_penetration_closed_form():
    rng = np.random.default_rng(7)
    for _ in range(100):
        a = random_shape(rng, "sphere", rng.uniform(-0.3, 0.3, 3))
        b = random_shape(rng, "sphere", rng.uniform(-0.3, 0.3, 3))
        ref = np.linalg.norm(a["p"] - b["p"]) - a["size"][0] - b["size"][0]
        assert gjk.distance(a, b)[0] == pytest.approx(ref, abs=1e-12)
        a = random_shape(rng, "capsule", rng.uniform(-0.3, 0.3, 3))
        b = random_shape(rng, "capsule", rng.uniform(-0.3, 0.3, 3))
        ends = lambda c: (c["p"] - c["size"][1] * c["R"][:, 2], c["p"] + c["size"][1] * c["R"][:, 2])  # noqa: E731
        dseg = segment_segment(*[e[None] for e in ends(a) + ends(b)])[0][0]
        result = gjk.distance(a, b)
        # crossing axes (cores intersect) give depth ra + rb along the common normal
        assert result[0] == pytest.approx(dseg - a["size"][0] - b["size"][0], abs=1e-9)
        check_certificate(a, b, result)


# ---------------------------------------------------------------------------------------------
# Symmetry, invariance, determinism

@pytest.mark.parametrize("kind_a,kind_b", PAIRS)
def test_swapping_the_shapes_flips_the_normal(kind_a, kind_b):
    rng = np.random.default_rng(8)
    for gap in (1.2, 0.9, 0.6, 0.2):
        a, b = placed_pair(rng, kind_a, kind_b, gap)
        d, pa, pb, n, _ = gjk.distance(a, b)
        d2, pb2, pa2, n2, _ = gjk.distance(b, a)
        scale = max(Ref(a).scale, Ref(b).scale)
        tol = (SEPARATED_RTOL if d > 0 else PENETRATION_RTOL) * scale
        assert d2 == pytest.approx(d, abs=tol)
        # separated: the closest-point direction is unique; overlapping: several directions may
        # be (nearly) equally deep, so -n2 need only be one of them for the original order
        if d > 1e-6:
            assert np.allclose(n2, -n, atol=1e-5)
        assert abs(d + Ref(a).h(n2) + Ref(b).h(-n2)) <= tol


@pytest.mark.parametrize("kind_a,kind_b", PAIRS)
def test_rigid_motion_of_both_shapes_moves_the_answer(kind_a, kind_b):
    rng = np.random.default_rng(9)
    for gap in (1.2, 0.9, 0.5, 0.2):
        a, b = placed_pair(rng, kind_a, kind_b, gap)
        Q, t = rotation(rng), rng.uniform(-100, 100, 3)
        d, pa, pb, n, _ = gjk.distance(a, b)
        dm, pam, pbm, nm, _ = gjk.distance(moved(a, Q, t), moved(b, Q, t))
        scale = max(Ref(a).scale, Ref(b).scale)
        tol = (SEPARATED_RTOL if d > 0 else PENETRATION_RTOL) * scale + 1e-13 * 100
        assert dm == pytest.approx(d, abs=tol)
        if d > 1e-6:
            assert np.allclose(nm, Q @ n, atol=1e-5)
        assert abs(d + Ref(a).h(-Q.T @ nm) + Ref(b).h(Q.T @ nm)) <= tol
        check_certificate(moved(a, Q, t), moved(b, Q, t), (dm, pam, pbm, nm, _))


def test_same_input_gives_the_same_bits():
    rng = np.random.default_rng(10)
    for kind_a, kind_b in PAIRS:
        a, b = placed_pair(rng, kind_a, kind_b, 0.3)
        r1, r2 = gjk.distance(a, b), gjk.distance(a, b)
        assert r1[0] == r2[0] and r1[4] == r2[4]
        for x, y in zip(r1[1:4], r2[1:4]):
            assert x.tobytes() == y.tobytes()


# ---------------------------------------------------------------------------------------------
# Degenerate configurations

def box(h, p=(0, 0, 0), R=np.eye(3)):
    return dict(type="box", size=np.asarray(h, dtype=float), R=R, p=np.asarray(p, dtype=float))


def test_touching_shapes_report_zero_distance_and_the_contact_normal():
    cases = [
        (box([1, 1, 1], [0.3, -0.2, 2.0]), box([1, 1, 1]), Z),                  # face on face
        (box([1, 1, 1], [2, 2, 2]), box([1, 1, 1]), None),                        # corner on corner
        (dict(type="sphere", size=[0.5], p=[0.2, 0.1, 1.5]), box([1, 1, 1]), Z),
        (dict(type="sphere", size=[0.5], p=[0, 0, 1.0]), dict(type="sphere", size=[0.5]), Z),
        (dict(type="capsule", size=[0.2, 0.5], R=Rotation.from_rotvec([np.pi / 2, 0, 0]).as_matrix(),
              p=[0, 0, 1.2]), box([1, 1, 1]), Z),                                # lying capsule
        (dict(type="cylinder", size=[0.3, 0.4], p=[0.1, 0.2, 1.4]), box([1, 1, 1]), Z),
        (dict(type="cylinder", size=[0.3, 0.4], R=Rotation.from_rotvec([np.pi / 2, 0, 0]).as_matrix(),
              p=[0, 0, 1.3]), box([1, 1, 1]), Z),                                # lying cylinder
    ]
    for a, b, normal in cases:
        for swap in (False, True):
            x, y = (b, a) if swap else (a, b)
            d, pa, pb, n, status = gjk.distance(x, y)
            assert abs(d) <= 1e-12, (a["type"], b["type"], d)
            if normal is not None:
                assert np.allclose(n, -normal if swap else normal, atol=1e-9)
            check_certificate(x, y, (d, pa, pb, n, status))


def test_parallel_faces_and_axes():
    # box-box parallel faces: the distance is the face gap for any offset inside the faces
    for gap in (1e-9, 1e-3, 0.5):
        d, pa, pb, n, _ = gjk.distance(box([1, 1, 1], [0.5, 0.5, 2 + gap]), box([1, 1, 1]))
        assert d == pytest.approx(gap, abs=1e-13) and np.allclose(n, Z)
    # parallel capsules: axis gap minus radii
    cap = lambda p: dict(type="capsule", size=[0.1, 1.0], p=p)  # noqa: E731
    d, *_ = gjk.distance(cap([0.5, 0, 0.3]), cap([0, 0, 0]))
    assert d == pytest.approx(0.3, abs=1e-13)
    # cylinder cap on a box face, cylinder side on a box face
    cyl = dict(type="cylinder", size=[0.3, 0.4], p=[0.1, 0.2, 1.5])
    assert gjk.distance(cyl, box([1, 1, 1]))[0] == pytest.approx(0.1, abs=1e-13)
    cyl = dict(type="cylinder", size=[0.3, 0.4], R=Rotation.from_rotvec([0, np.pi / 2, 0]).as_matrix(),
               p=[0.1, 0.2, 1.5])
    assert gjk.distance(cyl, box([1, 1, 1]))[0] == pytest.approx(0.2, abs=1e-12)
    # parallel cylinders side by side: the Minkowski difference is a cylinder of radius ra + rb
    ca = dict(type="cylinder", size=[0.3, 0.4], p=[1.0, 0.5, 0.1])
    cb = dict(type="cylinder", size=[0.2, 0.6], p=[0, 0, 0])
    assert gjk.distance(ca, cb)[0] == pytest.approx(np.hypot(1.0, 0.5) - 0.5, abs=1e-12)


def test_sphere_centred_inside_a_box():
    for centre, depth in (([0, 0, 0], 0.5 + 0.4), ([0.1, 0.05, 0.2], 0.5 + 0.2)):
        d, pa, pb, n, status = gjk.distance(dict(type="sphere", size=[0.5], p=centre),
                                            box([1.0, 0.8, 0.4]))
        assert status == 1
        assert d == pytest.approx(-depth, abs=1e-12)
        assert abs(n[2]) == pytest.approx(1.0, abs=1e-12)


def test_nearly_coaxial_shapes_inside_a_cylinder():
    # every radial direction is (nearly) equally deep: EPA alone cannot resolve the best one
    rng = np.random.default_rng(15)
    for _ in range(20):
        R, H = rng.uniform(0.3, 0.8), rng.uniform(0.3, 0.8)
        Q = rotation(rng)
        cyl = dict(type="cylinder", size=[R, H], R=Q, p=rng.uniform(-1, 1, 3))
        rho, z, phi = rng.choice([0.0, 1e-6, 1e-3, 2e-2]), rng.uniform(-0.1, 0.1), rng.uniform(0, 6.3)
        offset = Q @ [rho * np.cos(phi), rho * np.sin(phi), z]
        r = rng.uniform(0.05, 0.2)
        hl = rng.uniform(0.05, 0.2)
        cases = [
            # sphere: out sideways (R - rho + r) or through a cap (H - |z| + r)
            (dict(type="sphere", size=[r], p=cyl["p"] + offset), r + min(R - rho, H - abs(z))),
            # capsule on a parallel axis: sideways, or along the axis
            (dict(type="capsule", size=[r, hl], R=Q, p=cyl["p"] + offset),
             min(R - rho + r, H + hl + r - abs(z))),
            # cylinder on a parallel axis: the Minkowski difference is a cylinder of radius R + r
            (dict(type="cylinder", size=[r, hl], R=Q, p=cyl["p"] + offset),
             min(R + r - rho, H + hl - abs(z))),
        ]
        for shape, depth in cases:
            for a, b in ((shape, cyl), (cyl, shape)):
                result = gjk.distance(a, b)
                assert result[4] == 1
                assert -result[0] == pytest.approx(depth, abs=PENETRATION_RTOL * (R + H))
                check_certificate(a, b, result)


def test_zero_length_capsule_is_a_sphere_and_zero_radius_sphere_is_a_point():
    rng = np.random.default_rng(11)
    for kind in KINDS:
        for _ in range(5):
            other = random_shape(rng, kind, rng.uniform(-1, 1, 3))
            p = rng.uniform(-2, 2, 3)
            cap = dict(type="capsule", size=[0.3, 0.0], R=rotation(rng), p=p)
            sph = dict(type="sphere", size=[0.3], p=p)
            d1, d2 = gjk.distance(cap, other), gjk.distance(sph, other)
            assert d1[0] == pytest.approx(d2[0], abs=1e-12)
            point = gjk.distance(dict(type="sphere", size=[0.0], p=p), other)
            assert point[0] == pytest.approx(d2[0] + 0.3, abs=1e-12)
            check_certificate(cap, other, d1)


@pytest.mark.parametrize("kind", KINDS)
def test_coincident_shapes(kind):
    rng = np.random.default_rng(12)
    for _ in range(5):
        s = random_shape(rng, kind, rng.uniform(-1, 1, 3))
        result = gjk.distance(s, s)
        d = result[0]
        assert result[4] == 1 and np.isfinite(d)
        check_certificate(s, s, result)
        check_penetration_minimal(s, s, result)
        size = np.atleast_1d(s.get("size", [0]))
        expected = {"sphere": 2 * size[0], "box": 2 * size.min() if kind == "box" else None,
                    "capsule": 2 * size[0], "triangle": 0.0,
                    "cylinder": 2 * min(size[0], size[1] if kind == "cylinder" else 0)}.get(kind)
        if expected is not None:
            assert -d == pytest.approx(expected, abs=1e-9)


def test_degenerate_shapes_do_not_produce_nan():
    flat_box = box([1, 1, 0])
    line_box = box([1, 0, 0])
    point_box = box([0, 0, 0])
    tri = dict(type="triangle", vertices=[[0, 0, 0], [1, 0, 0], [2, 0, 0]])   # collinear
    dup = dict(type="convex", vertices=[[0.1, 0.2, 0.3]] * 4)
    shapes = [flat_box, line_box, point_box, tri, dup, dict(type="sphere", size=[0.0]),
              dict(type="capsule", size=[0.0, 0.0]), dict(type="cylinder", size=[0.0, 0.0])]
    for a in shapes:
        for b in shapes:
            for p in ([0, 0, 0], [0.5, 0.0, 0.0], [0.3, 0.2, 1e-12], [3, 1, 2]):
                d, pa, pb, n, status = gjk.distance(moved(a, np.eye(3), np.array(p, float)) if "p" in a
                                                    else dict(a, p=p), b)
                assert np.isfinite(d) and np.all(np.isfinite(pa)) and np.all(np.isfinite(pb))
                assert abs(np.linalg.norm(n) - 1) < 1e-12


def test_coplanar_overlapping_triangles_have_zero_depth_along_their_normal():
    t1 = dict(type="triangle", vertices=[[0, 0, 0], [1, 0, 0], [0, 1, 0]])
    t2 = dict(type="triangle", vertices=[[0.2, 0.2, 0], [1.2, 0.2, 0], [0.2, 1.2, 0]])
    d, pa, pb, n, status = gjk.distance(t1, t2)
    assert abs(d) <= 1e-12 and abs(abs(n[2]) - 1) <= 1e-12


def test_sphere_centred_on_a_triangle_is_pushed_out_by_its_radius():
    tri = dict(type="triangle", vertices=[[-1, -1, 0], [1, -1, 0], [0, 1, 0]])
    d, pa, pb, n, status = gjk.distance(dict(type="sphere", size=[0.25], p=[0, 0, 0]), tri)
    assert d == pytest.approx(-0.25, abs=1e-12) and abs(abs(n[2]) - 1) <= 1e-12


# ---------------------------------------------------------------------------------------------
# max_distance

@pytest.mark.parametrize("kind_a,kind_b", PAIRS)
def test_far_pairs_stop_early_with_a_lower_bound(kind_a, kind_b):
    rng = np.random.default_rng(13)
    for _ in range(5):
        a, b = placed_pair(rng, kind_a, kind_b, 3.0)
        exact = gjk.distance(a, b)
        assert exact[4] == 0
        for max_distance in (0.0, 0.5 * exact[0], exact[0] - 1e-6):
            d, *_, status = gjk.distance(a, b, max_distance)
            if status == 2:
                assert max_distance < d <= exact[0] + 1e-12
            else:
                assert d == pytest.approx(exact[0], abs=1e-12)
        assert gjk.distance(a, b, exact[0] + 1.0)[4] == 0


@pytest.mark.parametrize("kind_a,kind_b", PAIRS)
def test_negative_max_distance_never_hides_a_deeper_overlap(kind_a, kind_b):
    rng = np.random.default_rng(16)
    for gap in (0.9, 0.6, 0.3, 0.1):
        a, b = placed_pair(rng, kind_a, kind_b, gap)
        exact = gjk.distance(a, b)
        for max_distance in (exact[0] - 0.1, exact[0] + 1e-3, -1e-3):
            d, *_, status = gjk.distance(a, b, max_distance)
            if status == 2:
                assert max_distance < d <= exact[0] + 1e-12
            else:
                assert d == pytest.approx(exact[0], abs=1e-12)


def test_iterations_are_bounded():
    rng = np.random.default_rng(14)
    for kind_a, kind_b in PAIRS:
        for gap in (1.2, 0.5, 0.0):
            a, b = placed_pair(rng, kind_a, kind_b, gap)
            assert gjk.iterations(a, b) <= 128 + 128


def test_bad_shape_descriptions_are_rejected():
    with pytest.raises(ValueError, match="type"):
        gjk.distance(dict(type="cone"), box([1, 1, 1]))
    with pytest.raises(ValueError, match="size"):
        gjk.distance(dict(type="box", size=[1, 1]), box([1, 1, 1]))
    with pytest.raises(ValueError, match=">= 0"):
        gjk.distance(dict(type="sphere", size=[-1]), box([1, 1, 1]))
    with pytest.raises(ValueError, match="rotation"):
        gjk.distance(dict(type="box", size=[1, 1, 1], R=2 * np.eye(3)), box([1, 1, 1]))
    with pytest.raises(ValueError, match="vertices"):
        gjk.distance(dict(type="convex"), box([1, 1, 1]))
    with pytest.raises(ValueError, match="NaN"):
        gjk.distance(dict(type="sphere", size=[1], p=[0, np.nan, 0]), box([1, 1, 1]))
