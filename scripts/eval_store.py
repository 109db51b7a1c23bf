"""The evaluation sets as benchmarks use them (eval/README.md): where each
set lives, its queries and judged pages, a store holding every set chosen
(one library per set, version 1), and the search call.

Shared by scripts/bench-budget.py and scripts/bench-intents.py. Standard
library only.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

SETS = ["git-docs", "npm-docs", "hatch-docs", "starlette-docs", "flask-docs", "ai-sdk-docs"]
HELD_OUT = {"hatch-docs", "starlette-docs", "flask-docs", "ai-sdk-docs"}


def add_arguments(parser):
    """The options every eval-set benchmark takes."""
    target = os.environ.get("CARGO_TARGET_DIR") or os.path.expanduser("~/.cache/docshelf/target")
    parser.add_argument("--bin", default=os.path.join(target, "debug", "docshelf"))
    parser.add_argument("--model-dir", default=os.path.join(REPO, "models", "all-MiniLM-L6-v2"))
    parser.add_argument("--sets", default=",".join(SETS), help="comma-separated (default: all six)")
    parser.add_argument("--git-docs",
                        default=os.path.join(os.path.dirname(REPO), "shared", "data", "eval", "git-docs"))
    parser.add_argument("--eval-dir", default=os.environ.get("DOCSHELF_EVAL_DIR")
                        or os.path.expanduser("~/.cache/docshelf/eval"))
    parser.add_argument("--work", help="folder for the store and logs (default: a temporary one)")
    parser.add_argument("--reuse-store", action="store_true",
                        help="serve WORK/store as it is, ingesting nothing (a rerun)")


def set_dir(name, args):
    """The set's folder, fetched with scripts/fetch-eval.sh when missing."""
    if name == "git-docs":
        return args.git_docs
    path = os.path.join(args.eval_dir, name)
    if not os.path.isdir(os.path.join(path, "corpus")):
        print(f"==> fetching {name}", file=sys.stderr, flush=True)
        subprocess.run([os.path.join(HERE, "fetch-eval.sh"), name, path], check=True)
    return path


def read_graded(path):
    """(query id, text, {judged file: relevance}) for every judged query of
    the set in folder `path` (queries.jsonl, qrels.jsonl)."""
    with open(os.path.join(path, "queries.jsonl")) as f:
        queries = [json.loads(line) for line in f if line.strip()]
    judged = {}
    with open(os.path.join(path, "qrels.jsonl")) as f:
        for line in f:
            if line.strip():
                q = json.loads(line)
                if q.get("relevance", 1) > 0:
                    judged.setdefault(q["query_id"], {})[q["file"]] = q.get("relevance", 1)
    return [(q["id"], q["text"], judged[q["id"]]) for q in queries if q["id"] in judged]


def read_set(path):
    """(query id, text, judged files) for every judged query."""
    return [(qid, text, set(files)) for qid, text, files in read_graded(path)]


def judged_name(path):
    """The name a result's stored path is judged under: the path whole, as
    `docshelf eval` compares ids. The sets are stored with their paths
    relative to the corpus, and a file of the same name in another folder
    (flask's `deploying/gevent.rst` for `gevent.rst`) is another page
    (docs/benchmarks.md, 2026-11-27, says what the looser match it replaced
    had counted)."""
    return path.removeprefix("./")


def is_judged(path, judged):
    """Whether a result's stored path is one of the `judged` files."""
    return judged_name(path) in judged


def post(url, body, headers=None, timeout=120):
    """POSTs JSON; the raw body and the headers."""
    req = urllib.request.Request(url, data=json.dumps(body).encode(),
                                 headers={"content-type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as res:
            return res.read(), res.headers
    except urllib.error.HTTPError as err:
        raise SystemExit(f"POST {url}: {err.code} {err.read()[:500]!r}")


def build_store(args, names, dirs, prefix):
    """The binary, the model, the work folder and WORK/store holding every
    set in `names` (ingested fresh unless --reuse-store), and the seconds
    each ingest took."""
    binary, model = os.path.abspath(args.bin), os.path.abspath(args.model_dir)
    if not os.access(binary, os.X_OK):
        raise SystemExit(f"no docshelf binary at {binary} (--bin)")
    work = args.work or tempfile.mkdtemp(prefix=prefix)
    os.makedirs(work, exist_ok=True)
    store = os.path.join(work, "store")
    seconds = {}
    if args.reuse_store:
        if not os.path.isdir(store):
            raise SystemExit(f"--reuse-store: no store at {store}")
        return binary, model, work, store, seconds
    if os.path.exists(store):
        shutil.rmtree(store)
    for n in names:
        started = time.monotonic()
        print(f"==> ingest {n}", file=sys.stderr, flush=True)
        with open(os.path.join(work, f"ingest-{n}.log"), "w") as log:
            rc = subprocess.run([binary, "ingest", os.path.join(dirs[n], "corpus"), "--library", n,
                                 "--version", "1", "--data", store, "--model-dir", model,
                                 "--device", "cpu"], stdout=log, stderr=subprocess.STDOUT).returncode
        if rc != 0:
            raise SystemExit(f"ingest of {n} failed ({rc}); see {log.name}")
        seconds[n] = time.monotonic() - started
    return binary, model, work, store, seconds
