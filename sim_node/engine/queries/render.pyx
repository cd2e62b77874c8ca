"""Z-buffer rasterization of a triangle scene into RGB, depth and segmentation images.

    (instance-local triangles, camera-from-instance poses, intrinsics) => (rgb, z-depth, segment)

The scene is a set of rigid instances (a robot link's visuals, a rigid object, a terrain), each
a set of triangles in its own frame; only the instance poses change per frame. A frame runs
two passes, each spread over threads with the GIL released:

1. per triangle: its corners to the camera's optical frame (z forward, x right, y down); clip
   against the near plane z = near (a triangle crossing it keeps its far part: one or two
   triangles); flat Lambert shade c (ambient + diffuse max(0, n.l)) with the normal
   turned towards the camera (meshes are drawn two-sided: their winding is not trusted),
   project u = fx x/z + cx, v = fy y/z + cy;
2. per band of image rows: clear the band; every triangle overlapping it is scanned row by row
   over the span its three edges allow; a pixel centre (i + 0.5, j + 0.5) is covered when all
   three edge functions are > 0, or = 0 on a top or left edge (the top-left rule: a pixel on an
   edge shared by two triangles is drawn once). 1/z is affine in screen space, so it is interpolated
   linearly (perspective-correct depth) and the nearest surface wins (largest 1/z, within
   [near, far]); the winner's triangle is recorded and its colour and segment written at the
   end of the band, so overdraw costs one store.

The threads are a pool of Python threads running the nogil kernels, not OpenMP: OpenMP's
workers spin at their barriers, and on a machine whose cores are busy (the physics thread
beside a camera worker) a spinning thread that waits for a descheduled one burns the core the
physics needs (measured: 2 OpenMP threads rendered 4x slower than 1 under load). Pool threads
sleep while they wait.

Depth is the z coordinate in the optical frame [m] (float32), +inf where no surface lies within
[near, far].
"""
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from sim_node.engine.batched import default_threads

cimport numpy as cnp
from libc.math cimport ceil, floor, INFINITY, isfinite, sqrt
from libc.stdlib cimport free, malloc

cnp.import_array()

_pool = None
_pool_lock = threading.Lock()


def _workers(int n):
    """The shared pool, grown to at least n - 1 threads (the caller is the n-th)."""
    global _pool
    with _pool_lock:
        if _pool is None or _pool._max_workers < n - 1:
            old, _pool = _pool, ThreadPoolExecutor(max_workers=max(n - 1, 1),
                                                   thread_name_prefix="sim_node-render")
            if old is not None:
                old.shutdown(wait=False)
        return _pool


cdef inline double _clamp(double x, double lo, double hi) noexcept nogil:
    return lo if x < lo else (hi if x > hi else x)


cdef inline void _empty(ScreenTriangle* s) noexcept nogil:
    s.y_lo = 1
    s.y_hi = 0


cdef void _emit(const double* a, const double* b, const double* c, const unsigned char* rgb,
                int segment, double fx, double fy, double cx, double cy, int width, int height,
                ScreenTriangle* s) noexcept nogil:
    """Project one camera-frame triangle with every corner at z >= near into slot s."""
    cdef const double* corner[3]
    cdef double w[3]
    cdef double area, minx, maxx, miny, maxy, dx, dy, t
    cdef int k, k1
    corner[0] = a
    corner[1] = b
    corner[2] = c
    for k in range(3):
        w[k] = 1.0 / corner[k][2]
        s.x[k] = fx * corner[k][0] * w[k] + cx
        s.y[k] = fy * corner[k][1] * w[k] + cy
    # twice the signed area; corners ordered so that it is positive (edge functions >= 0 inside)
    area = (s.x[1] - s.x[0]) * (s.y[2] - s.y[0]) - (s.y[1] - s.y[0]) * (s.x[2] - s.x[0])
    if not (area != 0.0 and isfinite(area)):
        _empty(s)
        return
    if area < 0.0:
        area = -area
        t = s.x[1]; s.x[1] = s.x[2]; s.x[2] = t
        t = s.y[1]; s.y[1] = s.y[2]; s.y[2] = t
        t = w[1]; w[1] = w[2]; w[2] = t
    s.w0 = w[0]
    s.wx = ((w[1] - w[0]) * (s.y[2] - s.y[0]) - (w[2] - w[0]) * (s.y[1] - s.y[0])) / area
    s.wy = ((w[2] - w[0]) * (s.x[1] - s.x[0]) - (w[1] - w[0]) * (s.x[2] - s.x[0])) / area
    minx = maxx = s.x[0]
    miny = maxy = s.y[0]
    for k in range(1, 3):
        minx = min(minx, s.x[k]); maxx = max(maxx, s.x[k])
        miny = min(miny, s.y[k]); maxy = max(maxy, s.y[k])
    # pixel i's centre i + 0.5 within [min, max]; clamped in double before the int cast
    s.x_lo = <int>_clamp(ceil(minx - 0.5), 0.0, width)
    s.x_hi = <int>_clamp(floor(maxx - 0.5), -1.0, width - 1.0)
    s.y_lo = <int>_clamp(ceil(miny - 0.5), 0.0, height)
    s.y_hi = <int>_clamp(floor(maxy - 0.5), -1.0, height - 1.0)
    if s.x_lo > s.x_hi:
        _empty(s)
        return
    for k in range(3):
        k1 = (k + 1) % 3
        dx = s.x[k1] - s.x[k]
        dy = s.y[k1] - s.y[k]
        # image y points down and the corners run clockwise on screen: top edges run along +x,
        # left edges upwards
        s.top_left[k] = 1 if (dy < 0.0 or (dy == 0.0 and dx > 0.0)) else 0
        s.dx[k] = dx
        s.dy[k] = dy
    s.rgb[0] = rgb[0]
    s.rgb[1] = rgb[1]
    s.rgb[2] = rgb[2]
    s.segment = segment


