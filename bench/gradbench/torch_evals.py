"""PyTorch implementations of the GradBench evals that GradBench has a PyTorch tool for
(gmm, lstm, lse, kmeans, ba; ht in torch_ht.py), written for this project from the evals'
definitions: the comparison peer of bench/gradbench/run.py. As GradBench's Python tools do,
converting the input to tensors (`prepare`) and the result to JSON (`output`) is not timed;
each timed call is the function itself, forward (and backward) on one thread.

Each eval is a class with prepare(input), one method per GradBench function name returning
tensors, and output(function, result) -> JSON in the eval's shape.
"""
import math

import torch

torch.set_default_dtype(torch.float64)


def t(x):
    return torch.tensor(x, dtype=torch.float64)


class Lse:
    def prepare(self, inp):
        return {"x": t(inp["x"])}

    def primal(self, s):
        with torch.no_grad():
            return torch.logsumexp(s["x"], 0)

    def gradient(self, s):
        x = s["x"].detach().requires_grad_()
        (g,) = torch.autograd.grad(torch.logsumexp(x, 0), x)
        return g

    def output(self, fn, r):
        return r.tolist()


def multigammaln(a, p):
    return 0.25 * p * (p - 1) * math.log(math.pi) + sum(
        math.lgamma(a + 0.5 * (1 - j)) for j in range(1, p + 1))


