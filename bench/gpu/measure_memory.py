#!/usr/bin/env python3
"""The GPU memory a training process holds besides its tensors, measured on one NVIDIA GPU.

Reads the device's used memory (total − free, as the driver reports it) after each step of a process's
start: the CUDA context, cuBLAS's handle and workspace (a BF16 matrix product), cuDNN's fused attention
forward and backward, and an NCCL communicator (one rank, with an all-reduce), each minus what PyTorch's
allocator holds at that point. Then the allocator's own overhead: the bytes it reserves against the bytes
its tensors occupy at the peak of a training step (forward, backward, Adam) of a small GPT. Writes
memory.json to --out (default $OUT or ".").
"""

import argparse
import json
import os
import subprocess
import tempfile
import time

import torch
import torch.nn.functional as F


def used_bytes():
    free, total = torch.cuda.mem_get_info()
    return total - free


def smi_used_mib():
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=memory.used,memory.total", "--format=csv,noheader,nounits"],
                             capture_output=True, text=True, timeout=20).stdout.strip()
        used, total = (int(x) for x in out.split(","))
        return used, total
    except Exception:
        return None, None


def step(record, name, before):
    torch.cuda.synchronize()
    now = used_bytes()
    reserved = torch.cuda.memory_reserved()
    record[name] = {"device_used_bytes": now, "allocator_reserved_bytes": reserved,
                    "outside_allocator_bytes": now - reserved, "added_outside_allocator_bytes": (now - reserved) - before}
    print(f"{name:28s} used {now / 2**20:9.0f} MiB, allocator {reserved / 2**20:9.0f} MiB, "
          f"outside it {(now - reserved) / 2**20:7.0f} MiB", flush=True)
    return now - reserved


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    args = ap.parse_args()
    rec = {"device": None, "torch": torch.__version__, "cuda": torch.version.cuda,
           "cudnn": torch.backends.cudnn.version(), "date": time.strftime("%Y-%m-%d")}
    smi_before = smi_used_mib()
    rec["nvidia_smi_used_mib_before_process"] = smi_before[0]
    torch.cuda.init()
    x = torch.ones(1, device="cuda")
    rec["device"] = torch.cuda.get_device_name(0)
    rec["device_total_bytes"] = torch.cuda.mem_get_info()[1]
    outside = step(rec, "cuda_context", 0)
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    (a @ b).sum().item()
    outside = step(rec, "cublas_bf16_gemm", outside)
    from torch.nn.attention import SDPBackend, sdpa_kernel
    q, k, v = (torch.randn(1, 32, 8192, 128, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
    with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        o.sum().backward()
    outside = step(rec, "cudnn_attention", outside)
    try:
        import torch.distributed as dist
        path = os.path.join(tempfile.mkdtemp(), "rendezvous")
        dist.init_process_group("nccl", init_method=f"file://{path}", rank=0, world_size=1)
        t = torch.ones(1 << 20, device="cuda")
        dist.all_reduce(t)
        outside = step(rec, "nccl_one_rank", outside)
        dist.destroy_process_group()
    except Exception as exc:
        rec["nccl_one_rank"] = {"error": repr(exc)}
    del a, b, q, k, v, o
    torch.cuda.empty_cache()

    # The allocator's overhead at a training step's peak: reserved against allocated.
    import importlib.util
    spec = importlib.util.spec_from_file_location("measure", os.path.join(os.path.dirname(__file__), "measure.py"))
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    from torch.nn.attention import SDPBackend as B
    m.STEP_BACKENDS = [B.CUDNN_ATTENTION, B.FLASH_ATTENTION]
    steps = []
    for name, layers, h, heads, kv, f, gated, vocab, seq, mbs, llama, dropout in m.STEPS:
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        model = m.Gpt(layers, h, heads, kv, f, gated, vocab, seq, llama, dropout).to("cuda", torch.bfloat16)
        opt = m.MixedAdam(model.parameters())
        tokens = torch.randint(0, vocab, (mbs, seq), device="cuda")
        for _ in range(3):
            model(tokens, tokens).backward()
            opt.step()
        torch.cuda.synchronize()
        steps.append({"model": name, "peak_allocated_bytes": torch.cuda.max_memory_allocated(),
                      "peak_reserved_bytes": torch.cuda.max_memory_reserved(),
                      "device_used_bytes": used_bytes()})
        print(f"step {name}: allocated {steps[-1]['peak_allocated_bytes'] / 2**30:.2f} GiB, reserved "
              f"{steps[-1]['peak_reserved_bytes'] / 2**30:.2f} GiB, device used {steps[-1]['device_used_bytes'] / 2**30:.2f} GiB",
              flush=True)
        del model, opt
    rec["steps"] = steps
    with open(os.path.join(args.out, "memory.json"), "w") as fh:
        json.dump(rec, fh, indent=1)


if __name__ == "__main__":
    main()