cdef void _setup_triangle(const double* a, const double* b, const double* c,
                          const float* color, int segment, double near, double far,
                          const double* light, double ambient, double diffuse,
                          double fx, double fy, double cx, double cy, int width, int height,
                          ScreenTriangle* out) noexcept nogil:
    """Shade, clip at z = near and project one camera-frame triangle into slots out[0], out[1]."""
    cdef double e1[3]
    cdef double e2[3]
    cdef double n[3]
    cdef double poly[4][3]
    cdef const double* corner[3]
    cdef unsigned char rgb[3]
    cdef double norm, lambert, shade, v, t
    cdef int k, j, m = 0, inside_a, inside_b
    _empty(&out[0])
    _empty(&out[1])
    if a[2] < near and b[2] < near and c[2] < near:
        return
    if a[2] > far and b[2] > far and c[2] > far:
        return
    for k in range(3):
        e1[k] = b[k] - a[k]
        e2[k] = c[k] - a[k]
    n[0] = e1[1] * e2[2] - e1[2] * e2[1]
    n[1] = e1[2] * e2[0] - e1[0] * e2[2]
    n[2] = e1[0] * e2[1] - e1[1] * e2[0]
    norm = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2])
    if not (norm > 0.0):
        return
    # towards the camera (the camera sits at the origin; a is a ray to the surface)
    if n[0] * a[0] + n[1] * a[1] + n[2] * a[2] > 0.0:
        norm = -norm
    lambert = (n[0] * light[0] + n[1] * light[1] + n[2] * light[2]) / norm
    shade = ambient + diffuse * (lambert if lambert > 0.0 else 0.0)
    for k in range(3):
        v = color[k] * shade * 255.0 + 0.5
        rgb[k] = <unsigned char>_clamp(v, 0.0, 255.0)
    corner[0] = a
    corner[1] = b
    corner[2] = c
    if a[2] >= near and b[2] >= near and c[2] >= near:
        _emit(a, b, c, rgb, segment, fx, fy, cx, cy, width, height, &out[0])
        return
    # Sutherland-Hodgman against z >= near: 3 or 4 corners, every new one exactly at z = near
    for k in range(3):
        inside_a = corner[k][2] >= near
        inside_b = corner[(k + 1) % 3][2] >= near
        if inside_a:
            for j in range(3):
                poly[m][j] = corner[k][j]
            m += 1
        if inside_a != inside_b:
            t = (near - corner[k][2]) / (corner[(k + 1) % 3][2] - corner[k][2])
            for j in range(3):
                poly[m][j] = corner[k][j] + t * (corner[(k + 1) % 3][j] - corner[k][j])
            poly[m][2] = near
            m += 1
    if m >= 3:
        _emit(poly[0], poly[1], poly[2], rgb, segment, fx, fy, cx, cy, width, height, &out[0])
    if m == 4:
        _emit(poly[0], poly[2], poly[3], rgb, segment, fx, fy, cx, cy, width, height, &out[1])


