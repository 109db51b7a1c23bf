#!/usr/bin/env python3
"""The reference point for docshelf's embedding bench: the same measurements
with sentence-transformers on PyTorch. Called by `cargo bench --bench embed`
with the model directory, a file of chunks (one JSON string a line), a file of
queries, the device (`cpu`, or `cuda` where a GPU is lent) and the batch sizes
(`32`, or a comma list); prints one JSON object."""
import json
import os
import statistics
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402
from sentence_transformers import SentenceTransformer  # noqa: E402


def read(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def main():
    model_dir, chunks_path, queries_path = sys.argv[1:4]
    device = sys.argv[4] if len(sys.argv) > 4 else "cpu"
    batches = [int(b) for b in (sys.argv[5] if len(sys.argv) > 5 else "32").split(",")]
    chunks, queries = read(chunks_path), read(queries_path)
    model = SentenceTransformer(model_dir, device=device)

    def sync():
        if device.startswith("cuda"):
            torch.cuda.synchronize()

    runs = []
    for batch in batches:
        model.encode(chunks[:batch], batch_size=batch)  # warm-up
        sync()
        start = time.perf_counter()
        model.encode(chunks, batch_size=batch)
        sync()
        runs.append({"batch": batch, "chunks_per_sec": len(chunks) / (time.perf_counter() - start)})
    model.encode(queries[:5])
    latencies = []
    for q in queries:
        t = time.perf_counter()
        model.encode([q])
        sync()
        latencies.append((time.perf_counter() - t) * 1000)
    latencies.sort()
    print(json.dumps({
        "torch": torch.__version__,
        "device": device,
        "threads": torch.get_num_threads(),
        "batches": runs,
        "p50_ms": statistics.median(latencies),
        "p99_ms": latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))],
    }))


if __name__ == "__main__":
    main()
