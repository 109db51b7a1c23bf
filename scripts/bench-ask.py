#!/usr/bin/env python3
"""`make bench-ask`: how soon Ask answers, with a real local model.

Starts llama.cpp's llama-server with SmolLM2-135M-Instruct (as
scripts/fetch-llm.sh installs them) and `docshelf serve` pointed at it, on a
fresh store holding part of the git manual, then asks the eval set's
questions one at a time over HTTP and prints, per question and as p50/p90:
  - time to the `sources` event (the search, before the model starts);
  - time to the first `token` (sources + the model reading the prompt);
  - time to `done`, and token events per second (llama-server streams about
    one token an event);
beside the plain search latency of the same questions, for scale.
Every loop is bounded; traffic goes to 127.0.0.1 only. Figures are printed,
never asserted.

Usage: bench-ask.py [--questions N] [--pages N] [--max-tokens N] [--bin PATH]
"""
import argparse
import http.client
import importlib.util
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_spec = importlib.util.spec_from_file_location("bench_load", os.path.join(ROOT, "scripts", "bench-load.py"))
load = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(load)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_llama(llm_dir):
    binary = os.path.join(llm_dir, "bin", "llama-server")
    model = os.path.join(llm_dir, "models", "SmolLM2-135M-Instruct.Q4_1.gguf")
    if not (os.path.exists(binary) and os.path.exists(model)):
        sys.exit(f"no llama-server or model in {llm_dir}: run scripts/fetch-llm.sh")
    port = free_port()
    proc = subprocess.Popen(
        [binary, "--model", model, "--host", "127.0.0.1", "--port", str(port), "--ctx-size", "8192",
         "--parallel", "1", "--threads", "2", "--jinja"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url + "/health", timeout=2) as res:
                if res.status == 200:
                    return proc, url
        except OSError:
            time.sleep(0.2)
    proc.kill()
    sys.exit("llama-server did not become ready in 90 s")


def start_docshelf(binary, store, llm_url, max_tokens):
    model = os.environ.get("DOCSHELF_MODEL_DIR", os.path.join(ROOT, "models", "all-MiniLM-L6-v2"))
    proc = subprocess.Popen(
        [binary, "serve", "--addr", "127.0.0.1:0", "--data", store, "--model-dir", model, "--device", "cpu",
         "--llm-url", llm_url, "--llm-max-tokens", str(max_tokens)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if "listening on http://" in line:
            # Keep draining the log so the server never blocks on a full pipe.
            threading.Thread(target=lambda: [None for _ in proc.stdout], daemon=True).start()
            return proc, line.split("listening on ")[1].split()[0]
    proc.kill()
    sys.exit("docshelf did not start")


def ask(base, question):
    """Times one streamed answer: (to sources, to first token, to done, token events)."""
    host, port = base.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=120)
    started = time.perf_counter()
    conn.request("POST", "/api/ask", json.dumps({"question": question, "library": "git"}),
                 {"content-type": "application/json"})
    res = conn.getresponse()
    if res.status != 200:
        raise RuntimeError(f"ask answered {res.status}: {res.read()[:300]!r}")
    t_sources = t_token = t_done = None
    tokens = 0
    event = None
    for raw in res:
        line = raw.decode("utf-8", "replace").rstrip("\r\n")
        now = (time.perf_counter() - started) * 1000
        if line.startswith("event:"):
            event = line.split(":", 1)[1].strip()
        elif line.startswith("data:") and event:
            if event == "sources" and t_sources is None:
                t_sources = now
            elif event == "token":
                tokens += 1
                if t_token is None:
                    t_token = now
            elif event in ("done", "error"):
                t_done = now
                if event == "error":
                    raise RuntimeError(f"ask failed: {line}")
                break
    conn.close()
    return t_sources, t_token, t_done, tokens


def pct(values, p):
    values = sorted(v for v in values if v is not None)
    if not values:
        return float("nan")
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--questions", type=int, default=20)
    ap.add_argument("--pages", type=int, default=40, help="git manual pages to store")
    ap.add_argument("--max-tokens", type=int, default=200)
    ap.add_argument("--bin", default=os.environ.get("DOCSHELF_BIN") or os.path.join(
        os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "debug", "docshelf"))
    args = ap.parse_args()
    eval_dir = os.path.join(ROOT, "..", "shared", "data", "eval", "git-docs")
    corpus = os.path.join(eval_dir, "corpus")
    files = sorted(os.path.join(corpus, f) for f in os.listdir(corpus))[: args.pages]
    with open(os.path.join(eval_dir, "queries.jsonl")) as f:
        questions = [json.loads(line)["text"] for line in f][: args.questions]
    llm_dir = os.environ.get("DOCSHELF_LLM_DIR", os.path.expanduser("~/.cache/docshelf/llm"))

    llama, llm_url = start_llama(llm_dir)
    with tempfile.TemporaryDirectory(prefix="docshelf-ask-") as store:
        server, base = start_docshelf(args.bin, store, llm_url, args.max_tokens)
        try:
            assert load.wait_job(base, load.upload(base, "git", files), 900), "the upload did not finish"
            ask(base, "warm up")
            print(f"docshelf {args.bin}; llama-server + SmolLM2-135M-Instruct Q4_1 (2 threads); "
                  f"{len(files)} git pages; max {args.max_tokens} tokens; {len(questions)} questions, one at a time")
            rows = []
            for q in questions:
                search_ms = load.request(base, "/api/search", {"query": q, "library": "git"})[1]
                t_sources, t_token, t_done, tokens = ask(base, q)
                rate = tokens / ((t_done - t_token) / 1000) if t_token and t_done and t_done > t_token else None
                rows.append((search_ms, t_sources, t_token, t_done, tokens, rate))
                print(f"  search {search_ms:6.0f} ms  sources {t_sources:6.0f} ms  first token "
                      f"{t_token or float('nan'):6.0f} ms  done {t_done:7.0f} ms  {tokens:3d} tokens  {q[:48]}")
            names = ["plain search ms", "to sources ms", "to 1st token ms", "to done ms", "token events", "events/s"]
            for i, name in enumerate(names):
                col = [r[i] for r in rows]
                print(f"{name:>15}: p50 {pct(col, 50):8.1f}   p90 {pct(col, 90):8.1f}")
        finally:
            server.terminate()
            server.wait(timeout=30)
            llama.terminate()
            llama.wait(timeout=30)


if __name__ == "__main__":
    main()
