#!/usr/bin/env python3
"""`make bench-crawl`: the crawler measured on real sites served on loopback.

One run, one fresh store, one `docshelf serve --allow-private-urls`:

1. Main-content extraction on real themed sites. Python-Markdown's own
   documentation (the docs/ folder of its pinned sdist from PyPI; MkDocs'
   sdist ships no docs/) is built with MkDocs into one site per theme
   (readthedocs, mkdocs, and mkdocs-material where it installs), each served
   by `python3 -m http.server` and crawled into library `site-<theme>`; the
   same Markdown is uploaded as library `files`. Per theme: the share of the
   stored words that are not in the page's source Markdown (navigation,
   footers, theme text: boilerplate), beside the same share for a naive
   whole-<body> text extraction, and the share of source words kept.
2. Search quality, crawled vs uploaded: the git-docs eval set served as a
   site (plus a generated index page) and crawled, and uploaded as files;
   nDCG@10 and Recall@10 of every query on each.
3. Crawl throughput on loopback: Python's own sequential and concurrent
   fetch of the same pages, docshelf's first crawl, an unchanged refresh
   (304s), and a refresh where every page is sent again unchanged (fetch +
   extract + hash, nothing to embed), whose difference from the first crawl
   is the embedding.
4. Refresh: chunks re-embedded by an unchanged refresh (from /metrics) on
   every site, and by a refresh after one page gained a paragraph.

Prints Markdown tables (also written to $OUT: a directory gets
bench-crawl.md in it); asserts nothing. The MkDocs build runs in a venv
under ~/.cache/docshelf/bench-crawl-venv; the sdist is cached under
~/.cache/docshelf/fixtures. Everything else is the standard library.

Usage: bench-crawl.py [--bin PATH] [--model DIR] [--eval DIR] [--concurrency N] [--no-material]
"""
import argparse
import collections
import concurrent.futures as cf
import hashlib
import html.parser
import json
import math
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid

import docshelf_proc

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CACHE = os.path.expanduser("~/.cache/docshelf")
VENV = os.path.join(CACHE, "bench-crawl-venv")

# Pinned so that runs compare: the docs, the site generator and its themes.
DOCS_SDIST = ("markdown", "3.6", "Markdown-3.6.tar.gz",
              "ed4f41f6daecbeeb96e576ce414c41d2d876daa9a16cb35fa8ed8c2ddfad0224")
MKDOCS = "mkdocs==1.6.0"
MATERIAL = "mkdocs-material==9.5.20"

# What a touched page gains: words no page has, so the changed page is the
# one that must be embedded again.
MARKER = "Zyxwvut bench crawl marker paragraph appended to check that a refresh sees one changed page."


# ---------------------------------------------------------------- helpers

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def log(message):
    """Progress on stderr: a long run on a slow machine should show where it is."""
    print(f"bench-crawl: {message}", file=sys.stderr, flush=True)


def http_json(base, path, body=None, method=None, timeout=300):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(base + path, data=data, method=method,
                                 headers={"content-type": "application/json"} if data else {})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as res:
            return json.load(res)
    except urllib.error.HTTPError as err:
        raise SystemExit(f"{method or ('POST' if data else 'GET')} {path}: {err.code} {err.read()[:500]!r}")


def vectors(base):
    """The model/reused chunk counters: deltas around a job are what it embedded."""
    with urllib.request.urlopen(base + "/metrics", timeout=60) as res:
        text = res.read().decode()
    found = dict(re.findall(r'^docshelf_upload_vectors_total\{source="(\w+)"\}\s+(\d+)', text, re.M))
    return int(found.get("model", 0)), int(found.get("reused", 0))


