# Collision geometry shared by the collision modules (gjk, bvh, broadphase, contact).
#
# Shape frames (all lengths in m):
#   SPHERE       centred at the origin; size[0] = radius
#   BOX          centred at the origin; size = half extents along x, y, z
#   CAPSULE      axis z, centred; size[0] = radius, size[1] = half length of the axis segment
#   CYLINDER     axis z, centred; size[0] = radius, size[1] = half length
#   PLANE        the solid half-space z <= 0 of its frame (normal +z through the origin)
#   CONVEX       a convex polytope (MeshC hull) in its frame
#   MESH         a triangle mesh in its frame: concave, possibly open or zero-thickness
#   HEIGHTFIELD  z = h(x, y) on a regular grid in its frame, solid below
#   TRIANGLE     one triangle given by world vertices (produced while colliding meshes)
# Rotations are 3x3 row-major; R maps shape coordinates to world coordinates.

cdef enum ShapeType:
    SHAPE_SPHERE = 0
    SHAPE_BOX = 1
    SHAPE_CAPSULE = 2
    SHAPE_CYLINDER = 3
    SHAPE_PLANE = 4
    SHAPE_CONVEX = 5
    SHAPE_MESH = 6
    SHAPE_HEIGHTFIELD = 7
    SHAPE_TRIANGLE = 8


ctypedef struct BVH:
    # Axis-aligned bounding-volume hierarchy over `nitem` items (triangles of a mesh), built once
    # in the shape frame. Node 0 is the root. A node is a leaf when child[2k] < 0; its items are
    # item[first[k] : first[k] + count[k]]. item_bounds holds each item's own box so that a query
    # answers "items whose box overlaps", not "items in a leaf whose box overlaps" (bvh.pyx).
    int nnode
    const double* bounds    # [nnode*6] lo x, y, z, hi x, y, z
    const int* child        # [nnode*2] left, right child (-1, -1 for leaves)
    const int* first        # [nnode] first item slot of a leaf
    const int* count        # [nnode] item count of a leaf (0 for inner nodes)
    int nitem
    const int* item         # [nitem] item indices (triangle numbers), leaf-contiguous
    const double* item_bounds   # [nitem*6] box of item[s] for slot s, layout as bounds


ctypedef struct MeshC:
    # Vertex data of a CONVEX, MESH or HEIGHTFIELD shape, in the shape frame.
    int nvert
    const double* verts         # [nvert*3]
    int ntri
    const int* tris             # [ntri*3] vertex indices, counter-clockwise seen from outside
    # CONVEX only: the hull's faces as polygons (coplanar triangles merged), for manifolds
    int nface
    const int* face_start       # [nface+1] offsets into face_verts
    const int* face_verts       # polygon vertex indices, counter-clockwise seen from outside
    const double* face_normals  # [nface*3] outward unit normals
    # MESH and HEIGHTFIELD: hierarchy over the triangles (CONVEX: its root box bounds the hull)
    BVH bvh
    # MESH and HEIGHTFIELD: the neighbourhood of each triangle (model/geometry.py
    # triangle_features), NULL when unknown (every edge then counts as a boundary). tri_flags:
    # bit k (k = 0..2) marks edge (v_k, v_k+1) flat (the surface continues in the triangle's
    # plane across it), bit 3 + k vertex k flat (every edge at it flat), bit 6 a degenerate
    # triangle (near-zero area: no reliable normal; its neighbours cover its place).
    # tri_adjacent[3 t + k]: the vertex of the neighbour across edge k opposite that edge,
    # -1 on a boundary, -2 for a non-manifold edge or a degenerate neighbour. With it the
    # narrow phase tells convex edges (which carry contacts of their own) from flat and concave
    # ones (covered by the faces beside them), seen from the side a body is on.
    const unsigned char* tri_flags
    const int* tri_adjacent
    # HEIGHTFIELD only: h(x0 + i dx, y0 + j dy) = heights[j * nx + i]; the cell (i, j) splits
    # into triangles 2 (j (nx-1) + i) and 2 (j (nx-1) + i) + 1, which are also stored in tris
    int nx
    int ny
    double x0
    double y0
    double dx
    double dy
    const double* heights


ctypedef struct ConvexC:
    # A convex set placed in the world: the input of GJK / EPA.
    int type                # SPHERE, BOX, CAPSULE, CYLINDER, CONVEX or TRIANGLE
    double size[3]          # as for the shape type
    double R[9]             # shape axes in the world (identity for TRIANGLE)
    double p[3]             # shape origin in the world (zero for TRIANGLE)
    const MeshC* mesh       # CONVEX: the polytope
    double tri[9]           # TRIANGLE: the three world vertices


ctypedef struct RawContact:
    # one contact point between two shapes (narrowphase), before clustering
    double pa[3]          # point on the surface of A, world
    double pb[3]          # point on the surface of B, world
    double normal[3]      # unit, from B towards A
    double distance       # signed separation of the real surfaces along normal [m]


ctypedef struct DistanceResult:
    double distance         # > 0: separation; < 0: -(penetration depth); [m]
    double pa[3]            # closest point on A (deepest point of A inside B when overlapping)
    double pb[3]            # closest point on B (deepest point of B inside A when overlapping)
    double normal[3]        # unit vector from B towards A (the direction that separates A)
    int iterations
