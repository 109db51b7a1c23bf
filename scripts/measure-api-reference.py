#!/usr/bin/env python3
"""What a package's API reference (the api/ pages read from its code) adds
to questions about a function's parameters (issue #63).

For each package of eval/api-reference/questions.json (written before any
ingest): add it as a source (`pypi:NAME==VER`, `npm:NAME@VER`) on a fresh
server and store, time the job, count its chunks (api/ pages and the rest),
ask each of its questions (POST /api/search, the library named) and look at
the top 3 results; then delete the version's api/ documents and ask again.

A question is **answered** when the text of one of the top 3 results (the
page's best chunk, the `text` field) mentions both the symbol's last dotted
part and the parameter name, each as a whole word, case-insensitively.
A second, looser count also reads the result's `heading_path` (which names
the symbol whose section the chunk is in) beside its text: a chunk in the
middle of a long section may list the parameter without repeating the
symbol's name, while its heading path names it.

The server reaches only the package registries: `--rewrite-url
https://=http://127.0.0.1:9/` sends every repository and documentation site
a package names to a port nothing listens on (and the address rules refuse
loopback), so each package takes the archive route; `--allow-address`
admits the addresses the registry hosts resolve to here when those are not
public (a test machine's stand-in), as the integration tests do.

Usage: scripts/measure-api-reference.py [--binary PATH] [--model-dir DIR]
       [--packages click,zod] [--out results.json]
Standard library only; prints a table.
"""
import argparse
import ipaddress
import json
import os
import re
import socket
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import docshelf_proc  # noqa: E402

REGISTRY_HOSTS = ["pypi.org", "files.pythonhosted.org", "registry.npmjs.org"]
ACTIVE = {"running", "publishing", "indexing"}


def registry_addresses():
    """The registry hosts' addresses that are not public (so the address
    rules would refuse them): a machine whose registries sit behind a
    stand-in on a reserved address."""
    found = set()
    for host in REGISTRY_HOSTS:
        try:
            infos = socket.getaddrinfo(host, 443, proto=socket.IPPROTO_TCP)
        except socket.gaierror:
            continue
        for info in infos:
            ip = ipaddress.ip_address(info[4][0])
            if not ip.is_global:
                found.add(str(ip))
    return sorted(found)


class Client:
    def __init__(self, base):
        self.base = base

    def call(self, method, path, body=None, timeout=300):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base + path, method=method, data=data,
                                     headers={"content-type": "application/json"})
        with urllib.request.urlopen(req, timeout=timeout) as res:
            raw = res.read()
            return json.loads(raw) if raw else None

    def documents(self, library, version):
        q = urllib.parse.urlencode({"version": version})
        return self.call("GET", f"/api/libraries/{urllib.parse.quote(library)}/documents?{q}")

    def delete_document(self, library, version, file_path):
        q = urllib.parse.urlencode({"library": library, "version": version, "file_path": file_path})
        return self.call("DELETE", f"/api/documents?{q}")

    def search(self, query, library):
        return self.call("POST", "/api/search", {"query": query, "library": library})


def mentions(text, word):
    return re.search(r"(?<![A-Za-z0-9_])" + re.escape(word) + r"(?![A-Za-z0-9_])",
                     text, re.IGNORECASE) is not None


def ask(client, item):
    """The top 3 of one question: (answered, file_path that answered,
    answered counting heading paths too, top 3 as "path > heading")."""
    name = item["symbol"].split(".")[-1]
    res = client.search(item["question"], item["library"])
    top = res.get("results", [])[:3]
    shown = [f"{r.get('file_path')} :: {r.get('heading_path') or ''}" for r in top]
    answered, loose = None, False
    for r in top:
        text = r.get("text") or ""
        if answered is None and mentions(text, name) and mentions(text, item["parameter"]):
            answered = r.get("file_path")
        both = text + "\n" + (r.get("heading_path") or "")
        if mentions(both, name) and mentions(both, item["parameter"]):
            loose = True
    return answered is not None, answered, loose, shown


def chunk_counts(docs):
    api = sum(d["chunks"] for d in docs if d["file_path"].startswith("api/"))
    other = sum(d["chunks"] for d in docs if not d["file_path"].startswith("api/"))
    api_docs = sum(1 for d in docs if d["file_path"].startswith("api/"))
    return api, other, api_docs, len(docs) - api_docs


