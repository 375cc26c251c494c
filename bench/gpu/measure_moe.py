#!/usr/bin/env python3
"""Mixture-of-experts kernels and training steps on one NVIDIA GPU, for checking phaze's MoE pricing.

Measures, with PyTorch on the GPU it finds:
  * the experts' grouped GEMMs of five MoE models (Mixtral 8x7B and 8x22B, Qwen2-57B-A14B, Qwen3-30B-A3B,
    DeepSeek-V3) as one rank of an expert-parallel group of e ranks holds them: E/e experts, each with the
    T·k·e/E rows of a balanced routing of T = 4,096 tokens a rank; the gated first layer (gate and up fused,
    2·f columns) and the second, forward (X·Wᵀ), activation gradient (dY·W) and weight gradient (dYᵀ·X);
    in BF16 through PyTorch's grouped GEMM (CUTLASS's grouped kernel) and through one cuBLAS GEMM per expert
    replayed from a CUDA graph (Transformer Engine's grouped linear layer), and forward in FP8 (E4M3, one
    cuBLASLt scaled GEMM per expert, per-tensor scales as Transformer Engine's recipe has them);
  * a sweep of rows per expert (64 to 16,384) at fixed expert shapes, where small experts lose their speed;
  * training steps (forward, backward, mixed-precision Adam) of a few layers of Qwen3-30B-A3B and of
    Mixtral 8x7B on one GPU: router, top-k, permutation, grouped experts, unpermutation, dropless.

Writes kernels.csv (the format `phaze validate --kernels` reads; a grouped GEMM's batch is its number of
experts, m its rows per expert for forward and dgrad), moe_steps.json and env.json to --out.
"""

import argparse
import json
import os
import sys
import time
import traceback

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure  # noqa: E402  (bench, environment, write_rows, MixedAdam, time_step)
from measure import DEV, bench, log  # noqa: E402

# name, hidden, expert ffn, experts, top-k
MOE_MODELS = [
    ("mixtral-8x7b", 4096, 14336, 8, 2),
    ("mixtral-8x22b", 6144, 16384, 8, 2),
    ("qwen2-57b-a14b", 3584, 2560, 64, 8),
    ("qwen3-30b-a3b", 2048, 768, 128, 8),
    ("deepseek-v3", 7168, 2048, 256, 8),
]
TOKENS = 4096
MAX_WEIGHT_BYTES = 6 << 30  # one grouped layer's BF16 weights on one GPU


def grouped_mm():
    fn = getattr(F, "grouped_mm", None) or getattr(torch, "_grouped_mm", None)
    if fn is None:
        raise RuntimeError("this PyTorch has no grouped GEMM")
    return fn


def graph_of(fn):
    """fn captured in a CUDA graph (one launch for all its kernels, as a C++ loop would issue them)."""
    fn()
    torch.cuda.synchronize()
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        fn()
    torch.cuda.current_stream().wait_stream(stream)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    return g.replay


def measure_grouped(G, m, fan_in, fan_out, direction, impl):
    """Seconds of one grouped GEMM of G experts with m rows each: weights [G, fan_out, fan_in]."""
    rows = G * m
    offs = torch.arange(m, rows + 1, m, device=DEV, dtype=torch.int32)
    if direction == "forward":
        a = torch.randn(rows, fan_in, device=DEV, dtype=torch.bfloat16)
        w = torch.randn(G, fan_out, fan_in, device=DEV, dtype=torch.bfloat16)
        if impl == "grouped":
            gm = grouped_mm()
            return bench(lambda: gm(a, w.transpose(-2, -1), offs=offs))
        if impl == "loop":
            parts = a.split(m)
            return bench(graph_of(lambda: [torch.mm(parts[g], w[g].t()) for g in range(G)]))
        one = torch.ones((), device=DEV, dtype=torch.float32)
        a8 = a.to(torch.float8_e4m3fn)
        w8 = w.to(torch.float8_e4m3fn)
        parts = a8.split(m)
        return bench(graph_of(lambda: [torch._scaled_mm(parts[g], w8[g].t(), one, one, out_dtype=torch.bfloat16,
                                                        use_fast_accum=True) for g in range(G)]))
    if direction == "dgrad":
        dy = torch.randn(rows, fan_out, device=DEV, dtype=torch.bfloat16)
        w = torch.randn(G, fan_out, fan_in, device=DEV, dtype=torch.bfloat16)
        if impl == "grouped":
            gm = grouped_mm()
            return bench(lambda: gm(dy, w, offs=offs))
        parts = dy.split(m)
        return bench(graph_of(lambda: [torch.mm(parts[g], w[g]) for g in range(G)]))
    # wgrad: dW_g = dY_gᵀ · X_g, the contraction over the expert's rows
    dyt = torch.randn(fan_out, rows, device=DEV, dtype=torch.bfloat16)  # dYᵀ as the kernel reads it
    x = torch.randn(rows, fan_in, device=DEV, dtype=torch.bfloat16)
    if impl == "grouped":
        gm = grouped_mm()
        xt = x.t().contiguous().t()  # column-major [rows, fan_in], as the 2-D × 2-D grouped kernel wants
        return bench(lambda: gm(dyt, xt, offs=offs))
    dparts = dyt.split(m, dim=1)
    xparts = x.split(m)
    return bench(graph_of(lambda: [torch.mm(dparts[g], xparts[g]) for g in range(G)]))