def wait_job(base, job, limit_s=3600):
    """Polls (0.1 s grain, finer than the figures need) until the job ends; its final state."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        state = http_json(base, f"/api/jobs/{job}")["state"]
        if state in ("done", "failed", "cancelled", "interrupted"):
            return state
        time.sleep(0.1)
    return "timeout"


def timed_job(base, start):
    """Runs `start()` (which returns the 202 body), waits for its job; the
    wall time from request to end, the state, and the chunks embedded and
    reused meanwhile (jobs run one at a time here, so the delta is its own)."""
    m0, r0 = vectors(base)
    t0 = time.perf_counter()
    accepted = start()
    state = wait_job(base, accepted["job_id"])
    wall = time.perf_counter() - t0
    m1, r1 = vectors(base)
    return {"accepted": accepted, "state": state, "wall": wall, "model": m1 - m0, "reused": r1 - r0}


def summary_of(base, source_id, job_id):
    """The source's last_refresh for this job (it is written as the job ends)."""
    for _ in range(100):
        info = http_json(base, f"/api/sources/{source_id}")
        last = info.get("last_refresh") or {}
        if last.get("job_id") == job_id:
            return last
        time.sleep(0.1)
    return {}


def crawl(base, url, library, version, max_pages=500):
    run = timed_job(base, lambda: http_json(base, "/api/sources", {
        "url": url, "library": library, "version": version, "max_pages": max_pages}))
    run["summary"] = summary_of(base, run["accepted"]["source_id"], run["accepted"]["job_id"])
    log(f"crawled {url} into {library}: {run['state']} in {run['wall']:.1f} s, {run['model']} chunks embedded, "
        f"summary {json.dumps(run['summary'])[:600]}")
    return run


def refresh(base, source_id):
    run = timed_job(base, lambda: http_json(base, f"/api/sources/{source_id}/refresh", method="POST"))
    run["summary"] = summary_of(base, source_id, run["accepted"]["job_id"])
    log(f"refreshed {source_id}: {run['state']} in {run['wall']:.1f} s, {run['model']} chunks embedded, "
        f"summary {json.dumps(run['summary'])[:600]}")
    return run


def upload(base, library, version, files):
    """`files`: (stored name, path) pairs; the name keeps its folders."""
    boundary = uuid.uuid4().hex
    parts = [f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'.encode()
             for k, v in (("library", library), ("version", version))]
    for name, path in files:
        with open(path, "rb") as f:
            parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
                         f'Content-Type: application/octet-stream\r\n\r\n'.encode() + f.read() + b"\r\n")
    parts.append(f"--{boundary}--\r\n".encode())

    def start():
        req = urllib.request.Request(base + "/api/upload", data=b"".join(parts),
                                     headers={"content-type": f"multipart/form-data; boundary={boundary}"})
        with urllib.request.urlopen(req, timeout=600) as res:
            return json.load(res)
    run = timed_job(base, start)
    log(f"uploaded {len(files)} files into {library}: {run['state']} in {run['wall']:.1f} s, {run['model']} chunks embedded")
    return run


def stored_documents(base, library, version):
    """{file_path: stored text} of a library version, each read whole."""
    q = urllib.parse.quote
    infos = http_json(base, f"/api/libraries/{q(library)}/documents?version={q(version)}")
    docs = {}
    for info in infos:
        path = info["file_path"]
        doc = http_json(base, f"/api/documents?library={q(library)}&version={q(version)}&file_path={q(path, safe='')}")
        docs[path] = doc["text"]
    return docs


class StaticServer:
    """`python3 -m http.server` on a loopback port, serving `directory`."""

    def __init__(self, directory):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "http.server", str(self.port), "--bind", "127.0.0.1", "--directory", directory],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            try:
                urllib.request.urlopen(self.url, timeout=5).read()
                return
            except OSError:
                time.sleep(0.1)
        raise SystemExit(f"http.server for {directory} did not start")

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=10)


# ------------------------------------------------------- words, extraction

def words(text):
    return collections.Counter(re.findall(r"[^\W_]+", text.lower()))