def measure_package(client, source, library, items, job_limit_s):
    out = {"source": source, "library": library, "questions": []}
    t0 = time.monotonic()
    try:
        added = client.call("POST", "/api/sources", {"url": source, "library": library})
    except urllib.error.HTTPError as err:
        out.update(state="refused", error=f"{err.code} {err.read().decode(errors='replace')[:500]}")
        return out
    version = added.get("version")
    job = None
    deadline = t0 + job_limit_s
    while time.monotonic() < deadline:
        job = client.call("GET", f"/api/jobs/{added['job_id']}")
        if job["state"] not in ACTIVE:
            break
        time.sleep(1)
    out["ingest_s"] = round(time.monotonic() - t0, 1)
    out["state"] = job["state"] if job else "unknown"
    out["version"] = job.get("version", version) if job else version
    out["notes"] = (job or {}).get("notes", [])
    out["warnings"] = (job or {}).get("warnings", [])
    failed = [f for f in (job or {}).get("files", []) if f.get("state") not in ("stored", "unchanged")]
    out["files_not_stored"] = failed[:20]
    if out["state"] != "done":
        out["error"] = (job or {}).get("error") or f"job ended {out['state']}"
        return out
    version = out["version"]
    docs = client.documents(library, version)
    out["api_chunks"], out["doc_chunks"], out["api_documents"], out["doc_documents"] = chunk_counts(docs)
    out["api_paths"] = [d["file_path"] for d in docs if d["file_path"].startswith("api/")]

    results = []
    for item in items:
        ok, path, loose, top = ask(client, item)
        results.append({"question": item["question"], "symbol": item["symbol"],
                        "parameter": item["parameter"], "with": ok, "with_path": path,
                        "with_heading": loose, "with_top3": top})
    for path in out["api_paths"]:
        client.delete_document(library, version, path)
    left = chunk_counts(client.documents(library, version))
    out["api_chunks_after_delete"] = left[0]
    for r, item in zip(results, items):
        ok, path, loose, top = ask(client, item)
        r.update({"without": ok, "without_path": path, "without_heading": loose,
                  "without_top3": top})
    out["questions"] = results
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--binary", default=os.environ.get("DOCSHELF_BIN", os.path.join(
        os.environ.get("CARGO_TARGET_DIR", os.path.expanduser("~/.cache/docshelf/target")),
        "debug", "docshelf")))
    ap.add_argument("--model-dir", default=os.environ.get(
        "DOCSHELF_MODEL_DIR", os.path.join(ROOT, "models/all-MiniLM-L6-v2")))
    ap.add_argument("--questions", default=os.path.join(ROOT, "eval/api-reference/questions.json"))
    ap.add_argument("--packages", default="", help="comma-separated libraries (default: all)")
    ap.add_argument("--job-limit-s", type=float, default=2400)
    ap.add_argument("--out", default="", help="write the raw results as JSON here")
    args = ap.parse_args()

    with open(args.questions) as f:
        questions = json.load(f)
    order = []
    for q in questions:
        if (q["package"], q["library"]) not in order:
            order.append((q["package"], q["library"]))
    wanted = {p for p in args.packages.split(",") if p}
    if wanted:
        order = [o for o in order if o[1] in wanted]

    extra = ["--rewrite-url", "https://=http://127.0.0.1:9/"]
    allowed = registry_addresses()
    if allowed:
        extra += ["--allow-address", ",".join(allowed)]
    store = tempfile.mkdtemp(prefix="docshelf-api-ref-")
    print(f"binary {args.binary}\nstore {store}\nallowed registry addresses: {allowed or 'none'}",
          flush=True)
    server, base = docshelf_proc.start(args.binary, store, args.model_dir, extra=extra)
    client = Client(base)
    report = {"binary": args.binary, "allowed_addresses": allowed, "packages": []}
    started = time.monotonic()
    try:
        for source, library in order:
            items = [q for q in questions if q["library"] == library]
            print(f"== {source}", flush=True)
            try:
                res = measure_package(client, source, library, items, args.job_limit_s)
            except Exception as err:  # record and go on to the next package
                res = {"source": source, "library": library, "state": "error",
                       "error": repr(err), "questions": []}
            report["packages"].append(res)
            if res.get("state") != "done":
                print(f"   {res.get('state')}: {res.get('error')}", flush=True)
                for note in res.get("notes", []):
                    print(f"   note: {note}", flush=True)
                continue
            for note in res["notes"]:
                print(f"   note: {note}", flush=True)
            print(f"   ingest {res['ingest_s']} s, api/ {res['api_chunks']} chunks in "
                  f"{res['api_documents']} docs, other {res['doc_chunks']} chunks in "
                  f"{res['doc_documents']} docs", flush=True)
            for r in res["questions"]:
                print(f"   [{'x' if r['with'] else ' '}|{'x' if r['without'] else ' '}] "
                      f"({'x' if r['with_heading'] else ' '}|{'x' if r['without_heading'] else ' '}) "
                      f"{r['symbol']} / {r['parameter']}: with {r['with_path']}, "
                      f"without {r['without_path']}", flush=True)
    finally:
        docshelf_proc.stop(server)
    report["total_s"] = round(time.monotonic() - started, 1)

    print()
    print("with / without: top-3 text names the symbol and the parameter; "
          "(+heading): the text or its heading path does")
    head = (f"{'package':<22} {'with':>5} {'without':>8} {'with(+heading)':>15} "
            f"{'without(+heading)':>18} {'api chunks':>11} {'doc chunks':>11} {'ingest s':>9}")
    print(head)
    print("-" * len(head))
    tot = [0, 0, 0, 0, 0]
    for p in report["packages"]:
        qs = p["questions"]
        c = [sum(r[k] for r in qs) for k in ("with", "without", "with_heading", "without_heading")]
        tot = [a + b for a, b in zip(tot, c + [len(qs)])]
        n = len(qs)
        if p.get("state") == "done":
            print(f"{p['source']:<22} {c[0]:>3}/{n} {c[1]:>6}/{n} {c[2]:>13}/{n} {c[3]:>16}/{n} "
                  f"{p['api_chunks']:>11} {p['doc_chunks']:>11} {p['ingest_s']:>9}")
        else:
            print(f"{p['source']:<22} {p.get('state')}: {p.get('error')}")
    print("-" * len(head))
    n = tot[4]
    print(f"{'total':<22} {tot[0]:>3}/{n} {tot[1]:>6}/{n} {tot[2]:>13}/{n} {tot[3]:>16}/{n}"
          f"   (whole run {report['total_s']} s)")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(report, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
