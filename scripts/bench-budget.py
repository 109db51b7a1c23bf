#!/usr/bin/env python3
"""What an agent pays for a search answer, in tokens, and what it gets:
today's answers sized by `k` against answers sized by a token budget
(`max_tokens`), on the eval sets (eval/README.md).

For each set its corpus is ingested into one fresh store (one library per
set, version 1), the store is served, and every query of the set is run,
filtered to the set's library, as:

  k=5, k=10                 POST /api/search without max_tokens (the full JSON)
  budget 1k, 2k, 4k, 8k     POST /api/search with max_tokens 1000 .. 8000

each over REST and over MCP (streamable HTTP at /mcp, tools/call
search_docs with the same arguments). Per answer it counts, with tiktoken's
o200k_base (the tokenizer docshelf's budgets count with):

  REST body      the whole JSON body as received
  context        budgeted answers only: the `context` string, what an
                 agent puts in its prompt
  MCP text       every text content block of the tools/call result
                 (counted block by block, summed)
  MCP text+st.   MCP text plus the structuredContent, as compact JSON;
                 clients commonly hand the model both

and whether the judged page (qrels) is among the answer's results (for a
budgeted answer, its results are exactly the passages in `context`). For
budgeted answers also: how many passages hold their whole section
(`budget.sections`), whether the judged page's passage does ("the
relevant section in context", as far as page-level judgements tell), and
whether the judged page is in the context at all, counting a page named as
a copy of a passage given (`budget.repeats`, "Also in:"). It
prints per set, and over every query together (micro average), one
Markdown table, then the sets side by side, and the wall times.

Usage:
  scripts/bench-budget.py [--bin PATH] [--model-dir DIR] [--sets a,b,..]
                          [--work DIR] [--reuse-store] [--limit N] [--json OUT]
                          [--answers 'k=5,budget 1k,..']

--bin defaults to ${CARGO_TARGET_DIR:-~/.cache/docshelf/target}/debug/docshelf.
Corpora: git-docs from ../shared/data/eval/git-docs, the others from
${DOCSHELF_EVAL_DIR:-~/.cache/docshelf/eval}/NAME (scripts/fetch-eval.sh NAME
is run for one that is missing).

Standard library, plus tiktoken: the script re-runs itself under the venv
scripts/tiktoken-count.sh keeps (~/.cache/docshelf/tiktoken-venv, with
TIKTOKEN_CACHE_DIR pointing at the vocabulary docshelf compiles in), making
it first if needed.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import docshelf_proc  # noqa: E402
from eval_store import (HELD_OUT, add_arguments, build_store, is_judged,  # noqa: E402
                        post, read_set, set_dir)

ANSWERS = [("k=5", {"k": 5}), ("k=10", {"k": 10}),
           ("budget 1k", {"max_tokens": 1000}), ("budget 2k", {"max_tokens": 2000}),
           ("budget 4k", {"max_tokens": 4000}), ("budget 8k", {"max_tokens": 8000})]
# Smaller answers, for a comparison at equal tokens (--answers picks them).
MORE_ANSWERS = [("k=1", {"k": 1}), ("k=2", {"k": 2}), ("k=3", {"k": 3})]
CHILD_FLAG = "DOCSHELF_BENCH_BUDGET_VENV"


# --- tiktoken ---------------------------------------------------------------

def under_tiktoken_venv():
    """Re-executes this script with the tiktoken venv's python (made and
    given its vocabulary by tiktoken-count.sh) unless already there."""
    if os.environ.get(CHILD_FLAG):
        return
    venv = os.environ.get("DOCSHELF_TIKTOKEN_VENV",
                          os.path.expanduser("~/.cache/docshelf/tiktoken-venv"))
    # Counting nothing makes the venv and puts o200k_base in its cache.
    subprocess.run([os.path.join(HERE, "tiktoken-count.sh")], stdin=subprocess.DEVNULL,
                   stdout=subprocess.DEVNULL, check=True)
    env = dict(os.environ, TIKTOKEN_CACHE_DIR=os.path.join(venv, "cache"), **{CHILD_FLAG: "1"})
    python = os.path.join(venv, "bin", "python")
    os.execve(python, [python, os.path.abspath(__file__), *sys.argv[1:]], env)


def encoder():
    import tiktoken
    enc = tiktoken.get_encoding("o200k_base")
    return lambda text: len(enc.encode_ordinary(text))


# --- MCP --------------------------------------------------------------------

class Mcp:
    """A streamable-HTTP MCP client: one session, requests answered as JSON
    or as a server-sent-event stream."""

    def __init__(self, base):
        self.url, self.session, self.next_id = base + "/mcp", None, 0
        init = self.call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                        "clientInfo": {"name": "bench-budget", "version": "0"}})
        assert init.get("serverInfo", {}).get("name") == "docshelf", init
        self.notify("notifications/initialized")

    def headers(self):
        h = {"accept": "application/json, text/event-stream"}
        if self.session:
            h["mcp-session-id"] = self.session
        return h

    def notify(self, method):
        post(self.url, {"jsonrpc": "2.0", "method": method}, self.headers())

    def call(self, method, params):
        self.next_id += 1
        body, headers = post(self.url, {"jsonrpc": "2.0", "id": self.next_id, "method": method,
                                        "params": params}, self.headers())
        self.session = headers.get("mcp-session-id") or self.session
        text = body.decode("utf-8")
        if "text/event-stream" in (headers.get("content-type") or ""):
            messages, data = [], []
            for line in text.splitlines() + [""]:
                if line.startswith("data:"):
                    data.append(line[5:].lstrip(" "))
                elif line == "" and data:
                    chunk = "\n".join(data).strip()
                    data = []
                    if chunk:
                        messages.append(json.loads(chunk))
        else:
            messages = [json.loads(text)]
        for msg in messages:
            if msg.get("id") == self.next_id:
                if "error" in msg:
                    raise SystemExit(f"MCP {method}: {msg['error']}")
                return msg["result"]
        raise SystemExit(f"MCP {method}: no answer in {text[:500]!r}")


def hit(files, judged):
    return any(is_judged(path, judged) for path in files)


# --- one answer -------------------------------------------------------------

def measure(base, mcp, count, name, query, judged, extra):
    args = {"query": query, "library": name, **extra}
    body, _ = post(base + "/api/search", args)
    rest = json.loads(body)
    rest_files = [r["file_path"] for r in rest["results"]]
    row = {"rest_tokens": count(body.decode("utf-8")), "results": len(rest_files),
           "hit": hit(rest_files, judged), "files": rest_files}
    if "max_tokens" in extra:
        row["context_tokens"] = count(rest.get("context") or "")
        row["server_tokens"] = rest["budget"]["tokens"]
        row["left_out"] = rest["budget"]["left_out"]
        repeats = [r["file_path"] for r in rest["budget"].get("repeats") or []]
        row["repeats"] = len(repeats)
        # The judged page named as a copy of a passage given ("Also in:"):
        # its text is in the context, under another page's source.
        row["hit_named"] = row["hit"] or hit(repeats, judged)
        whole = set(rest["budget"].get("sections") or [])
        row["sections"] = len(whole)
        # The judged page's passage holds its whole section (the section,
        # or a best chunk that holds it): "the relevant section in context"
        # as far as page-level judgements can tell.
        row["section_hit"] = any(is_judged(path, judged) and at in whole
                                 for at, path in enumerate(rest_files))

    result = mcp.call("tools/call", {"name": "search_docs", "arguments": args})
    if result.get("isError"):
        raise SystemExit(f"MCP search_docs {args}: {result}")
    texts = [c["text"] for c in result.get("content", []) if c.get("type") == "text"]
    structured = result.get("structuredContent")
    row["mcp_text"] = sum(count(t) for t in texts)
    row["mcp_structured"] = (count(json.dumps(structured, ensure_ascii=False, separators=(",", ":")))
                             if structured is not None else 0)
    row["mcp_total"] = row["mcp_text"] + row["mcp_structured"]
    if structured is None:
        mcp_files = None
    elif "max_tokens" in extra:
        mcp_files = [p["file_path"] for p in structured.get("passages", [])]
    else:
        mcp_files = [r["file_path"] for r in structured.get("results", [])]
    row["mcp_same"] = mcp_files == rest_files
    return row


# --- tables -----------------------------------------------------------------

def mean(xs):
    return sum(xs) / len(xs) if xs else float("nan")


def summary(rows):
    """Per answer kind: the averages over `rows` (one dict per query)."""
    out = {}
    for label, extra in ANSWERS:
        rs = [r[label] for r in rows]
        hits = sum(r["hit"] for r in rs)
        s = {"n": len(rs), "hit_rate": hits / len(rs) if rs else float("nan"),
             "results": mean([r["results"] for r in rs]),
             "rest": mean([r["rest_tokens"] for r in rs]),
             "mcp_text": mean([r["mcp_text"] for r in rs]),
             "mcp_total": mean([r["mcp_total"] for r in rs]),
             "mcp_mismatch": sum(not r["mcp_same"] for r in rs)}
        s["hits_per_1k"] = hits / (sum(r["mcp_total"] for r in rs) / 1000) if rs else float("nan")
        s["hits_per_1k_text"] = hits / (sum(r["mcp_text"] for r in rs) / 1000) if rs else float("nan")
        if "max_tokens" in extra:
            cap = extra["max_tokens"]
            s["context"] = mean([r["context_tokens"] for r in rs])
            s["over_budget"] = sum(r["context_tokens"] > cap or r["server_tokens"] > cap for r in rs)
            s["count_differs"] = sum(r["context_tokens"] != r["server_tokens"] for r in rs)
            s["max_context"] = max((r["context_tokens"] for r in rs), default=0)
            s["sections"] = mean([r["sections"] for r in rs])
            s["hit_named"] = mean([r["hit_named"] for r in rs])
            s["section_hits"] = mean([r["section_hit"] for r in rs])
        out[label] = s
    return out


def table(summ):
    lines = ["| answer | hit rate | results | tokens, REST body | tokens, MCP text | tokens, MCP text+structured "
             "| tokens, context | hits per 1k MCP tokens (text+structured) | hits per 1k MCP text tokens "
             "| whole sections | judged page as a whole section | hit, or named as a copy |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for label, _ in ANSWERS:
        s = summ[label]
        ctx = f"{s['context']:,.0f}" if "context" in s else "–"
        sections = f"{s['sections']:.1f}" if "sections" in s else "–"
        section_hits = f"{s['section_hits']:.3f}" if "section_hits" in s else "–"
        named = f"{s['hit_named']:.3f}" if "hit_named" in s else "–"
        lines.append(f"| {label} | {s['hit_rate']:.3f} | {s['results']:.1f} | {s['rest']:,.0f} "
                     f"| {s['mcp_text']:,.0f} | {s['mcp_total']:,.0f} | {ctx} "
                     f"| {s['hits_per_1k']:.3f} | {s['hits_per_1k_text']:.3f} | {sections} | {section_hits} | {named} |")
    return "\n".join(lines)


def side_by_side(per_set, overall, key, fmt, title):
    names = list(per_set)
    head = "| " + title + " | " + " | ".join(n + ("*" if n in HELD_OUT else "") for n in names) + " | all |"
    lines = [head, "| --- |" + " ---: |" * (len(names) + 1)]
    for label, _ in ANSWERS:
        cells = [fmt(per_set[n][label][key]) for n in names] + [fmt(overall[label][key])]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


# --- main -------------------------------------------------------------------

def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_arguments(p)
    p.add_argument("--limit", type=int, default=0, help="queries per set, 0 for all")
    p.add_argument("--json", help="write every answer's numbers here")
    p.add_argument("--answers", help="comma-separated answer kinds to run (default: k=5, k=10 and the four "
                                     "budgets), e.g. 'k=1,k=2,budget 1k'; k=1, k=2 and k=3 only when named")
    args = p.parse_args()
    if args.answers:
        wanted = [a.strip() for a in args.answers.split(",")]
        known = MORE_ANSWERS + ANSWERS
        unknown = set(wanted) - {label for label, _ in known}
        if unknown:
            raise SystemExit(f"--answers: unknown {sorted(unknown)}; kinds: {[label for label, _ in known]}")
        ANSWERS[:] = [(label, extra) for label, extra in known if label in wanted]

    started = time.monotonic()
    count = encoder()
    names = [s for s in args.sets.split(",") if s]
    dirs = {n: set_dir(n, args) for n in names}
    binary, model, work, store, ingest_s = build_store(args, names, dirs, "bench-budget-")

    t = time.monotonic()
    server, base = docshelf_proc.start(binary, store, model)
    records, per_set, query_s = [], {}, {}
    try:
        docshelf_proc.wait_in_memory(base)
        for n in names:
            qs = read_set(dirs[n])
            if args.limit:
                qs = qs[: args.limit]
            print(f"==> {n}: {len(qs)} queries", file=sys.stderr, flush=True)
            tq = time.monotonic()
            mcp = Mcp(base)
            rows = []
            for qid, text, judged in qs:
                row = {"set": n, "id": qid, "query": text, "judged": sorted(judged)}
                for label, extra in ANSWERS:
                    row[label] = measure(base, mcp, count, n, text, judged, extra)
                rows.append(row)
            query_s[n] = time.monotonic() - tq
            per_set[n] = rows
            records.extend(rows)
    finally:
        docshelf_proc.stop(server)
    serve_s = time.monotonic() - t

    summaries = {n: summary(rows) for n, rows in per_set.items()}
    overall = summary(records)
    for n in names:
        print(f"\n### {n}{' (held-out)' if n in HELD_OUT else ''}: {len(per_set[n])} queries\n")
        print(table(summaries[n]))
    print(f"\n### all sets: {len(records)} queries (micro average over queries)\n")
    print(table(overall))

    print("\n### side by side (* held-out)\n")
    print(side_by_side(summaries, overall, "hit_rate", lambda v: f"{v:.3f}", "hit rate"))
    print()
    print(side_by_side(summaries, overall, "mcp_total", lambda v: f"{v:,.0f}", "MCP tokens (text+structured)"))
    print()
    print(side_by_side(summaries, overall, "hits_per_1k", lambda v: f"{v:.3f}", "hits per 1k MCP tokens"))

    print("\n### checks\n")
    for label, extra in ANSWERS:
        s = overall[label]
        line = f"- {label}: REST and MCP results differ in {s['mcp_mismatch']} of {s['n']} answers"
        if "max_tokens" in extra:
            line += (f"; context over budget (tiktoken or server count) {s['over_budget']}, "
                     f"tiktoken count != server's budget.tokens {s['count_differs']}, "
                     f"largest context {s['max_context']:,} tokens")
        print(line)
    labels = {label for label, _ in ANSWERS}
    for small, big in (("budget 8k", "k=10"), ("budget 4k", "k=10"), ("budget 8k", "k=5"), ("budget 1k", "k=5")):
        if not {small, big} <= labels:
            continue
        lost = sum(r[big]["hit"] and not r[small]["hit"] for r in records)
        won = sum(r[small]["hit"] and not r[big]["hit"] for r in records)
        print(f"- {small} vs {big}: judged page found by {big} only in {lost} queries, by {small} only in {won}")

    total = time.monotonic() - started
    print("\n### wall time\n")
    for n in names:
        ing = f"ingest {ingest_s[n]:.0f} s, " if n in ingest_s else ""
        print(f"- {n}: {ing}queries {query_s[n]:.0f} s ({len(per_set[n])} queries x {len(ANSWERS)} answers x REST+MCP)")
    print(f"- serving (start, load, all queries): {serve_s:.0f} s; whole run: {total:.0f} s")
    print(f"- binary {binary}; store {store}")

    if args.json:
        with open(args.json, "w") as f:
            json.dump({"sets": names, "summaries": summaries, "overall": overall,
                       "ingest_s": ingest_s, "query_s": query_s, "total_s": total, "records": records}, f)
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    under_tiktoken_venv()
    main()