class BodyText(html.parser.HTMLParser):
    """The naive reference extraction: every text node of <body>, less
    scripts and styles, as a page reader with no main-content detection
    would index it."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.in_body = False
        self.skip = 0
        self.out = []

    def handle_starttag(self, tag, attrs):
        if tag == "body":
            self.in_body = True
        elif tag in ("script", "style"):
            self.skip += 1

    def handle_endtag(self, tag):
        if tag in ("script", "style") and self.skip:
            self.skip -= 1

    def handle_data(self, data):
        if self.in_body and not self.skip:
            self.out.append(data)


def naive_text(html_text):
    p = BodyText()
    p.feed(html_text)
    return " ".join(p.out)


def word_shares(pairs):
    """pairs: (extracted text, source text). Summed over pages: the share of
    extracted words not in the source (multiset difference), the share of
    source words that were extracted, the words extracted, and the extra
    words themselves (a Counter)."""
    extra, total, kept, source_total = collections.Counter(), 0, 0, 0
    for text, source in pairs:
        got, want = words(text), words(source)
        extra += got - want
        total += sum(got.values())
        kept += sum((got & want).values())
        source_total += sum(want.values())
    return sum(extra.values()) / max(1, total), kept / max(1, source_total), total, extra


def top_words(extra, n=8):
    return ", ".join(f"{w} ({c})" for w, c in extra.most_common(n)) or "-"


def source_for(url_path, docs_dir):
    """The Markdown a page was built from, by MkDocs' directory URLs:
    `/` is index.md, `a/b/` is a/b.md or a/b/index.md."""
    path = url_path.lstrip("/")
    if path.endswith("index.html"):
        path = path[: -len("index.html")]
    path = path.rstrip("/")
    for candidate in ([path + ".md", path + "/index.md"] if path else ["index.md"]):
        full = os.path.join(docs_dir, candidate)
        if os.path.isfile(full):
            return full
    return None


def touch_page(path):
    """Adds a paragraph at the top of the page's main content (after the
    first heading of MkDocs themes, inside asciidoc's #content)."""
    with open(path, encoding="utf-8") as f:
        page = f.read()
    para = f"<p>{MARKER}</p>"
    for anchor in ('<div id="content">', "</h1>"):
        at = page.find(anchor)
        if at >= 0:
            at += len(anchor)
            page = page[:at] + para + page[at:]
            break
    else:
        raise SystemExit(f"no place for a paragraph in {path}")
    before = os.stat(path).st_mtime
    with open(path, "w", encoding="utf-8") as f:
        f.write(page)
    # Last-Modified has whole seconds: a page touched within the second of
    # its last change would still answer 304 to the refresh.
    later = max(time.time(), before + 2)
    os.utime(path, (later, later))


# --------------------------------------------------------- fixtures, sites

def docs_sdist():
    """The pinned sdist, from PyPI's JSON simple index, checked against the
    pinned sha256 (and the index's), cached; its extracted root."""
    name, version, filename, sha = DOCS_SDIST
    cache = os.path.join(CACHE, "fixtures")
    os.makedirs(cache, exist_ok=True)
    archive = os.path.join(cache, filename)
    if not os.path.exists(archive):
        req = urllib.request.Request(f"https://pypi.org/simple/{name}/",
                                     headers={"Accept": "application/vnd.pypi.simple.v1+json"})
        with urllib.request.urlopen(req, timeout=60) as res:
            files = {f["filename"]: f for f in json.load(res)["files"]}
        entry = files[filename]
        if entry["hashes"].get("sha256") != sha:
            raise SystemExit(f"PyPI lists {filename} with another sha256 than pinned")
        with urllib.request.urlopen(entry["url"], timeout=300) as res:
            data = res.read()
        if hashlib.sha256(data).hexdigest() != sha:
            raise SystemExit(f"{filename}: sha256 mismatch")
        with open(archive + ".part", "wb") as f:
            f.write(data)
        os.replace(archive + ".part", archive)
    with open(archive, "rb") as f:
        if hashlib.sha256(f.read()).hexdigest() != sha:
            raise SystemExit(f"cached {archive}: sha256 mismatch; delete it")
    return archive


def mkdocs_venv(want_material, notes):
    """The venv's python, with MkDocs (and Material, if it installs)."""
    python = os.path.join(VENV, "bin", "python")
    if not os.path.exists(python):
        subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
    have = lambda mod: subprocess.run([python, "-c", f"import {mod}"], capture_output=True).returncode == 0
    if not have("mkdocs"):
        subprocess.run([python, "-m", "pip", "install", "-q", MKDOCS], check=True)
    if want_material and not have("material"):
        r = subprocess.run([python, "-m", "pip", "install", "-q", MATERIAL], capture_output=True, text=True)
        if r.returncode != 0:
            notes.append(f"{MATERIAL} did not install: {r.stderr.strip()[-300:]}")
    return python, want_material and have("material")


