#!/usr/bin/env python3
"""Writes bert32_like.json: a BERT-32-like Piper input (docs/piper.md, "Benchmark").

36 nodes: the token ids (0), the embedding (1), the attention mask (2), 32 transformer layers (3..34) and the
pooler with the loss (35). The layers form a chain; the mask feeds every layer (the skip edges of a BERT
graph). Per transformer layer the TMPCs are Piper's published per-layer figures for BERT-32 on A100s (seconds
per micro-batch and bytes at widths 1, 2, 4 and 8, "vanilla" and "activation recomp"), with its sync bytes
for t > 1. The other nodes' figures are small and made up; edge bytes are those of a micro-batch of 8
sequences of 512 tokens at hidden size 1,024 in fp16. M = 8 GiB, N = 1,920, B = 25 GiB/s; K is set by the
benchmark.
"""
import json

LAYER = {  # t: [(id, p, w, a, b)]
    1: [("vanilla", 0.030492, 176997120, 606478336, 353994240),
        ("activation recomp", 0.040685, 176997120, 48234496, 912500224)],
    2: [("vanilla", 0.018696, 88510080, 341581824, 177020160),
        ("activation recomp", 0.024891, 88510080, 48234496, 470367488)],
    4: [("vanilla", 0.011928, 44266560, 208543744, 88533120),
        ("activation recomp", 0.015604, 44266560, 48234496, 248711296)],
    8: [("vanilla", 0.009396, 22144800, 142811136, 44289600),
        ("activation recomp", 0.012056, 22144800, 48234496, 138604096)],
}
ACTIVATION = 8 * 512 * 1024 * 2  # bytes per micro-batch between layers
MASK = 8 * 512 * 2
TOKENS = 8 * 512 * 4

edges = [(0, 1, TOKENS), (0, 2, TOKENS), (1, 3, ACTIVATION)]
edges += [(v, v + 1, ACTIVATION) for v in range(3, 34)]
edges += [(34, 35, ACTIVATION)]
edges += [(2, v, MASK) for v in range(3, 35)]
preds = {v: [a for a, b, _ in edges if b == v] for v in range(36)}
succs = {v: [b for a, b, _ in edges if a == v] for v in range(36)}


def tmpc(v, t, id_, p, w, a, b):
    fw = {str(u): (0 if t == 1 else (16777216 if u == 2 else 31457280)) for u in preds[v]}
    bw = {str(x): (0 if t == 1 else 31457280) for x in succs[v]}
    if not (3 <= v <= 34):
        fw = {k: 0 for k in fw}
        bw = {k: 0 for k in bw}
    return {"id": id_, "timePerSample": p, "parameterSize": w, "memoryUsageA": a, "memoryUsageB": b,
            "syncTimeFw": fw, "syncTimeBw": bw}


def small(v, t):
    # token ids and mask: nothing to compute; embedding and pooler: a little, with their weights
    p, w = {0: (1e-5, 0), 1: (0.002, 62509056), 2: (1e-5, 0), 35: (0.004, 66854912)}[v]
    return [tmpc(v, t, "vanilla", p / t, w / t, 4 * ACTIVATION / t, 2 * w / t)]


nodes = []
for v in range(36):
    if 3 <= v <= 34:
        widths = {str(t): [tmpc(v, t, *c) for c in LAYER[t]] for t in LAYER}
        name = "ParallelTransformerLayer"
    else:
        widths = {str(t): small(v, t) for t in (1, 2, 4, 8)}
        name = {0: "tokens", 1: "embedding", 2: "mask", 35: "pooler"}[v]
    nodes.append({"id": v, "name": name, "TMPCs": widths})

problem = {"maxMemoryPerDevice": 8 * 1024 ** 3, "maxDevices": 2048, "bandwidth": 25 * 1024 ** 3,
           "mbsInBatch": 1920, "nodes": nodes,
           "edges": [{"sourceId": a, "destId": b, "communicationCost": c} for a, b, c in edges]}
with open("bert32_like.json", "w") as f:
    json.dump(problem, f, indent=1)
    f.write("\n")
