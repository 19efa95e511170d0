"""PyTorch eager twins of tinyflow_demo/models' language models (transformer.py, mlstm.py), for
bench/train_vs_pytorch.py: the same computation, written functionally over a dict of parameters named
as tinyflow's variables (so both frameworks start from the same weights: the bench copies tinyflow's
initial values in)."""
import math

import torch


def layer_norm(x, params, scope):
    return torch.nn.functional.layer_norm(x, x.shape[-1:], params[scope + "/gamma"], params[scope + "/beta"], 1e-12)


def dense(x, params, scope):
    return x @ params[scope + "/kernel"] + params[scope + "/bias"]


def gelu(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def transformer_logits(params, tokens, config):
    """transformer.logits without dropout: [batch, T, 256] of int64 tokens [batch, T]."""
    batch, seq_len = tokens.shape
    hidden, heads = config["hidden"], config["heads"]
    depth = hidden // heads
    p = lambda name: "transformer/" + name  # noqa: E731
    x = params[p("embedding")][tokens] + params[p("positions")][:seq_len]
    mask = torch.tril(torch.ones(seq_len, seq_len))
    for layer in range(config["layers"]):
        scope = p("layer%d/attention/" % layer)
        q, k, v = dense(layer_norm(x, params, scope + "ln"), params, scope + "qkv").split(hidden, dim=-1)
        q, k, v = (t.reshape(batch, seq_len, heads, depth).transpose(1, 2) for t in (q, k, v))
        s = q @ k.transpose(-1, -2) * (1.0 / math.sqrt(depth))
        s = s * mask - 1e9 * (1.0 - mask)
        a = (torch.softmax(s, dim=-1) @ v).transpose(1, 2).reshape(batch, seq_len, hidden)
        x = x + dense(a, params, scope + "proj")
        scope = p("layer%d/ffn/" % layer)
        h = gelu(dense(layer_norm(x, params, scope + "ln"), params, scope + "dense1"))
        x = x + dense(h, params, scope + "dense2")
    x = layer_norm(x, params, p("ln_final"))
    return x @ params[p("embedding")].t()


def mlstm_logits(params, tokens, config):
    """mlstm.logits without dropout: a Python loop over the time steps (PyTorch eager's way)."""
    batch, seq_len = tokens.shape
    n = config["hidden"]
    c = lambda name: params["mlstm/cell/" + name]  # noqa: E731

    def weight_norm(key):
        v = c("W_%s_v" % key)
        return v * (c("W_%s_g" % key) * torch.rsqrt((v * v).sum(0)))
    w_mh, w_m = weight_norm("mh"), weight_norm("m")
    x = params["mlstm/embedding"][tokens]
    xm = x @ c("W_mx")  # the input projections of every step at once
    xz = x @ c("W_x") + c("b")
    h = torch.zeros(batch, n)
    cell = torch.zeros(batch, n)
    outputs = []
    for t in range(seq_len):
        m = xm[:, t] * (h @ w_mh)
        i, f, o, u = (xz[:, t] + m @ w_m).split(n, dim=1)
        cell = torch.sigmoid(f) * cell + torch.sigmoid(i) * torch.tanh(u)
        h = torch.sigmoid(o) * torch.tanh(cell)
        outputs.append(h)
    out = torch.stack(outputs, 1).reshape(-1, n)
    return dense(out, params, "mlstm/output").reshape(batch, seq_len, 256)


LOGITS = {"transformer": transformer_logits, "mlstm": mlstm_logits}


class Trainer(object):
    """Adam on the mean next-byte cross-entropy, gradients clipped to global norm `clip` (as lm.LanguageModel)."""

    def __init__(self, architecture, config, initial, lr, clip=1.0):
        self.params = {name: torch.tensor(value, requires_grad=True) for name, value in initial.items()}
        self.architecture, self.config, self.clip = architecture, config, clip
        self.opt = torch.optim.Adam(list(self.params.values()), lr, eps=1e-8)

    def loss(self, batch):
        tokens = torch.from_numpy(batch.astype("int64"))
        logits = LOGITS[self.architecture](self.params, tokens[:, :-1], self.config)
        return torch.nn.functional.cross_entropy(logits.reshape(-1, 256), tokens[:, 1:].reshape(-1))

    def step(self, batch):
        self.opt.zero_grad()
        loss = self.loss(batch)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(list(self.params.values()), self.clip)
        self.opt.step()
        return float(loss)