def build_site(python, docs_dir, theme, out_dir, notes):
    """A MkDocs site of `docs_dir` with `theme`. The config is minimal on
    purpose: the docs' own one needs plugins (mkdocstrings, gen-files) and
    a theme that are not the point here; the Python-Markdown extensions it
    uses ship with MkDocs."""
    os.makedirs(out_dir, exist_ok=True)
    config = os.path.join(out_dir, "mkdocs.yml")
    with open(config, "w") as f:
        f.write(f"site_name: Python-Markdown\ndocs_dir: {docs_dir}\nsite_dir: {out_dir}/site\n"
                f"use_directory_urls: true\ntheme:\n  name: {theme}\nplugins: []\n"
                "markdown_extensions:\n  - extra\n  - admonition\n  - toc\n")
    r = subprocess.run([python, "-m", "mkdocs", "build", "-q", "-f", config], capture_output=True, text=True)
    if r.returncode != 0:
        notes.append(f"mkdocs build ({theme}) failed: {r.stderr.strip()[-300:]}")
        return None
    return os.path.join(out_dir, "site")


# ------------------------------------------------------------- ranking

def ndcg_recall(ranked, qrels, k=10):
    rel = qrels
    dcg = sum(rel.get(name, 0) / math.log2(i + 2) for i, name in enumerate(ranked[:k]))
    ideal = sorted(rel.values(), reverse=True)[:k]
    idcg = sum(r / math.log2(i + 2) for i, r in enumerate(ideal))
    found = len({n for n in ranked[:k] if rel.get(n, 0) > 0})
    positives = sum(1 for r in rel.values() if r > 0)
    return (dcg / idcg if idcg else 0.0), (found / positives if positives else 0.0)


def page_name(file_path):
    """The file name at the end of a path or URL: how a crawled result and
    an uploaded one name the same page."""
    return file_path.split("?")[0].split("#")[0].rstrip("/").rsplit("/", 1)[-1]


def evaluate(base, library, queries, qrels):
    ndcgs, recalls = [], []
    for q in queries:
        res = http_json(base, "/api/search", {"query": q["text"], "library": library, "k": 10})
        ranked = []
        for r in res["results"]:
            name = page_name(r["file_path"])
            if name not in ranked:
                ranked.append(name)
        n, r = ndcg_recall(ranked, qrels.get(q["id"], {}))
        ndcgs.append(n)
        recalls.append(r)
    return sum(ndcgs) / len(ndcgs), sum(recalls) / len(recalls)


# ------------------------------------------------------------- fetching

def fetch_all(urls, workers):
    def get(url):
        with urllib.request.urlopen(url, timeout=60) as res:
            return len(res.read())
    t0 = time.perf_counter()
    if workers == 1:
        total = sum(get(u) for u in urls)
    else:
        with cf.ThreadPoolExecutor(workers) as pool:
            total = sum(pool.map(get, urls))
    return time.perf_counter() - t0, total


# ---------------------------------------------------------------- report

def table(head, rows):
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def pct(x):
    return f"{100 * x:.1f}%"


def rate(pages, wall):
    return f"{pages / wall:.1f}" if wall > 0 else "-"


def refresh_row(label, run):
    s = run["summary"]
    return [label, run["state"], f"{run['wall']:.1f}", s.get("pages", "?"), s.get("changed", "?"),
            s.get("unchanged", "?"), s.get("removed", "?"), s.get("failed", "?"), run["model"], run["reused"]]


