"""GradBench's ht eval (ADBench's hand tracking) in PyTorch, written for this project from the
eval's definition (GradBench's cpp/gradbench/evals/ht.hpp): the comparison peer of Cotangent's
examples/gradbench/ht.cot, with the interface of the classes in torch_evals.py.

The model: theta (26) is a global rotation (angle-axis, 0..2), a global translation (3..5) and
20 finger angles (6..25). Each of the 22 bones' relative transform is its base relative
transform times the rotation Rz(tz) Ry(ty) Rx(tx) of its Euler angles (ADBench's pose
parameters: per finger, the first bone is fixed, the second takes (tx, tz), the third and fourth
tx; the wrist and the forearm are fixed). The absolute transforms go down the bone tree; each
vertex is the blend, by its skinning weights, of the bones' transforms (absolute times inverse
base absolute) applied to its base position; then the mirror image in x for a left hand, then
the global rotation and translation. The residuals are point minus vertex (the simple variant,
`us` empty) or point minus the point with barycentric coordinates (u0, u1, 1 - u0 - u1) of the
corresponding triangle (the complicated variant).

How it is computed (all of it in the timed call, only index tables and tensors made from the
JSON in `prepare`):
- the bones are taken a level of the tree at a time (5 levels for the hand), so the absolute
  transforms are 4 batched matrix products rather than 21 single ones;
- only the vertices the residuals use are skinned, each once (the points' triangles' corners,
  or the points' vertices; the other vertices of the 10,000-vertex mesh do not affect the
  result), as one matrix product: the vertex-bone weights times the base positions [u, 22·4]
  by the bones' transforms [22·4, 3];
- the global transform is applied after the barycentric blend (it is affine and the three
  coordinates sum to 1);
- the Jacobian is forward mode (functorch.jacfwd: a vmap of jvp, 28 tangents in one batch) of the
  residuals in theta and in a shift du (2) added to every point's (u0, u1): each residual depends
  on its own point's coordinates only, so the derivative in du at 0 is the Jacobian's two us
  columns, compressed. Columns as GradBench's tools lay them out: d/du0, d/du1 (complicated
  only), then theta's 26.
"""
import functorch
import torch

F64 = torch.float64
N_BONES = 22  # the layout of theta is ADBench's hand skeleton's


def pose_indices(n_bones):
    """Where each bone's Euler angles (tx, tz, ty) come from in the finger angles theta[6:], as
    ADBench's to_pose_params lays the pose parameters out (3 rows, one column per bone after
    the global rotation, scale and translation): an index into theta[6:], or 20 for a zero."""
    zero = 20
    cols = [[zero] * 3 for _ in range(n_bones + 3)]
    i_finger, col = 0, 5
    for _finger in range(5):
        for joint in range(2, 5):
            cols[col][0] = i_finger
            i_finger += 1
            if joint == 2:
                cols[col][1] = i_finger
                i_finger += 1
            col += 1
        col += 1
    return [cols[b + 3] for b in range(n_bones)]


# The elementary rotation about axis a by angle t is E[a] + cos t · C[a] + sin t · S[a]; the
# axes in the order of the angles: x, z, y.
def _elementary_masks():
    E = torch.zeros(3, 3, 3, dtype=F64)
    C = torch.zeros(3, 3, 3, dtype=F64)
    S = torch.zeros(3, 3, 3, dtype=F64)
    for a, axis in enumerate((0, 2, 1)):
        i, j = [k for k in range(3) if k != axis]  # the plane the rotation turns
        E[a, axis, axis] = 1
        C[a, i, i] = C[a, j, j] = 1
        S[a, j, i] = 1
        S[a, i, j] = -1
    # About y the plane is (x, z) and the sign is the other way: Ry = [[c, 0, s], [0, 1, 0],
    # [-s, 0, c]].
    S[2] = -S[2]
    return E, C, S


