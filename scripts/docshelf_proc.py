"""Starting and stopping a `docshelf serve` for the Python benches, and
uploading files to it.

One way for every bench: a free loopback port, the address read from the
server's own "listening on" line, its output drained afterwards so a full
pipe never stalls it, and a stop that escalates from SIGTERM to SIGKILL.
Standard library only.
"""
import json
import os
import re
import sys
import subprocess
import threading
import time
import urllib.request
import uuid

# Questions about the git manual (the shared eval corpus) the load benches
# search with, in turn.
GIT_QUERIES = [
    "undo the last commit", "show the history of a file", "rename a branch",
    "stash uncommitted changes", "apply a patch from email", "find which commit broke a test",
    "list remote repositories", "merge two branches", "rewrite commit messages",
    "ignore files in a repository", "tag a release", "compare two commits",
    "clean untracked files", "move a file", "configure the user name",
    "fetch from another repository",
]


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


def wait_in_memory(base, wait_s=120, name="docshelf"):
    """Waits until the server answers searches from its in-memory copy of
    the store (read in the background after start-up); False if it never
    does within `wait_s` (a store larger than --resident-mib). Says so
    on stderr then: the results are the same from disk, but any time the
    caller prints is the disk path's."""
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        with urllib.request.urlopen(base + "/api/status", timeout=30) as res:
            if json.loads(res.read())["store"].get("in_memory"):
                return True
        time.sleep(0.2)
    print(f"{name} at {base} did not answer from memory within {wait_s} s: "
          "searches read the store on disk (same results, slower)", file=sys.stderr)
    return False


def stop(server, timeout=30):
    server.terminate()
    try:
        server.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        server.kill()


def upload(base, library, files, timeout=120, transform=None):
    """Uploads `files` (paths) into `library` version 1, each file's bytes
    passed through `transform` first if given; returns the job id."""
    boundary = uuid.uuid4().hex
    parts = []
    for name, value in (("library", library), ("version", "1")):
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode())
    for path in files:
        with open(path, "rb") as f:
            data = f.read()
        if transform is not None:
            data = transform(data)
        head = (f'--{boundary}\r\nContent-Disposition: form-data; name="file"; '
                f'filename="{os.path.basename(path)}"\r\nContent-Type: application/octet-stream\r\n\r\n')
        parts.append(head.encode() + data + b"\r\n")
    parts.append(f"--{boundary}--\r\n".encode())
    req = urllib.request.Request(base + "/api/upload", data=b"".join(parts),
                                 headers={"content-type": f"multipart/form-data; boundary={boundary}"})
    with urllib.request.urlopen(req, timeout=timeout) as res:
        return json.load(res)["job_id"]


def wait_job(base, job, limit_s):
    """Waits up to `limit_s` for `job` to end; whether it ended done (not
    interrupted or cancelled)."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        with urllib.request.urlopen(f"{base}/api/jobs/{job}", timeout=30) as res:
            state = json.load(res)["state"]
            if state in ("done", "interrupted", "cancelled"):
                return state == "done"
        time.sleep(0.5)
    return False
