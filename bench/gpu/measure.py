#!/usr/bin/env python3
"""Kernel-level and training-step measurements on one NVIDIA GPU, for checking phaze's GPU model.

Measures, with PyTorch on the GPU it finds:
  * the two ceilings: a large BF16 matrix product and a large device-to-device copy;
  * every GEMM of a Megatron-LM transformer layer (QKV, attention projection, FFN in and out, and the
    vocabulary projection) of the seed models at tensor-parallel widths 1, 2, 4 and 8, forward (x·Wᵀ),
    activation gradient (dY·W) and weight gradient (dYᵀ·X), in BF16 and in FP8 (Transformer Engine's
    hybrid recipe: E4M3 forward, E5M2 gradients, through cuBLASLt's scaled matrix product);
  * fused attention (PyTorch's FlashAttention-2 and cuDNN back ends), forward and backward, BF16, at the
    seed models' head counts, head sizes and sequence lengths, and a sequence sweep at 16 Ki tokens;
  * streaming kernels (copy, LayerNorm, GELU, add) and the fixed cost of one small kernel;
  * full training steps (forward, backward, mixed-precision Adam) of two small models on one GPU.

Every time is the median of repeated runs timed with CUDA events, with the L2 cache flushed before each
run. Writes kernels.csv, steps.json and env.json to the folder named by --out (default $OUT or "."), and
prints a summary. Runs in a few minutes on an H100 or H200.
"""

import argparse
import csv
import json
import os
import subprocess
import sys
import time
import traceback

import torch
import torch.nn.functional as F

DEV = "cuda"
FLUSH = None


def log(*args):
    print(*args, flush=True)