class Ht:
    def prepare(self, inp):
        d = inp["data"]
        m = d["model"]
        parents = m["parents"]
        nb = len(parents)
        assert nb == N_BONES, "theta's layout is ADBench's 22-bone hand"
        # Bones by depth in the tree (parents before children), so that each level is one
        # batched product with its parents' absolute transforms.
        depth = []
        for b, p in enumerate(parents):
            depth.append(0 if p < 0 else depth[p] + 1)
        order = sorted(range(nb), key=lambda b: depth[b])
        pos = {b: i for i, b in enumerate(order)}
        levels = []
        for lv in range(max(depth) + 1):
            bones = [b for b in order if depth[b] == lv]
            start = pos[bones[0]]
            levels.append((start, start + len(bones),
                           None if lv == 0 else torch.tensor([pos[parents[b]] for b in bones])))
        assert levels[0][2] is None and all(parents[b] < 0 for b in order[:levels[0][1]])

        angles = pose_indices(nb)
        complicated = len(inp["us"]) > 0
        corr = torch.tensor(d["correspondences"])
        # The vertices the residuals use: each point's triangle's three, or its own vertex.
        verts = torch.tensor(m["triangles"])[corr] if complicated else corr
        # Each used vertex once (points share triangles and triangles share vertices), and where
        # each point's vertices are among them.
        verts, where = torch.unique(verts.reshape(-1), return_inverse=True)
        E, C, S = _elementary_masks()
        return {
            "theta": torch.tensor(inp["theta"], dtype=F64),
            "us": torch.tensor(inp["us"], dtype=F64).reshape(-1, 2),
            "points": torch.tensor(d["points"], dtype=F64),
            "complicated": complicated,
            "verts": verts,
            "where": where,
            "angle_idx": torch.tensor([angles[b] for b in order]),
            "levels": levels,
            "base_relatives": torch.tensor(m["base_relatives"], dtype=F64)[order],
            "inverse_base_absolutes":
                torch.tensor(m["inverse_base_absolutes"], dtype=F64)[order],
            "base_positions": torch.tensor(m["base_positions"], dtype=F64),
            "weights": torch.tensor(m["weights"], dtype=F64)[:, order],
            "mirror": torch.tensor([-1.0, 1.0, 1.0], dtype=F64) if m["is_mirrored"] else None,
            "E": E, "C": C, "S": S,
        }

    @staticmethod
    def angle_axis(r, small):
        """Rodrigues' rotation matrix of the angle-axis r; the identity when |r| < 1e-4 (as
        ADBench; `small` is decided on the primal value, outside the differentiation)."""
        if small:
            return torch.eye(3, dtype=F64)
        angle = torch.sqrt((r * r).sum())
        k = r / angle
        c, s = torch.cos(angle), torch.sin(angle)
        z = torch.zeros((), dtype=F64)
        K = torch.stack((z, -k[2], k[1], k[2], z, -k[0], -k[1], k[0], z)).reshape(3, 3)
        return c * torch.eye(3, dtype=F64) + (1 - c) * torch.outer(k, k) + s * K

    @staticmethod
    def skinned(s, fingers):
        """The used vertices [u, 3] skinned for the finger angles (20), before the global
        rotation and translation."""
        nb = s["angle_idx"].shape[0]
        # Each bone's Euler rotation Rz Ry Rx, its relative and absolute transforms.
        a = torch.cat((fingers, fingers.new_zeros(1)))[s["angle_idx"]]          # nb, 3
        M = (s["E"] + torch.cos(a)[:, :, None, None] * s["C"]
             + torch.sin(a)[:, :, None, None] * s["S"])                          # nb, 3, 3, 3
        R = M[:, 1] @ M[:, 2] @ M[:, 0]
        base = s["base_relatives"]
        rel = torch.cat((base[:, :, :3] @ R, base[:, :, 3:]), 2)                # nb, 4, 4
        absolute = rel[:s["levels"][0][1]]
        for start, end, par in s["levels"][1:]:
            absolute = torch.cat((absolute, absolute.index_select(0, par) @ rel[start:end]))
        T = (absolute @ s["inverse_base_absolutes"])[:, :3]                     # nb, 3, 4
        if s["mirror"] is not None:
            T = T * s["mirror"][:, None]
        # Linear blend skinning: the sum over bones b and k of weight[v, b] · position[v, k] ·
        # T[b, r, k], one matrix product.
        v = s["verts"]
        wp = (s["weights"][v][:, :, None] * s["base_positions"][v][:, None, :]).reshape(
            v.shape[0], nb * 4)
        return wp @ T.transpose(1, 2).reshape(nb * 4, 3)

    def posed_residuals(self, s, skinned, pose, us, small):
        """The residuals [npts, 3] of the skinned vertices [u, 3] for the global pose (6) and
        the barycentric coordinates us [npts, 2] (or [0, 2])."""
        x = skinned.index_select(0, s["where"])
        if s["complicated"]:
            p = x.reshape(-1, 3, 3)                                             # npts, vertex, 3
            p2 = p[:, 2]
            x = p2 + us[:, :1] * (p[:, 0] - p2) + us[:, 1:] * (p[:, 1] - p2)
        Rg = self.angle_axis(pose[:3], small)
        return s["points"] - (x @ Rg.T + pose[3:6])

    def residuals(self, s, theta, us, small):
        return self.posed_residuals(s, self.skinned(s, theta[6:]), theta[:6], us, small)

    @staticmethod
    def small_rotation(theta):
        return bool((theta[:3] * theta[:3]).sum().sqrt() < 1e-4)

    def objective(self, s):
        with torch.no_grad():
            th = s["theta"]
            return self.residuals(s, th, s["us"], self.small_rotation(th)).reshape(-1)

    def jacobian(self, s):
        th, us = s["theta"], s["us"]
        small = self.small_rotation(th)
        n = s["points"].shape[0]
        if not s["complicated"]:
            J = functorch.jacfwd(lambda t: self.residuals(s, t, us, small))(th)
            return J.reshape(3 * n, th.shape[0])
        Jt, Ju = functorch.jacfwd(lambda t, du: self.residuals(s, t, us + du, small),
                                  argnums=(0, 1))(th, torch.zeros(2, dtype=F64))
        return torch.cat((Ju, Jt), 2).reshape(3 * n, 2 + th.shape[0])

    def output(self, fn, r):
        return r.tolist()