def gemm_dims(direction, m, fan_in, fan_out):
    if direction == "forward":
        return m, fan_out, fan_in
    if direction == "dgrad":
        return m, fan_in, fan_out
    return fan_out, fan_in, m


def grouped_cases():
    cases = []
    for name, h, f, E, k in MOE_MODELS:
        e = 1
        while e <= E:
            G = E // e
            m = TOKENS * k * e // E
            if 2 * f * h * 2 * G <= MAX_WEIGHT_BYTES and m <= 16384:
                cases.append((name, e, G, m, "fc1", h, 2 * f))
                cases.append((name, e, G, m, "fc2", f, h))
            e *= 2
    # rows per expert swept at two expert shapes (Qwen3's narrow experts, DeepSeek-V3's) with 8 experts
    for name, h, f in (("sweep-h2048-f768", 2048, 768), ("sweep-h7168-f2048", 7168, 2048)):
        for m in (64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384):
            cases.append((name, 0, 8, m, "fc1", h, 2 * f))
    return cases


def grouped_rows(deadline):
    rows = []
    for name, e, G, m, op, fan_in, fan_out in grouped_cases():
        directions = ("forward",) if name.startswith("sweep") else ("forward", "dgrad", "wgrad")
        for direction in directions:
            impls = ["grouped", "loop"] + (["fp8-loop"] if direction == "forward" else [])
            for impl in impls:
                if time.time() > deadline:
                    log("grouped: time budget reached, stopping")
                    return rows
                try:
                    sec = measure_grouped(G, m, fan_in, fan_out, direction, impl)
                except Exception as exc:
                    log(f"grouped {name} e{e} {op} {direction} {impl}: {exc!r}"[:300])
                    continue
                M, N, K = gemm_dims(direction, m, fan_in, fan_out)
                flop = 2.0 * G * M * N * K
                label = name if e == 0 else f"{name} e{e}"
                dtype = "e4m3xe4m3" if impl == "fp8-loop" else "bf16"
                backend = {"grouped": "cutlass-grouped", "loop": "cublas-per-expert",
                           "fp8-loop": "cublaslt-per-expert"}[impl]
                rows.append(dict(kind="gemm", model=label, tp=1, op=op, direction=direction, dtype=dtype, batch=G,
                                 m=M, n=N, k=K, seq="", head_dim="", causal="", backend=backend, seconds=sec,
                                 flop=flop, bytes="", tflops=flop / sec / 1e12))
                log(f"grouped {label:24s} {op} {direction:7s} G {G:3d} m {m:5d} {backend:20s} "
                    f"{flop / sec / 1e12:6.0f} TFLOP/s")
        torch.cuda.empty_cache()
    return rows


# ------------------------------------------------------------------------------------- training steps
ALIGN = 16  # rows: each expert's group starts 32-byte aligned in every operand of the grouped kernels