cdef inline bint _covers(const ScreenTriangle* s, int k, double e_row, double px) noexcept nogil:
    """Pixel centre px (on the row whose edge term is e_row) on the inner side of edge k."""
    cdef double e = e_row - s.dy[k] * (px - s.x[k])
    return e > 0.0 or (e == 0.0 and s.top_left[k])


cdef void _raster_band(const ScreenTriangle* screen, Py_ssize_t nslot, int row_lo, int row_hi,
                       int width, double inv_far, double* invz, int* winner) noexcept nogil:
    """Depth-test every slot's pixels in image rows [row_lo, row_hi)."""
    cdef Py_ssize_t t
    cdef const ScreenTriangle* s
    cdef int row, col, c_lo, c_hi, k, y0, y1
    cdef double py, e_row, w, dw, bound
    for t in range(nslot):
        s = &screen[t]
        y0 = s.y_lo if s.y_lo > row_lo else row_lo
        y1 = s.y_hi if s.y_hi < row_hi - 1 else row_hi - 1
        for row in range(y0, y1 + 1):
            py = row + 0.5
            c_lo = s.x_lo
            c_hi = s.x_hi
            # each edge bounds the row's span on one side (coverage is monotonic along the row):
            # start from the column its line crosses and step to the exact boundary
            for k in range(3):
                e_row = s.dx[k] * (py - s.y[k])
                if s.dy[k] == 0.0:
                    if not (e_row > 0.0 or (e_row == 0.0 and s.top_left[k])):
                        c_hi = c_lo - 1
                    continue
                bound = floor(s.x[k] + e_row / s.dy[k] - 0.5)
                if s.dy[k] > 0.0:           # covered left of the line: bounds c_hi
                    col = <int>_clamp(bound, c_lo - 1.0, c_hi)
                    while col >= c_lo and not _covers(s, k, e_row, col + 0.5):
                        col -= 1
                    while col + 1 <= c_hi and _covers(s, k, e_row, col + 1.5):
                        col += 1
                    c_hi = col
                else:                       # covered right of the line: bounds c_lo
                    col = <int>_clamp(bound + 1.0, c_lo, c_hi + 1.0)
                    while col <= c_hi and not _covers(s, k, e_row, col + 0.5):
                        col += 1
                    while col - 1 >= c_lo and _covers(s, k, e_row, col - 0.5):
                        col -= 1
                    c_lo = col
                if c_lo > c_hi:
                    break
            if c_lo > c_hi:
                continue
            w = s.w0 + s.wx * (c_lo + 0.5 - s.x[0]) + s.wy * (py - s.y[0])
            dw = s.wx
            for col in range(c_lo, c_hi + 1):
                if w > invz[row * width + col] and w >= inv_far:
                    invz[row * width + col] = w
                    winner[row * width + col] = <int>t
                w += dw


ctypedef struct Frame:
    # one frame's inputs and outputs, for the pass functions (render() fills it)
    const double* vertices          # (V, 3) instance frame
    const int* triangles            # (T, 3)
    const int* triangle_instance    # (T,)
    const float* colors             # (T, 3)
    const double* pose              # (I, 3, 4) camera <- instance
    const int* segment              # (I,)
    double fx, fy, cx, cy, near, far
    double light[3]
    double ambient, diffuse
    unsigned char background[3]
    int width, height
    ScreenTriangle* screen          # (2T,)
    Py_ssize_t nslot
    double* invz                    # (H, W) scratch
    int* winner                     # (H, W) scratch
    float* depth                    # (H, W) or NULL
    unsigned char* rgb              # (H, W, 3) or NULL
    int* segmentation               # (H, W) or NULL


cdef void _setup_pass(const Frame* f, Py_ssize_t lo, Py_ssize_t hi) noexcept nogil:
    """Triangles [lo, hi): corners to the optical frame, then shade, clip, project."""
    cdef Py_ssize_t t
    cdef int k, j, c
    cdef const double* P
    cdef const double* src
    cdef double corner[3][3]
    for t in range(lo, hi):
        P = &f.pose[12 * f.triangle_instance[t]]
        for c in range(3):
            src = &f.vertices[3 * f.triangles[3 * t + c]]
            for k in range(3):
                corner[c][k] = (P[4 * k] * src[0] + P[4 * k + 1] * src[1]
                                + P[4 * k + 2] * src[2] + P[4 * k + 3])
        _setup_triangle(corner[0], corner[1], corner[2], &f.colors[3 * t],
                        f.segment[f.triangle_instance[t]], f.near, f.far, f.light, f.ambient,
                        f.diffuse, f.fx, f.fy, f.cx, f.cy, f.width, f.height, &f.screen[2 * t])


