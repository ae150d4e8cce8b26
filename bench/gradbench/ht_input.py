"""GradBench's ht inputs from ADBench's hand files (ht/ in workloads.DATA): the model
folder (bones.txt: name, parent, the relative and the inverse absolute transform, 16 values
each; vertices.txt: position, then the count and (bone, weight) pairs of its skinning weights;
triangles.txt) and hand{i}_t26_c{npts}.txt (npts and the 26 parameters' count, a
correspondence and a point per line, in the complicated variant a (u, v) per point, then
theta), as the JSON the ht eval sends.
"""
import os


def read_model(folder):
    def rows(name):
        with open(os.path.join(folder, name)) as f:
            return [line.rstrip("\n").split(":") for line in f if line.strip()]

    bones = rows("bones.txt")
    names = [b[0] for b in bones]
    mat = lambda vals: [[float(v) for v in vals[4 * r:4 * r + 4]] for r in range(4)]
    positions, weights = [], []
    for v in rows("vertices.txt"):
        positions.append([float(x) for x in v[:3]] + [1.0])
        w = [0.0] * len(bones)
        for i in range(int(v[8])):
            w[int(v[9 + 2 * i])] = float(v[10 + 2 * i])
        weights.append(w)
    return {
        "bone_count": len(bones),
        "bone_names": names,
        "parents": [int(b[1]) for b in bones],
        "base_relatives": [mat(b[2:18]) for b in bones],
        "inverse_base_absolutes": [mat(b[18:34]) for b in bones],
        "base_positions": positions,
        "weights": weights,
        "triangles": [[int(x) for x in t] for t in rows("triangles.txt")],
        "is_mirrored": False,
    }


def read_hand(path, model, complicated):
    with open(path) as f:
        lines = [line.split() for line in f if line.strip()]
    npts, ntheta = int(lines[0][0]), int(lines[0][1])
    pts = lines[1:1 + npts]
    rest = lines[1 + npts:]
    us = [[float(x) for x in u] for u in rest[:npts]] if complicated else []
    theta = [float(t[0]) for t in rest[npts if complicated else 0:][:ntheta]]
    return {"theta": theta, "us": us,
            "data": {"correspondences": [int(p[0]) for p in pts],
                     "points": [[float(x) for x in p[1:]] for p in pts], "model": model}}


def workloads(folder, quick, variant="complicated", size="big"):
    base = os.path.join(folder, f"{variant}_{size}")
    model = read_model(os.path.join(base, "model"))
    files = sorted((f for f in os.listdir(base) if f.startswith("hand")),
                   key=lambda f: int(f[4:f.index("_")]))
    for f in files[:2 if quick else len(files)]:
        yield f[:-4], read_hand(os.path.join(base, f), model, variant == "complicated")
