"""PyTorch implementations of the GradBench evals that GradBench has a PyTorch tool for
(gmm, lstm, lse, kmeans; ba and ht below), written for this project from the evals'
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
        d2 = ((points.unsqueeze(1) - centroids.unsqueeze(0)) ** 2).sum(2)   # n, k
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


EVALS = {"lse": Lse, "gmm": Gmm, "kmeans": Kmeans, "lstm": Lstm}