cdef void _band_pass(const Frame* f, int row_lo, int row_hi) noexcept nogil:
    """Image rows [row_lo, row_hi): clear, rasterize every slot, write the outputs."""
    cdef Py_ssize_t p, p_lo = <Py_ssize_t>row_lo * f.width, p_hi = <Py_ssize_t>row_hi * f.width
    cdef int w
    cdef const ScreenTriangle* s
    for p in range(p_lo, p_hi):
        f.invz[p] = 0.0
        f.winner[p] = -1
    _raster_band(f.screen, f.nslot, row_lo, row_hi, f.width, 1.0 / f.far, f.invz, f.winner)
    for p in range(p_lo, p_hi):
        w = f.winner[p]
        if w >= 0:
            s = &f.screen[w]
            if f.depth != NULL:
                f.depth[p] = <float>(1.0 / f.invz[p])
            if f.rgb != NULL:
                f.rgb[3 * p] = s.rgb[0]
                f.rgb[3 * p + 1] = s.rgb[1]
                f.rgb[3 * p + 2] = s.rgb[2]
            if f.segmentation != NULL:
                f.segmentation[p] = s.segment
        else:
            if f.depth != NULL:
                f.depth[p] = INFINITY
            if f.rgb != NULL:
                f.rgb[3 * p] = f.background[0]
                f.rgb[3 * p + 1] = f.background[1]
                f.rgb[3 * p + 2] = f.background[2]
            if f.segmentation != NULL:
                f.segmentation[p] = -1