class Gmm:
    def prepare(self, inp):
        d, k = inp["d"], inp["k"]
        # The strict lower triangle of each Q, column by column.
        rows, cols = [], []
        for i in range(d):
            for j in range(i + 1, d):
                rows.append(j)
                cols.append(i)
        return {"alpha": t(inp["alpha"]), "mu": t(inp["mu"]), "q": t(inp["q"]),
                "l": t(inp["l"]).reshape(k, d * (d - 1) // 2), "x": t(inp["x"]),
                "m": inp["m"], "gamma": inp["gamma"], "rows": rows, "cols": cols}

    def objective_of(self, s, alpha, mu, q, l):
        x, m, gamma = s["x"], s["m"], s["gamma"]
        n, d = x.shape
        k = alpha.shape[0]
        qdiag = torch.exp(q)
        sum_qs = q.sum(1)
        L = torch.zeros(k, d, d)
        L[:, s["rows"], s["cols"]] = l
        Q = torch.diag_embed(qdiag) + L
        xc = x.unsqueeze(0) - mu.unsqueeze(1)               # k, n, d
        qxc = torch.einsum("kij,knj->kni", Q, xc)
        main = alpha.unsqueeze(1) + sum_qs.unsqueeze(1) - 0.5 * (qxc * qxc).sum(2)
        slse = torch.logsumexp(main, 0).sum()
        const = -n * d * 0.5 * math.log(2 * math.pi)
        nn = d + m + 1
        c = nn * d * (math.log(gamma) - 0.5 * math.log(2)) - multigammaln(0.5 * nn, d)
        frob = (qdiag * qdiag).sum(1) + (l * l).sum(1)
        prior = -(0.5 * gamma * gamma * frob - m * sum_qs).sum() + k * c
        return const + slse - n * torch.logsumexp(alpha, 0) + prior

    def objective(self, s):
        with torch.no_grad():
            return self.objective_of(s, s["alpha"], s["mu"], s["q"], s["l"])

    def jacobian(self, s):
        ps = [s[p].detach().requires_grad_() for p in ("alpha", "mu", "q", "l")]
        return torch.autograd.grad(self.objective_of(s, *ps), ps)

    def output(self, fn, r):
        if fn == "objective":
            return r.item()
        return dict(zip(("alpha", "mu", "q", "l"), (g.tolist() for g in r)))


class Kmeans:
    def prepare(self, inp):
        return {"points": t(inp["points"]), "centroids": t(inp["centroids"])}

    @staticmethod
    def cost_of(points, centroids):
        # ‖p‖² − 2 p·c + ‖c‖²: a matrix product, PyTorch's fastest way to all the distances
        # (the broadcast difference was 4× slower here).
        d2 = ((points * points).sum(1, keepdim=True) - 2 * points @ centroids.T
              + (centroids * centroids).sum(1))                              # n, k
        return d2.min(1).values.sum()

    def cost(self, s):
        with torch.no_grad():
            return self.cost_of(s["points"], s["centroids"])

    def dir(self, s):
        # The Hessian of the cost is diagonal (2 × the size of each cluster on its
        # centroid's coordinates), so a Hessian-vector product with ones is its diagonal.
        c = s["centroids"].detach().requires_grad_()
        (g,) = torch.autograd.grad(self.cost_of(s["points"], c), c, create_graph=True)
        (h,) = torch.autograd.grad(g, c, torch.ones_like(g))
        return g.detach() / h

    def output(self, fn, r):
        return r.item() if fn == "cost" else r.tolist()


class Lstm:
    def prepare(self, inp):
        return {p: t(inp[p]) for p in ("main_params", "extra_params", "state", "sequence")}

    @staticmethod
    def objective_of(main, extra, state, seq):
        l2, b4 = main.shape
        l, b = l2 // 2, b4 // 4
        hidden = [state[2 * i] for i in range(l)]
        cell = [state[2 * i + 1] for i in range(l)]
        total = 0.0
        for step in range(seq.shape[0] - 1):
            x = seq[step] * extra[0]
            for i in range(l):
                w, bias = main[2 * i], main[2 * i + 1]
                forget = torch.sigmoid(x * w[:b] + bias[:b])
                ingate = torch.sigmoid(hidden[i] * w[b:2 * b] + bias[b:2 * b])
                outgate = torch.sigmoid(x * w[2 * b:3 * b] + bias[2 * b:3 * b])
                change = torch.tanh(hidden[i] * w[3 * b:] + bias[3 * b:])
                cell[i] = cell[i] * forget + ingate * change
                hidden[i] = outgate * torch.tanh(cell[i])
                x = hidden[i]
            ypred = x * extra[1] + extra[2]
            lse = torch.log(torch.exp(ypred).sum() + 2)
            total = total + (seq[step + 1] * (ypred - lse)).sum()
        return -total / ((seq.shape[0] - 1) * b)

    def objective(self, s):
        with torch.no_grad():
            return self.objective_of(s["main_params"], s["extra_params"], s["state"],
                                     s["sequence"])

    def jacobian(self, s):
        main = s["main_params"].detach().requires_grad_()
        extra = s["extra_params"].detach().requires_grad_()
        gm, ge = torch.autograd.grad(
            self.objective_of(main, extra, s["state"], s["sequence"]), (main, extra))
        return torch.cat((gm.reshape(-1), ge.reshape(-1)))

    def output(self, fn, r):
        return r.item() if fn == "objective" else r.tolist()


def rodrigues(rot, X):
    """Rotates X (3) by the angle-axis rot (3): Rodrigues' formula, a first-order rotation
    when the angle is 0 (as ADBench's camera model)."""
    sq = (rot * rot).sum()
    theta = torch.sqrt(sq)
    w = rot / theta
    c, s = torch.cos(theta), torch.sin(theta)
    full = X * c + torch.cross(w, X, dim=0) * s + w * ((w * X).sum() * (1 - c))
    small = X + torch.cross(rot, X, dim=0)
    return torch.where(sq != 0, full, small)


def reprojection(params, feat):
    """The weighted reprojection error (2) of one observation from its 15 parameters: the
    camera's 11 (angle-axis rotation, centre, focal length, principal point, two radial
    distortion coefficients), the point's 3 and the weight."""
    cam, X, w = params[:11], params[11:14], params[14]
    Xcam = rodrigues(cam[:3], X - cam[3:6])
    proj = Xcam[:2] / Xcam[2]
    rsq = (proj * proj).sum()
    proj = proj * (1 + cam[9] * rsq + cam[10] * rsq * rsq)
    return w * (proj * cam[6] + cam[7:9] - feat)


class Ba:
    """Every observation's 2×15 Jacobian block by forward mode, batched over observations
    (functorch's vmap of jacfwd), and the sparse matrix's rows and columns, as GradBench's
    manual tool lays them out (CSR rows, 15 entries per reprojection row, 1 per weight row)."""

    def prepare(self, inp):
        import functorch
        n, m, p = inp["n"], inp["m"], inp["p"]
        cams = t(inp["cam"]).expand(n, 11)
        X = t(inp["x"]).expand(m, 3)
        w = torch.full((p,), float(inp["w"]))
        feats = t(inp["feat"]).expand(p, 2)
        obs = torch.arange(p)
        params = torch.cat((cams[obs % n], X[obs % m], w.unsqueeze(1)), 1)
        return {"n": n, "m": m, "p": p, "params": params, "feats": feats, "obs": obs,
                "w": w, "jac": functorch.vmap(functorch.jacfwd(reprojection)),
                "err": functorch.vmap(reprojection)}

    def objective(self, s):
        with torch.no_grad():
            return s["err"](s["params"], s["feats"]), 1 - s["w"] * s["w"]

    def jacobian(self, s):
        n, m, p, obs = s["n"], s["m"], s["p"], s["obs"]
        with torch.no_grad():
            blocks = s["jac"](s["params"], s["feats"])                   # p, 2, 15
            cam_cols = 11 * (obs % n).unsqueeze(1) + torch.arange(11)
            pt_cols = 11 * n + 3 * (obs % m).unsqueeze(1) + torch.arange(3)
            w_cols = (11 * n + 3 * m + obs).unsqueeze(1)
            cols = torch.cat((cam_cols, pt_cols, w_cols), 1).repeat(1, 2)   # p, 30
            vals = torch.cat((blocks.reshape(p, 30), -2 * s["w"].unsqueeze(1)), 1)
            rows = torch.cat((torch.arange(0, 30 * p + 1, 15),
                              30 * p + torch.arange(1, p + 1)))
            all_cols = torch.cat((cols.reshape(-1), 11 * n + 3 * m + obs))
            all_vals = torch.cat((vals[:, :30].reshape(-1), vals[:, 30]))
            return rows, all_cols, all_vals

    def output(self, fn, r):
        if fn == "objective":
            err, werr = r
            return {"reproj_error": {"elements": err[0].tolist(), "repeated": len(err)},
                    "w_err": {"element": werr[0].item(), "repeated": len(werr)}}
        rows, cols, vals = r
        pick = lambda v: v[:30].tolist() + [v[-1].item()]
        return {"rows": pick(rows), "cols": pick(cols), "vals": pick(vals)}


from torch_ht import Ht  # noqa: E402 (the hand model is long enough for its own file)

EVALS = {"lse": Lse, "gmm": Gmm, "kmeans": Kmeans, "lstm": Lstm, "ba": Ba, "ht": Ht}