def bench(fn, rep_ms=15.0, min_iters=3, max_iters=40):
    """Median seconds of fn() over repeated runs, each after an L2 flush, timed with CUDA events."""
    fn()
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    fn()
    e.record()
    torch.cuda.synchronize()
    first_ms = max(s.elapsed_time(e), 1e-3)
    n = int(min(max_iters, max(min_iters, rep_ms / first_ms)))
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    for i in range(n):
        FLUSH.zero_()
        starts[i].record()
        fn()
        ends[i].record()
    torch.cuda.synchronize()
    times = sorted(a.elapsed_time(b) for a, b in zip(starts, ends))
    return times[len(times) // 2] / 1e3


# ---------------------------------------------------------------------------------------------- models
# name, layers, hidden, heads, kv heads, ffn, gated (SwiGLU), vocab (padded as Megatron-LM pads), seq, mbs
MODELS = [
    ("bert-large", 24, 1024, 16, 16, 4096, False, 30592, 512, 8),
    ("gpt2-xl", 48, 1600, 25, 25, 6400, False, 50304, 1024, 4),
    ("llama2-7b", 32, 4096, 32, 32, 11008, True, 32000, 4096, 1),
    ("llama-3-8b", 32, 4096, 32, 8, 14336, True, 128256, 8192, 1),
    ("llama-3-70b", 80, 8192, 64, 8, 28672, True, 128256, 8192, 1),
    ("gpt3-175b", 96, 12288, 96, 96, 49152, False, 51200, 2048, 1),
]


def layer_gemms(model, tp):
    """(name, in, out) of one layer's linear layers on one GPU of a tensor-parallel group of tp."""
    name, _, h, a, kv, f, gated, vocab, _, _ = model
    d = h // a
    return [
        ("qkv", h, (a + 2 * kv) * d // tp),
        ("proj", a * d // tp, h),
        ("fc1", h, (2 if gated else 1) * f // tp),
        ("fc2", f // tp, h),
        ("logits", h, vocab // tp),
    ]


def gemm_dims(direction, tokens, fan_in, fan_out):
    """(M, N, K) of one direction of a linear layer: output rows, output columns, contraction."""
    if direction == "forward":
        return tokens, fan_out, fan_in
    if direction == "dgrad":
        return tokens, fan_in, fan_out
    return fan_out, fan_in, tokens  # wgrad


def measure_gemm(M, N, K, dtype, direction):
    """Seconds of one M×N×K product; a is [M, K] row-major, b column-major (as cuBLASLt's FP8 path needs)."""
    a = torch.randn(M, K, device=DEV, dtype=torch.bfloat16)
    bt = torch.randn(N, K, device=DEV, dtype=torch.bfloat16)
    if dtype == "bf16":
        b = bt.t()
        return bench(lambda: torch.mm(a, b)), "bf16"
    one = torch.ones((), device=DEV, dtype=torch.float32)
    a_type = torch.float8_e4m3fn if direction == "forward" else torch.float8_e5m2
    a8 = a.to(a_type)
    b8 = bt.to(torch.float8_e4m3fn).t()
    fast = direction == "forward"  # Transformer Engine: fast accumulation forward, split accumulation backward
    used = "e4m3xe4m3" if direction == "forward" else "e5m2xe4m3"
    try:
        fn = lambda: torch._scaled_mm(a8, b8, one, one, out_dtype=torch.bfloat16, use_fast_accum=fast)
        fn()
    except Exception:
        a8 = a.to(torch.float8_e4m3fn)
        used = "e4m3xe4m3"
        fn = lambda: torch._scaled_mm(a8, b8, one, one, out_dtype=torch.bfloat16, use_fast_accum=fast)
    return bench(fn), used


def gemm_rows(deadline):
    rows = []
    for model in MODELS:
        name, _, h, a, kv, f, gated, vocab, seq, mbs = model
        tokens = seq * mbs
        for tp in (1, 2, 4, 8):
            if a % tp or kv % tp or f % tp or vocab % tp:
                continue
            for gemm, fan_in, fan_out in layer_gemms(model, tp):
                for direction in ("forward", "dgrad", "wgrad"):
                    M, N, K = gemm_dims(direction, tokens, fan_in, fan_out)
                    for dtype in ("bf16", "fp8"):
                        if time.time() > deadline:
                            log("gemm: time budget reached, stopping")
                            return rows
                        fp8_ok = M % 16 == 0 and N % 16 == 0 and K % 16 == 0
                        if dtype == "fp8" and not fp8_ok:
                            continue
                        try:
                            sec, used = measure_gemm(M, N, K, dtype, direction)
                        except Exception as exc:  # record and go on
                            log(f"gemm {name} t{tp} {gemm} {direction} {dtype}: {exc!r}")
                            continue
                        flop = 2.0 * M * N * K
                        rows.append(dict(kind="gemm", model=name, tp=tp, op=gemm, direction=direction, dtype=used,
                                         batch=1, m=M, n=N, k=K, seq="", head_dim="", causal="",
                                         backend="cublas", seconds=sec, flop=flop, bytes="",
                                         tflops=flop / sec / 1e12))
        torch.cuda.empty_cache()
    return rows


# ------------------------------------------------------------------------------------------- attention
def attention_backends():
    from torch.nn.attention import SDPBackend
    return [("flash2", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION)]


def measure_attention(batch, heads, seq, d, causal, backend):
    from torch.nn.attention import sdpa_kernel
    q, k, v = (torch.randn(batch, heads, seq, d, device=DEV, dtype=torch.bfloat16, requires_grad=True)
               for _ in range(3))
    with sdpa_kernel([backend]):
        fwd = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        t_fwd = bench(fwd)
        out = fwd()
        dout = torch.randn_like(out)
        bwd = lambda: torch.autograd.grad(out, (q, k, v), dout, retain_graph=True)
        t_bwd = bench(bwd)
    return t_fwd, t_bwd


def attention_cases():
    cases = []
    for name, _, h, a, kv, f, gated, vocab, seq, mbs in MODELS:
        d = h // a
        for tp in (1, 8):
            if a % tp:
                continue
            cases.append((name, tp, mbs, a // tp, seq, d, name != "bert-large"))
    # FlashAttention papers' sweep: 16 Ki tokens, hidden 2048 (16 heads of 128), causal and not.
    for seq in (1024, 2048, 4096, 8192, 16384, 32768):
        for causal in (True, False):
            cases.append(("sweep-d128", 1, max(1, 16384 // seq), 16, seq, 128, causal))
    cases.append(("sweep-d64", 1, 2, 32, 8192, 64, True))
    return cases


def attention_rows(deadline):
    rows = []
    for name, tp, batch, heads, seq, d, causal in attention_cases():
        for label, backend in attention_backends():
            if time.time() > deadline:
                log("attention: time budget reached, stopping")
                return rows
            try:
                t_fwd, t_bwd = measure_attention(batch, heads, seq, d, causal, backend)
            except Exception as exc:
                log(f"attention {name} {label} s{seq}: {exc!r}")
                continue
            share = 0.5 if causal else 1.0
            for direction, sec, products in (("forward", t_fwd, 2), ("backward", t_bwd, 5)):
                flop = products * 2.0 * batch * heads * seq * seq * d * share
                rows.append(dict(kind="attention", model=name, tp=tp, op="attention", direction=direction,
                                 dtype="bf16", batch=batch * heads, m="", n="", k="", seq=seq, head_dim=d,
                                 causal=int(causal), backend=label, seconds=sec, flop=flop, bytes="",
                                 tflops=flop / sec / 1e12))
            torch.cuda.empty_cache()
    return rows


# ------------------------------------------------------------------------------------------- streaming
def stream_rows():
    rows = []
    n = 1 << 30  # elements: 2 GiB of BF16
    x = torch.randn(n, device=DEV, dtype=torch.bfloat16)
    y = torch.empty_like(x)
    z = torch.randn_like(x)
    t = bench(lambda: y.copy_(x))
    rows.append(("copy", t, 2.0 * 2 * n))
    t = bench(lambda: torch.add(x, z, out=y))
    rows.append(("add", t, 3.0 * 2 * n))
    t = bench(lambda: F.gelu(x, approximate="tanh"))
    rows.append(("gelu", t, 2.0 * 2 * n))
    rows_2d = x.view(-1, 8192)
    w = torch.ones(8192, device=DEV, dtype=torch.bfloat16)
    bias = torch.zeros(8192, device=DEV, dtype=torch.bfloat16)
    t = bench(lambda: F.layer_norm(rows_2d, (8192,), w, bias))
    rows.append(("layernorm", t, 2.0 * 2 * n))
    t = bench(lambda: F.dropout(x, 0.1, training=True))
    rows.append(("dropout", t, 2.0 * 2 * n + n))  # reads x, writes the result and a one-byte mask
    del x, y, z
    torch.cuda.empty_cache()
    out = []
    for op, sec, nbytes in rows:
        out.append(dict(kind="stream", model="", tp="", op=op, direction="forward", dtype="bf16", batch="", m="",
                        n="", k="", seq="", head_dim="", causal="", backend="torch", seconds=sec, flop="",
                        bytes=nbytes, tflops=""))
    # The fixed cost of one small kernel: back-to-back eager launches, and the same kernels in a graph.
    a = torch.randn(1024, device=DEV)
    for _ in range(50):
        a.add_(1.0)
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    count = 2000
    s.record()
    for _ in range(count):
        a.add_(1.0)
    e.record()
    torch.cuda.synchronize()
    eager = s.elapsed_time(e) / 1e3 / count
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(200):
            a.add_(1.0)
    graph = bench(g.replay) / 200
    for op, sec in (("small-kernel-eager", eager), ("small-kernel-graph", graph)):
        out.append(dict(kind="launch", model="", tp="", op=op, direction="", dtype="fp32", batch="", m="", n="",
                        k="", seq="", head_dim="", causal="", backend="torch", seconds=sec, flop="", bytes="",
                        tflops=""))
    return out


# ------------------------------------------------------------------------------------- training steps
class Block(torch.nn.Module):
    """One pre-norm decoder layer as Megatron-LM builds it: fused QKV, fused attention, two FFN GEMMs."""

    def __init__(self, h, a, kv, f, gated, llama, dropout):
        super().__init__()
        self.a, self.kv, self.d, self.gated, self.llama, self.p = a, kv, h // a, gated, llama, dropout
        norm = (lambda: torch.nn.RMSNorm(h, eps=1e-5)) if llama else (lambda: torch.nn.LayerNorm(h))
        self.norm1, self.norm2 = norm(), norm()
        self.qkv = torch.nn.Linear(h, (a + 2 * kv) * self.d, bias=not llama)
        self.proj = torch.nn.Linear(h, h, bias=not llama)
        self.fc1 = torch.nn.Linear(h, (2 if gated else 1) * f, bias=not llama)
        self.fc2 = torch.nn.Linear(f, h, bias=not llama)

    def rope(self, x, cos, sin):
        x1, x2 = x.chunk(2, dim=-1)
        return x * cos + torch.cat((-x2, x1), dim=-1) * sin

    def forward(self, x, cos, sin):
        from torch.nn.attention import sdpa_kernel
        b, s, h = x.shape
        qkv = self.qkv(self.norm1(x))
        q, k, v = qkv.split([self.a * self.d, self.kv * self.d, self.kv * self.d], dim=-1)
        q = q.view(b, s, self.a, self.d).transpose(1, 2)
        k = k.view(b, s, self.kv, self.d).transpose(1, 2)
        v = v.view(b, s, self.kv, self.d).transpose(1, 2)
        if self.llama:
            q, k = self.rope(q, cos, sin), self.rope(k, cos, sin)
        if self.kv != self.a:
            k = k.repeat_interleave(self.a // self.kv, dim=1)
            v = v.repeat_interleave(self.a // self.kv, dim=1)
        with sdpa_kernel(STEP_BACKENDS):
            o = F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                               dropout_p=self.p if self.training else 0.0)
        o = o.transpose(1, 2).reshape(b, s, h)
        x = x + F.dropout(self.proj(o), self.p, self.training)
        y = self.fc1(self.norm2(x))
        if self.gated:
            g, u = y.chunk(2, dim=-1)
            y = F.silu(g) * u
        else:
            y = F.gelu(y, approximate="tanh")
        return x + F.dropout(self.fc2(y), self.p, self.training)


def rope_tables(seq, d, base):
    """BF16 cosines and sines of rotary position embeddings with `base` for `seq` positions of head size d."""
    inv = 1.0 / (base ** (torch.arange(0, d, 2, dtype=torch.float32) / d))
    ang = torch.outer(torch.arange(seq, dtype=torch.float32), inv)
    ang = torch.cat((ang, ang), dim=-1)
    return ang.cos().to(torch.bfloat16), ang.sin().to(torch.bfloat16)


class Gpt(torch.nn.Module):
    def __init__(self, layers, h, a, kv, f, gated, vocab, seq, llama, dropout):
        super().__init__()
        self.llama, self.p = llama, dropout
        self.embed = torch.nn.Embedding(vocab, h)
        self.pos = None if llama else torch.nn.Embedding(seq, h)
        self.blocks = torch.nn.ModuleList(Block(h, a, kv, f, gated, llama, dropout) for _ in range(layers))
        self.norm = torch.nn.RMSNorm(h, eps=1e-5) if llama else torch.nn.LayerNorm(h)
        d = h // a
        cos, sin = rope_tables(seq, d, 10000)
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)

    def forward(self, tokens, labels):
        x = self.embed(tokens)
        if self.pos is not None:
            x = x + self.pos.weight[: tokens.shape[1]]
        x = F.dropout(x, self.p, self.training)
        for blk in self.blocks:
            x = blk(x, self.cos, self.sin)
        x = self.norm(x)
        logits = x @ self.embed.weight.t()  # both models tie the output layer to the word embedding
        return F.cross_entropy(logits.view(-1, logits.shape[-1]).float(), labels.view(-1))


class MixedAdam:
    """Megatron-LM's mixed precision: BF16 weights and gradients, FP32 main weights and Adam moments."""

    def __init__(self, params):
        self.params = [p for p in params]
        self.main = [p.detach().float() for p in self.params]
        for m in self.main:
            m.requires_grad_(True)
        self.opt = torch.optim.AdamW(self.main, lr=1e-5, fused=True)

    def step(self):
        for p, m in zip(self.params, self.main):
            m.grad = p.grad.float()
        self.opt.step()
        with torch.no_grad():
            try:
                torch._foreach_copy_(self.params, self.main)
            except Exception:
                for p, m in zip(self.params, self.main):
                    p.copy_(m)
        for p in self.params:
            p.grad = None


STEP_BACKENDS = None
STEPS = [
    # name, layers, hidden, heads, kv heads, ffn, gated, vocab (padded), seq, micro-batch, llama-style, dropout
    ("megatron-gpt2-54", 54, 1920, 20, 20, 7680, False, 50304, 1024, 4, False, 0.1),
    ("llama-3.2-1b", 16, 2048, 32, 8, 8192, True, 128256, 4096, 2, True, 0.0),
]


def time_step(model, opt, tokens, labels, runs, warm_up):
    """Seconds of forward, backward and optimizer of each of the runs after the first warm_up, by CUDA events
    (the peak-memory counters reset first)."""
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(4)]
    fwd, bwd, optim = [], [], []
    torch.cuda.reset_peak_memory_stats()
    for i in range(runs):
        ev[0].record()
        loss = model(tokens, labels)
        ev[1].record()
        loss.backward()
        ev[2].record()
        opt.step()
        ev[3].record()
        torch.cuda.synchronize()
        if i >= warm_up:
            fwd.append(ev[0].elapsed_time(ev[1]) / 1e3)
            bwd.append(ev[1].elapsed_time(ev[2]) / 1e3)
            optim.append(ev[2].elapsed_time(ev[3]) / 1e3)
    return fwd, bwd, optim


def step_rows(compiled=False):
    out = []
    for name, layers, h, a, kv, f, gated, vocab, seq, mbs, llama, dropout in STEPS:
        try:
            torch.manual_seed(0)
            model = Gpt(layers, h, a, kv, f, gated, vocab, seq, llama, dropout).to(DEV, torch.bfloat16)
            model.train()
            if compiled:  # fuse the element-wise work as Megatron-LM's fused kernels do
                model = torch.compile(model)
            opt = MixedAdam(model.parameters())
            tokens = torch.randint(0, vocab, (mbs, seq), device=DEV)
            labels = torch.randint(0, vocab, (mbs, seq), device=DEV)
            fwd, bwd, optim = time_step(model, opt, tokens, labels, runs=8, warm_up=3)
            med = lambda v: sorted(v)[len(v) // 2]
            params = sum(p.numel() for p in model.parameters())
            kernels = kernel_breakdown(model, opt, tokens, labels)
            out.append(dict(model=name, compiled=compiled, layers=layers, hidden=h, heads=a, kv_heads=kv, ffn=f, gated=gated,
                            vocab=vocab, seq=seq, micro_batch=mbs, llama_style=llama, dropout=dropout,
                            parameters=params, forward_s=med(fwd), backward_s=med(bwd), optimizer_s=med(optim),
                            step_s=med(fwd) + med(bwd) + med(optim),
                            peak_memory_bytes=torch.cuda.max_memory_allocated(),
                            reserved_memory_bytes=torch.cuda.max_memory_reserved(), kernels=kernels))
            log(f"step {name}: fwd {med(fwd)*1e3:.1f} ms, bwd {med(bwd)*1e3:.1f} ms, opt {med(optim)*1e3:.1f} ms")
            del model, opt
            torch.cuda.empty_cache()
        except Exception:
            log(f"step {name} failed:\n{traceback.format_exc()}")
    return out


def kernel_breakdown(model, opt, tokens, labels):
    """GPU seconds of one step by kernel kind, from PyTorch's profiler."""
    try:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            loss = model(tokens, labels)
            loss.backward()
            opt.step()
            torch.cuda.synchronize()
        kinds = {}
        cuda = torch.autograd.DeviceType.CUDA
        for evt in prof.key_averages():
            if getattr(evt, "device_type", cuda) != cuda:
                continue
            t = getattr(evt, "self_device_time_total", None)
            if t is None:
                t = getattr(evt, "self_cuda_time_total", 0)
            if not t:
                continue
            name = evt.key.lower()
            if any(s in name for s in ("flash", "fmha", "cudnn", "sdpa", "attention")):
                kind = "attention"
            elif any(s in name for s in ("gemm", "nvjet", "xmma", "cutlass", "sm90", "ampere_bf16", "matmul")):
                kind = "gemm"
            elif "adam" in name:
                kind = "optimizer"
            else:
                kind = "other"
            kinds.setdefault(kind, [0.0, 0])
            kinds[kind][0] += t / 1e6
            kinds[kind][1] += evt.count
        return {k: {"seconds": v[0], "kernels": v[1]} for k, v in kinds.items()}
    except Exception as exc:
        return {"error": repr(exc)}


# ------------------------------------------------------------------------------------------------ main
def environment():
    p = torch.cuda.get_device_properties(0)
    env = dict(device=p.name, sms=p.multi_processor_count, memory_bytes=p.total_memory,
               l2_bytes=getattr(p, "L2_cache_size", None), torch=torch.__version__, cuda=torch.version.cuda,
               cudnn=torch.backends.cudnn.version(), cublas=None, date=time.strftime("%Y-%m-%d"))
    try:
        q = "clocks.max.sm,clocks.max.memory,power.limit,driver_version"
        env["nvidia_smi"] = subprocess.run(["nvidia-smi", f"--query-gpu={q}", "--format=csv"], capture_output=True,
                                           text=True, timeout=20).stdout.strip()
    except Exception as exc:
        env["nvidia_smi"] = repr(exc)
    return env


def prepare(script, out):
    """Checks for a GPU, creates `out`, turns TF32 off and allocates the L2-flushing buffer."""
    global FLUSH, STEP_BACKENDS
    if not torch.cuda.is_available():
        sys.exit(f"{script}: no CUDA GPU")
    os.makedirs(out, exist_ok=True)
    torch.backends.cuda.matmul.allow_tf32 = False
    FLUSH = torch.empty(256 << 20, dtype=torch.int8, device=DEV)
    from torch.nn.attention import SDPBackend
    STEP_BACKENDS = [SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--budget-s", type=float, default=240, help="stop measuring kernels after this many seconds")
    ap.add_argument("--skip", default="", help="comma-separated parts to skip: gemm,attention,stream,step")
    ap.add_argument("--compile", action="store_true", help="also time the training steps under torch.compile")
    args = ap.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    prepare("measure.py", args.out)
    start = time.time()
    env = environment()
    log(json.dumps(env))
    rows = []
    a = torch.randn(8192, 8192, device=DEV, dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device=DEV, dtype=torch.bfloat16)
    t = bench(lambda: a @ b)
    env["bf16_8192_cubed_tflops"] = 2 * 8192 ** 3 / t / 1e12
    rows.append(dict(kind="gemm", model="ceiling", tp=1, op="square", direction="forward", dtype="bf16", batch=1,
                     m=8192, n=8192, k=8192, seq="", head_dim="", causal="", backend="cublas", seconds=t,
                     flop=2 * 8192 ** 3, bytes="", tflops=2 * 8192 ** 3 / t / 1e12))
    del a, b
    parts = [("stream", lambda dl: stream_rows()), ("gemm", gemm_rows), ("attention", attention_rows)]
    budget_end = start + args.budget_s
    for part, fn in parts:
        if part in skip:
            continue
        t0 = time.time()
        try:
            # GEMMs may use up to 55 % of what is left, attention the rest before the training steps.
            deadline = t0 + (budget_end - t0) * (0.55 if part == "gemm" else 1.0)
            got = fn(deadline)
            rows.extend(got)
            log(f"{part}: {len(got)} rows in {time.time() - t0:.1f} s")
        except Exception:
            log(f"{part} failed:\n{traceback.format_exc()}")
        write_rows(args.out, rows)
    steps = [] if "step" in skip else step_rows()
    if args.compile and "step" not in skip:
        steps += step_rows(compiled=True)
    with open(os.path.join(args.out, "steps.json"), "w") as fh:
        json.dump(steps, fh, indent=1)
    env["wall_s"] = time.time() - start
    with open(os.path.join(args.out, "env.json"), "w") as fh:
        json.dump(env, fh, indent=1)
    summary(rows, steps, env)


FIELDS = ["kind", "model", "tp", "op", "direction", "dtype", "batch", "m", "n", "k", "seq", "head_dim", "causal",
          "backend", "seconds", "flop", "bytes", "tflops"]


def write_rows(folder, rows):
    with open(os.path.join(folder, "kernels.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=FIELDS)
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()})


def summary(rows, steps, env):
    log(f"\n{env['device']}: {env.get('bf16_8192_cubed_tflops', 0):.0f} TFLOP/s on 8192^3 BF16, "
        f"{len(rows)} kernel rows, {env['wall_s']:.0f} s")
    for dtype in ("bf16", "e4m3xe4m3", "e5m2xe4m3"):
        tf = [r["tflops"] for r in rows if r["kind"] == "gemm" and r["dtype"] == dtype]
        if tf:
            log(f"gemm {dtype}: {len(tf)} shapes, TFLOP/s min {min(tf):.0f} median {sorted(tf)[len(tf)//2]:.0f} "
                f"max {max(tf):.0f}")
    for r in rows:
        if r["kind"] == "attention" and r["model"].startswith("sweep-d128") and r["causal"] == 1:
            log(f"attention {r['backend']:6s} s={r['seq']:5d} causal {r['direction']:8s} {r['tflops']:.0f} TFLOP/s")
        if r["kind"] in ("stream", "launch"):
            bw = f"{r['bytes'] / r['seconds'] / 1e12:.2f} TB/s" if r["bytes"] else f"{r['seconds'] * 1e6:.2f} us"
            log(f"{r['kind']} {r['op']}: {bw}")
    for s in steps:
        log(f"step {s['model']}{' (compiled)' if s.get('compiled') else ''}: {s['step_s'] * 1e3:.1f} ms (fwd {s['forward_s'] * 1e3:.1f}, bwd "
            f"{s['backward_s'] * 1e3:.1f}, opt {s['optimizer_s'] * 1e3:.1f}), peak {s['peak_memory_bytes'] / 2**30:.1f} GiB")


if __name__ == "__main__":
    main()