class Moe(torch.nn.Module):
    """A dropless MoE layer as Megatron-Core runs it with grouped GEMMs: router, softmax top-k, permutation
    into expert order, gated experts, unpermutation weighted by the router."""

    def __init__(self, h, f, E, k, use_grouped):
        super().__init__()
        self.E, self.k, self.f, self.use_grouped = E, k, f, use_grouped
        self.router = torch.nn.Linear(h, E, bias=False)
        self.w1 = torch.nn.Parameter(torch.randn(E, 2 * f, h) * 0.02)
        self.w2 = torch.nn.Parameter(torch.randn(E, h, f) * 0.02)

    def forward(self, x):
        T, h = x.shape
        probs = torch.softmax(self.router(x).float(), dim=-1)
        top, idx = probs.topk(self.k, dim=-1)
        top = (top / top.sum(-1, keepdim=True)).to(x.dtype)
        # load-balancing loss: E · Σ_i (share of copies to i) · (mean probability of i)
        share = torch.bincount(idx.view(-1), minlength=self.E).float() / (T * self.k)
        aux = self.E * (share * probs.mean(0)).sum()
        flat = idx.view(-1)
        order = flat.argsort(stable=True)
        counts = torch.bincount(flat, minlength=self.E)
        padded = (counts + ALIGN - 1) // ALIGN * ALIGN
        total = int(padded.sum().item())  # the dropless dispatcher's host synchronisation
        start = torch.cumsum(counts, 0) - counts
        pstart = torch.cumsum(padded, 0) - padded
        dest = torch.arange(T * self.k, device=x.device) + (pstart - start)[flat[order]]
        xs = x.new_zeros(total, h).index_copy(0, dest, x[order // self.k])
        if self.use_grouped:
            gm = grouped_mm()
            offs = torch.cumsum(padded, 0).to(torch.int32)
            y = gm(xs, self.w1.transpose(-2, -1), offs=offs)
            g, u = y.chunk(2, dim=-1)
            y = gm(F.silu(g) * u, self.w2.transpose(-2, -1), offs=offs)
        else:
            outs = []
            for e, (a, b) in enumerate(zip(pstart.tolist(), padded.tolist())):
                t = xs[a:a + b] @ self.w1[e].t()
                g, u = t.chunk(2, dim=-1)
                outs.append((F.silu(g) * u) @ self.w2[e].t())
            y = torch.cat(outs)
        y = y.index_select(0, dest)  # sorted copies back in sorted order
        out = torch.empty_like(y).index_copy(0, order, y).view(T, self.k, h)
        return (out * top.unsqueeze(-1)).sum(1), aux


class MoeBlock(torch.nn.Module):
    def __init__(self, h, a, kv, d, f, E, k, qk_norm, use_grouped):
        super().__init__()
        self.a, self.kv, self.d, self.qk_norm = a, kv, d, qk_norm
        self.norm1 = torch.nn.RMSNorm(h, eps=1e-6)
        self.norm2 = torch.nn.RMSNorm(h, eps=1e-6)
        self.qkv = torch.nn.Linear(h, (a + 2 * kv) * d, bias=False)
        self.proj = torch.nn.Linear(a * d, h, bias=False)
        if qk_norm:
            self.q_norm = torch.nn.RMSNorm(d, eps=1e-6)
            self.k_norm = torch.nn.RMSNorm(d, eps=1e-6)
        self.moe = Moe(h, f, E, k, use_grouped)

    def forward(self, x, cos, sin):
        from torch.nn.attention import sdpa_kernel
        b, s, h = x.shape
        q, k, v = self.qkv(self.norm1(x)).split([self.a * self.d, self.kv * self.d, self.kv * self.d], dim=-1)
        q = q.view(b, s, self.a, self.d)
        k = k.view(b, s, self.kv, self.d)
        if self.qk_norm:
            q, k = self.q_norm(q), self.k_norm(k)
        q, k = q.transpose(1, 2), k.transpose(1, 2)
        v = v.view(b, s, self.kv, self.d).transpose(1, 2)
        rope = lambda t: t * cos + torch.cat((-t[..., self.d // 2:], t[..., : self.d // 2]), dim=-1) * sin
        q, k = rope(q), rope(k)
        k = k.repeat_interleave(self.a // self.kv, dim=1)
        v = v.repeat_interleave(self.a // self.kv, dim=1)
        with sdpa_kernel(measure.STEP_BACKENDS):
            o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(o.transpose(1, 2).reshape(b, s, self.a * self.d))
        y, aux = self.moe(self.norm2(x).view(b * s, h))
        return x + y.view(b, s, h), aux


class MoeGpt(torch.nn.Module):
    def __init__(self, layers, h, a, kv, d, f, E, k, vocab, seq, qk_norm, use_grouped):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, h)
        self.blocks = torch.nn.ModuleList(MoeBlock(h, a, kv, d, f, E, k, qk_norm, use_grouped)
                                          for _ in range(layers))
        self.norm = torch.nn.RMSNorm(h, eps=1e-6)
        self.out = torch.nn.Linear(h, vocab, bias=False)  # untied, as both models have it
        cos, sin = measure.rope_tables(seq, d, 1e6)
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)

    def forward(self, tokens, labels):
        x = self.embed(tokens)
        aux_total = 0.0
        for blk in self.blocks:
            x, aux = blk(x, self.cos, self.sin)
            aux_total = aux_total + aux
        logits = self.out(self.norm(x))
        loss = F.cross_entropy(logits.view(-1, logits.shape[-1]).float(), labels.view(-1))
        return loss + 1e-3 * aux_total


MOE_STEPS = [
    # name, layers, hidden, heads, kv heads, head size, expert ffn, experts, top-k, vocab, seq, micro-batch, qk norm
    ("qwen3-30b-a3b-4l", 4, 2048, 32, 4, 128, 768, 128, 8, 151936, 4096, 1, True),
    ("mixtral-8x7b-2l", 2, 4096, 32, 8, 128, 14336, 8, 2, 32000, 4096, 1, False),
]


def moe_step_rows(deadline):
    out = []
    for name, layers, h, a, kv, d, f, E, k, vocab, seq, mbs, qk_norm in MOE_STEPS:
        for use_grouped in (True, False):
            if time.time() > deadline:
                log("moe steps: time budget reached, stopping")
                return out
            model = opt = None
            try:
                torch.manual_seed(0)
                with torch.device(DEV):  # initialised on the GPU: billions of parameters
                    model = MoeGpt(layers, h, a, kv, d, f, E, k, vocab, seq, qk_norm, use_grouped)
                model = model.to(torch.bfloat16)
                model.train()
                opt = measure.MixedAdam(model.parameters())
                tokens = torch.randint(0, vocab, (mbs, seq), device=DEV)
                labels = torch.randint(0, vocab, (mbs, seq), device=DEV)
                fwd, bwd, optim = measure.time_step(model, opt, tokens, labels, runs=7, warm_up=2)
                med = lambda v: sorted(v)[len(v) // 2]
                params = sum(p.numel() for p in model.parameters())
                kernels = measure.kernel_breakdown(model, opt, tokens, labels)
                experts = "grouped" if use_grouped else "per-expert"
                out.append(dict(model=name, experts=experts, layers=layers, hidden=h, heads=a, kv_heads=kv,
                                head_dim=d, expert_ffn=f, num_experts=E, top_k=k, vocab=vocab, seq=seq,
                                micro_batch=mbs, qk_norm=qk_norm, parameters=params, forward_s=med(fwd),
                                backward_s=med(bwd), optimizer_s=med(optim),
                                step_s=med(fwd) + med(bwd) + med(optim),
                                peak_memory_bytes=torch.cuda.max_memory_allocated(), kernels=kernels))
                log(f"moe step {name} ({experts}): fwd {med(fwd)*1e3:.1f} ms, bwd {med(bwd)*1e3:.1f} ms, "
                    f"opt {med(optim)*1e3:.1f} ms, {params} parameters, "
                    f"peak {torch.cuda.max_memory_allocated() / 2**30:.1f} GiB; kernels {json.dumps(kernels)}")
            except Exception:
                log(f"moe step {name} failed:\n{traceback.format_exc()}"[-1500:])
            model = opt = None
            torch.cuda.empty_cache()
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--budget-s", type=float, default=200, help="stop measuring after about this many seconds")
    ap.add_argument("--skip", default="", help="comma-separated parts to skip: grouped,step")
    args = ap.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    measure.prepare("measure_moe.py", args.out)
    start = time.time()
    env = measure.environment()
    log(json.dumps(env))
    rows, steps = [], []
    end = start + args.budget_s
    if "grouped" not in skip:
        try:
            rows = grouped_rows(start + 0.6 * args.budget_s)
        except Exception:
            log(f"grouped failed:\n{traceback.format_exc()}")
        measure.write_rows(args.out, rows)
        log(f"grouped: {len(rows)} rows in {time.time() - start:.1f} s")
    if "step" not in skip:
        steps = moe_step_rows(end)
        with open(os.path.join(args.out, "moe_steps.json"), "w") as fh:
            json.dump(steps, fh, indent=1)
    env["wall_s"] = time.time() - start
    with open(os.path.join(args.out, "env.json"), "w") as fh:
        json.dump(env, fh, indent=1)


if __name__ == "__main__":
    main()