cdef class Rasterizer:
    """A triangle scene built once; render() draws it for any instance poses and intrinsics.

    vertices (V, 3) float64 [m] in their instance's frame; vertex_instance (V,) int32;
    triangles (T, 3) int32 vertex indices; triangle_instance (T,) int32 (the instance of the
    triangle's vertices); colors (T, 3) float32 base colour in [0, 1]; ninstance: I.
    A Rasterizer keeps scratch between frames, so one render() runs at a time per object (the
    caller serialises; sim_node.sim.camera holds a lock per render model)."""
    cdef readonly int nvertex, ntriangle, ninstance
    cdef double[:, ::1] vertices
    cdef int[:, ::1] triangles
    cdef int[::1] triangle_instance
    cdef float[:, ::1] colors
    cdef ScreenTriangle* screen
    cdef Frame frame
    cdef object invz, winner, keep

    def __cinit__(self):
        self.screen = NULL

    def __init__(self, vertices, vertex_instance, triangles, triangle_instance, colors,
                 int ninstance):
        vertices = np.ascontiguousarray(vertices, dtype=np.float64).reshape(-1, 3)
        vertex_instance = np.ascontiguousarray(vertex_instance, dtype=np.int32).reshape(-1)
        triangles = np.ascontiguousarray(triangles, dtype=np.int32).reshape(-1, 3)
        triangle_instance = np.ascontiguousarray(triangle_instance, dtype=np.int32).reshape(-1)
        colors = np.ascontiguousarray(colors, dtype=np.float32).reshape(-1, 3)
        nv, nt = len(vertices), len(triangles)
        if len(vertex_instance) != nv or len(triangle_instance) != nt or len(colors) != nt:
            raise ValueError("Rasterizer: vertex_instance (V,), triangle_instance (T,) and "
                             "colors (T, 3) must match vertices (V, 3) and triangles (T, 3)")
        if nt and (triangles.min() < 0 or triangles.max() >= nv):
            raise ValueError(f"Rasterizer: triangle indices must lie in [0, {nv})")
        if nv and (vertex_instance.min() < 0 or vertex_instance.max() >= ninstance):
            raise ValueError(f"Rasterizer: vertex instances must lie in [0, {ninstance})")
        if nt and not np.array_equal(vertex_instance[triangles],
                                     np.repeat(triangle_instance[:, None], 3, axis=1)):
            raise ValueError("Rasterizer: a triangle's vertices must belong to its instance")
        if not np.all(np.isfinite(vertices)):
            raise ValueError("Rasterizer: vertices must be finite")
        self.nvertex, self.ntriangle, self.ninstance = nv, nt, ninstance
        self.vertices = vertices
        self.triangles = triangles
        self.triangle_instance = triangle_instance
        self.colors = colors
        self.screen = <ScreenTriangle*>malloc(max(2 * nt, 1) * sizeof(ScreenTriangle))
        if self.screen == NULL:
            raise MemoryError(f"Rasterizer: no memory for {nt} triangles")
        self.invz = None
        self.winner = None

    def __dealloc__(self):
        free(self.screen)

    def render(self, pose, segment, double fx, double fy, double cx, double cy, double near,
               double far, light, double ambient, double diffuse, background, depth=None,
               rgb=None, segmentation=None, threads=None):
        """Draw the scene.

        pose (I, 3, 4) float64: [R | t] of each instance in the camera's optical frame (x right,
        y down, z forward); segment (I,) int32: the value each instance writes into
        `segmentation`; fx, fy, cx, cy: intrinsics [pixels] (pixel (i, j) centred at
        (i + 0.5, j + 0.5)); near < far [m]; light (3,): unit direction towards the light in
        the optical frame; ambient, diffuse: shade = ambient + diffuse max(0, n.l);
        background (3,) uint8. Outputs, each optional and all of one (H, W): depth float32
        [m] (+inf: nothing in [near, far]), rgb (H, W, 3) uint8, segmentation int32 (-1:
        background). threads: None = every core. The images do not depend on the thread
        count. Inputs are trusted (the Camera validates)."""
        cdef double[:, :, ::1] P = pose
        cdef int[::1] seg_of = segment
        cdef double[::1] L = np.ascontiguousarray(light, dtype=np.float64)
        cdef unsigned char[::1] bg = np.ascontiguousarray(background, dtype=np.uint8)
        cdef float[:, ::1] d_view
        cdef unsigned char[:, :, ::1] c_view
        cdef int[:, ::1] s_view
        cdef Frame* f = &self.frame
        cdef int k, height, width
        height, width = next(a.shape[:2] for a in (depth, rgb, segmentation) if a is not None)
        if self.invz is None or self.invz.shape != (height, width):
            self.invz = np.empty((height, width))
            self.winner = np.empty((height, width), dtype=np.int32)
        cdef double[:, ::1] invz_view = self.invz
        cdef int[:, ::1] winner_view = self.winner
        f.depth = NULL
        f.rgb = NULL
        f.segmentation = NULL
        if depth is not None:
            d_view = depth
            f.depth = &d_view[0, 0]
        if rgb is not None:
            c_view = rgb
            f.rgb = &c_view[0, 0, 0]
        if segmentation is not None:
            s_view = segmentation
            f.segmentation = &s_view[0, 0]
        f.vertices = &self.vertices[0, 0] if self.nvertex else NULL
        f.triangles = &self.triangles[0, 0] if self.ntriangle else NULL
        f.triangle_instance = &self.triangle_instance[0] if self.ntriangle else NULL
        f.colors = &self.colors[0, 0] if self.ntriangle else NULL
        f.pose = &P[0, 0, 0]
        f.segment = &seg_of[0]
        f.fx, f.fy, f.cx, f.cy, f.near, f.far = fx, fy, cx, cy, near, far
        for k in range(3):
            f.light[k] = L[k]
            f.background[k] = bg[k]
        f.ambient, f.diffuse = ambient, diffuse
        f.width, f.height = width, height
        f.screen = self.screen
        f.nslot = 2 * self.ntriangle
        f.invz = &invz_view[0, 0]
        f.winner = &winner_view[0, 0]
        # the buffers stay referenced (and their pointers valid) while the passes run
        self.keep = (pose, segment, depth, rgb, segmentation)
        cdef int n = threads or default_threads()
        if n == 1:
            with nogil:
                _setup_pass(f, 0, self.ntriangle)
                _band_pass(f, 0, height)
        else:
            # triangles in n even ranges; rows in 4n bands (their costs differ: the ground
            # fills some, nothing others), each pass finished before the next starts
            ranges = [(self.ntriangle * i // n, self.ntriangle * (i + 1) // n) for i in range(n)]
            self._run(n, self._setup_range, ranges)
            nband = min(4 * n, height)
            self._run(n, self._band_range, [(height * i // nband, height * (i + 1) // nband)
                                            for i in range(nband)])
        self.keep = None

    def _run(self, int n, work, ranges):
        futures = [_workers(n).submit(work, lo, hi) for lo, hi in ranges[1:]]
        work(*ranges[0])
        for future in futures:
            future.result()

    def _setup_range(self, Py_ssize_t lo, Py_ssize_t hi):
        with nogil:
            _setup_pass(&self.frame, lo, hi)

    def _band_range(self, int lo, int hi):
        with nogil:
            _band_pass(&self.frame, lo, hi)