REFRESH_HEAD = ["run", "state", "wall s", "pages", "changed", "unchanged", "removed", "failed",
                "chunks embedded", "chunks reused"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.environ.get("DOCSHELF_BIN") or os.path.join(
        os.environ.get("CARGO_TARGET_DIR", os.path.join(CACHE, "target")), "debug", "docshelf"))
    ap.add_argument("--model", default=os.environ.get("DOCSHELF_MODEL_DIR", os.path.join(ROOT, "models", "all-MiniLM-L6-v2")))
    ap.add_argument("--eval", default=os.path.join(ROOT, "..", "shared", "data", "eval", "git-docs"),
                    help="the git-docs eval set (corpus/, queries.jsonl, qrels.jsonl)")
    ap.add_argument("--concurrency", type=int, default=4, help="docshelf's --crawl-concurrency, and Python's fetch threads")
    ap.add_argument("--no-material", action="store_true", help="leave mkdocs-material out")
    ap.add_argument("--git-pages", type=int, default=0,
                    help="only the first N git-docs pages (and the queries judged on them): a quick try")
    args = ap.parse_args()
    if not os.path.isdir(os.path.join(args.eval, "corpus")):
        raise SystemExit(f"no git-docs eval set at {args.eval} (--eval DIR)")

    began = time.perf_counter()
    notes, report = [], []
    work = tempfile.mkdtemp(prefix="bench-crawl-")
    statics, server = [], None
    try:
        # -- fixtures first, so a network failure ends the run before the server starts.
        archive = docs_sdist()
        subprocess.run(["tar", "xzf", archive, "-C", work], check=True)
        docs_dir = os.path.join(work, DOCS_SDIST[2][: -len(".tar.gz")], "docs")
        python, material = mkdocs_venv(not args.no_material, notes)
        themes = ["readthedocs", "mkdocs"] + (["material"] if material else [])
        sites = {}
        for theme in themes:
            site = build_site(python, docs_dir, theme, os.path.join(work, f"site-{theme}"), notes)
            if site:
                sites[theme] = site
        md_files = sorted(os.path.relpath(os.path.join(d, f), docs_dir)
                          for d, _, fs in os.walk(docs_dir) for f in fs if f.endswith(".md"))

        # The git manual as a site: its pages plus an index linking each
        # (the pages link each other, but not all are reachable from one).
        git_site = os.path.join(work, "git-site")
        shutil.copytree(os.path.join(args.eval, "corpus"), git_site)
        git_pages = sorted(f for f in os.listdir(git_site) if f.endswith(".html"))
        if args.git_pages:
            # The pages left out stay unlinked, so that the quick try is no
            # crawl full of 404s.
            for p in git_pages[args.git_pages:]:
                os.remove(os.path.join(git_site, p))
            git_pages = git_pages[: args.git_pages]
            kept = set(git_pages)
            for p in git_pages:
                path = os.path.join(git_site, p)
                with open(path, encoding="utf-8") as f:
                    page = f.read()
                page = re.sub(r'href="([^"#]*\.html)[^"]*"',
                              lambda m: m.group(0) if m.group(1) in kept else 'href="#"', page)
                with open(path, "w", encoding="utf-8") as f:
                    f.write(page)
        with open(os.path.join(git_site, "index.html"), "w") as f:
            f.write("<!doctype html><html><head><title>Git manual</title></head><body><h1>Git manual</h1><ul>\n"
                    + "".join(f'<li><a href="{p}">{p[:-5]}</a></li>\n' for p in git_pages) + "</ul></body></html>\n")
        queries = [json.loads(l) for l in open(os.path.join(args.eval, "queries.jsonl")) if l.strip()]
        qrels = collections.defaultdict(dict)
        for l in open(os.path.join(args.eval, "qrels.jsonl")):
            if l.strip():
                j = json.loads(l)
                qrels[j["query_id"]][j["file"]] = j.get("relevance", 1)
        queries = [q for q in queries if set(qrels[q["id"]]) & set(git_pages)]

        site_statics = {theme: StaticServer(site) for theme, site in sites.items()}
        statics.extend(site_statics.values())
        git_static = StaticServer(git_site)
        statics.append(git_static)
        server, base = docshelf_proc.start(args.bin, os.path.join(work, "data"), args.model, extra=[
            "--allow-private-urls", "--crawl-rate", "1000", "--crawl-concurrency", str(args.concurrency)])

        # ---------------------------------------------- 3 (first): git-docs throughput
        urls = [git_static.url + p for p in git_pages]
        # Best of three: one pass is a fraction of a second, at the mercy of the scheduler.
        seq_s, nbytes = min(fetch_all(urls, 1) for _ in range(3))
        conc_s, _ = min(fetch_all(urls, args.concurrency) for _ in range(3))
        first = crawl(base, git_static.url, "git-site", "1")
        unchanged = refresh(base, first["accepted"]["source_id"])
        # Every page sent whole again, its bytes unchanged: the refresh now
        # fetches, extracts and hashes each page but has nothing to embed.
        now = time.time()
        for p in git_pages + ["index.html"]:
            os.utime(os.path.join(git_site, p), (now, now))
        resent = refresh(base, first["accepted"]["source_id"])
        touch_page(os.path.join(git_site, "git-add.html"))
        git_touched = refresh(base, first["accepted"]["source_id"])
        git_upload = upload(base, "git-files", "1", [(p, os.path.join(args.eval, "corpus", p)) for p in git_pages])

        # ---------------------------------------------- 2: search quality
        site_q = evaluate(base, "git-site", queries, qrels)
        files_q = evaluate(base, "git-files", queries, qrels)

        # ---------------------------------------------- 1: MkDocs sites
        md_upload = upload(base, "files", "1", [(m, os.path.join(docs_dir, m)) for m in md_files])
        site_runs = {}
        quality_rows, extra_rows = [], []
        docs = stored_documents(base, "files", "1")
        pairs = [(docs[m], open(os.path.join(docs_dir, m), encoding="utf-8").read()) for m in md_files if m in docs]
        share, kept, total, _ = word_shares(pairs)
        quality_rows.append(["uploaded Markdown (`files`)", len(pairs), total, pct(share), pct(kept), "-", "-"])
        for theme, site in sites.items():
            site_runs[theme] = run = {}
            run["crawl"] = crawl(base, site_statics[theme].url, f"site-{theme}", "1")
            run["refresh"] = refresh(base, run["crawl"]["accepted"]["source_id"])
            # Extraction quality, read before a page is touched (the marker
            # is in no source Markdown).
            crawled, naive, unmapped = [], [], []
            for url, text in stored_documents(base, f"site-{theme}", "1").items():
                path = urllib.parse.urlsplit(url).path
                md = source_for(path, docs_dir)
                if md is None:
                    unmapped.append(path)
                    continue
                source = open(md, encoding="utf-8").read()
                rel = path.lstrip("/")
                page = os.path.join(site, rel) if rel.endswith(".html") else os.path.join(site, rel, "index.html")
                crawled.append((text, source))
                naive.append((naive_text(open(page, encoding="utf-8").read()), source))
            if unmapped:
                notes.append(f"site-{theme}: {len(unmapped)} crawled pages with no source Markdown, left out: {unmapped[:5]}")
            c_share, c_kept, c_total, c_extra = word_shares(crawled)
            n_share, n_kept, _, n_extra = word_shares(naive)
            extra_rows.append([f"`{theme}`", top_words(c_extra), top_words(n_extra)])
            quality_rows.append([f"MkDocs `{theme}` theme (`site-{theme}`)", len(crawled), c_total, pct(c_share),
                                 pct(c_kept), pct(n_share), pct(n_kept)])
            touch_page(os.path.join(site, "install", "index.html"))
            run["touched"] = refresh(base, run["crawl"]["accepted"]["source_id"])

        # ---------------------------------------------- report
        pages = first["summary"].get("pages", 0)
        report.append("## 1. Main-content extraction (Python-Markdown 3.6 docs, "
                      f"{len(md_files)} Markdown files, built with {MKDOCS})\n")
        report.append(table(["library", "pages", "stored words", "not from source (boilerplate)",
                             "source words kept", "naive <body>: not from source", "naive: source words kept"],
                            quality_rows))
        report.append("\nWords are lowercase letter/digit runs; 'not from source' is the multiset difference "
                      "stored − source Markdown per page, summed. Source Markdown includes link URLs and "
                      "markup words that no rendering shows, so 'kept' stays under 100% even for a perfect extraction.\n")
        report.append("Most frequent words not from the source (count over all pages):\n")
        report.append(table(["theme", "docshelf", "naive <body>"], extra_rows) + "\n")
        crawl_rows = [[f"site-{t}", r["crawl"]["state"], f"{r['crawl']['wall']:.1f}", r["crawl"]["summary"].get("pages", "?"),
                       r["crawl"]["summary"].get("failed", "?"), r["crawl"]["model"]] for t, r in site_runs.items()]
        crawl_rows.append(["files (upload)", md_upload["state"], f"{md_upload['wall']:.1f}", len(md_files), "-", md_upload["model"]])
        report.append(table(["library", "state", "wall s", "pages", "failed", "chunks embedded"], crawl_rows))

        report.append(f"\n## 2. Search quality, git-docs ({len(queries)} queries, k=10)\n")
        report.append(table(["library", "pages", "nDCG@10", "Recall@10"], [
            ["git-site (crawled)", pages, f"{site_q[0]:.3f}", f"{site_q[1]:.3f}"],
            ["git-files (uploaded)", len(git_pages), f"{files_q[0]:.3f}", f"{files_q[1]:.3f}"]]))

        report.append(f"\n## 3. Crawl throughput, git-docs on loopback ({len(git_pages)} pages + index, "
                      f"{nbytes / 2**20:.1f} MiB, --crawl-concurrency {args.concurrency})\n")
        embed_s = first["wall"] - resent["wall"]
        report.append(table(["what", "wall s", "pages/s", "chunks embedded"], [
            ["Python urllib fetch, sequential (best of 3)", f"{seq_s:.2f}", rate(len(urls), seq_s), "-"],
            [f"Python urllib fetch, {args.concurrency} threads (best of 3)", f"{conc_s:.2f}", rate(len(urls), conc_s), "-"],
            ["docshelf first crawl (fetch + extract + embed + publish)", f"{first['wall']:.1f}", rate(pages, first["wall"]), first["model"]],
            ["docshelf refresh, unchanged (304 Not Modified)", f"{unchanged['wall']:.1f}", rate(unchanged["summary"].get("pages", 0), unchanged["wall"]), unchanged["model"]],
            ["docshelf refresh, every page re-sent unchanged (fetch + extract + hash)", f"{resent['wall']:.1f}", rate(resent["summary"].get("pages", 0), resent["wall"]), resent["model"]],
            ["embedding, by difference (first crawl − re-sent refresh)", f"{embed_s:.1f}", "-", first["model"]],
            ["docshelf upload of the same files (extract + embed + publish)", f"{git_upload['wall']:.1f}", rate(len(git_pages), git_upload["wall"]), git_upload["model"]],
        ]))

        report.append("\n## 4. Refresh\n")
        rows = [refresh_row("git-site first crawl", first), refresh_row("git-site unchanged (304s)", unchanged),
                refresh_row("git-site re-sent, same bytes", resent), refresh_row("git-site one page touched", git_touched)]
        for t, r in site_runs.items():
            rows += [refresh_row(f"site-{t} first crawl", r["crawl"]), refresh_row(f"site-{t} unchanged", r["refresh"]),
                     refresh_row(f"site-{t} one page touched", r["touched"])]
        report.append(table(REFRESH_HEAD, rows))

        if unchanged["summary"].get("changed"):
            notes.append(f"the git-site 'unchanged' refresh changed {unchanged['summary']['changed']} page(s): pages that "
                         "failed in the first crawl and were taken now; the re-sent refresh after it is the clean one")
        # Failures grouped by reason, per run: a crawl's 404s (links out of
        # the served pages) read differently from timeouts.
        runs = [("git-site first crawl", first), ("git-site unchanged refresh", unchanged)]
        runs += [(f"site-{t} first crawl", r["crawl"]) for t, r in site_runs.items()]
        for name, run in runs:
            by_reason = collections.defaultdict(list)
            for f in run["summary"].get("failures", []):
                by_reason[f["reason"]].append(urllib.parse.urlsplit(f["url"]).path)
            for reason, paths in sorted(by_reason.items()):
                notes.append(f"{name}: {len(paths)} failed, {reason}: {', '.join(paths[:8])}"
                             + (" …" if len(paths) > 8 else ""))
            for n in run["summary"].get("notes", []):
                notes.append(f"{name}: {n}")
    finally:
        if server:
            docshelf_proc.stop(server)
        for s in statics:
            s.stop()
        shutil.rmtree(work, ignore_errors=True)

    report.append(f"\nTotal run time: {time.perf_counter() - began:.0f} s.")
    if notes:
        report.append("\nNotes:\n" + "\n".join(f"- {n}" for n in notes))
    text = "\n".join(report) + "\n"
    print(text)
    out = os.environ.get("OUT")
    if out:
        with open(os.path.join(out, "bench-crawl.md") if os.path.isdir(out) else out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
