"""Starting and stopping a `docshelf serve` for the Python benches.

One way for every bench: a free loopback port, the address read from the
server's own "listening on" line, its output drained afterwards so a full
pipe never stalls it, and a stop that escalates from SIGTERM to SIGKILL.
Standard library only.
"""
import re
import subprocess
import threading
import time


def start(binary, store, model, extra=(), wait_s=120):
    """Serve `store` with `binary`; returns (process, base URL) or exits with its log."""
    server = subprocess.Popen(
        [binary, "serve", "--addr", "127.0.0.1:0", "--data", store, "--model-dir", model,
         "--device", "cpu", *extra],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    log, deadline = [], time.monotonic() + wait_s
    while time.monotonic() < deadline:
        line = server.stdout.readline()
        if not line:
            break
        log.append(line)
        m = re.search(r"listening on (http://\S+)", line)
        if m:
            threading.Thread(target=lambda: [None for _ in server.stdout], daemon=True).start()
            return server, m.group(1)
    server.kill()
    raise SystemExit("docshelf did not start:\n" + "".join(log))


def stop(server, timeout=30):
    server.terminate()
    try:
        server.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        server.kill()
