#!/usr/bin/env python3
"""Search quality broken down by query intent, on the six eval sets
(eval/README.md): which kind of question docshelf answers worst.

1. Every query of every set gets ONE intent from transparent rules on its
   text (lower-cased; regexes below, checked in this order, first match
   wins):

   comparison       "vs", "versus", "difference(s) between", "compared to/with",
                    "compare", "rather than", "instead of", "better", or a
                    query starting with "should I" / "which" that has an
                    " or " in it ("X or Y")
   troubleshooting  "error(s)", "fail/fails/failed/failing/failure",
                    "doesn't", "does not", "not working", "won't", "can't",
                    "cannot", "why is", "why does", "broken", "warning(s)",
                    "unexpected(ly)", "fix/fixes/fixing"
   how-to           "how do i", "how to", "how can", "how do you", "steps to"
                    anywhere; or an imperative verb as the first word:
                    install, configure, set up, create, add, remove, run,
                    use, make, enable, disable, change, get, show, list,
                    write, deploy, publish, upgrade, update
   api-lookup       names an identifier: `backticks`, snake_case, camelCase
                    (lower-case start, e.g. streamText; minus macOS/iOS/..),
                    PascalCase with two humps or more (StreamingResponse;
                    minus GitHub, JavaScript, TypeScript, OpenAI, PyPI, ..),
                    dotted.name (minus e.g./i.e. and Node.js-style product
                    names), --flag, func(); or starts with "what does .. do /
                    return"; or has the word "parameters of", "signature",
                    "argument(s)", "option(s)", "flag(s)"
   concept          everything else

   The identifier rules look at the original text (case matters there).
   Counts per set x intent are printed; per-query labels (with the rule that
   matched) go to --labels as JSON lines.

2. Every query runs over REST (POST /api/search, filtered to the set's
   library, k=10, mode hybrid, every other parameter at its default) and is
   scored as `docshelf eval` scores it: the results' file_path list,
   duplicates dropped, first 10; nDCG@10 with gain 1 for the one judged
   page, Recall@10 (found in the first 10 or not). A result's file_path
   matches a judged file when equal (eval_store.is_judged, as
   scripts/bench-budget.py matches).

3. Markdown tables: nDCG@10 and Recall@10, intent (rows) x set (columns,
   * held-out), each cell `mean (queries)`, plus an "all" column (micro
   average over every query of that intent) and a "held-out" column (micro
   average over the four held-out sets); a cell with fewer than 5 queries is
   flagged with a dagger.

The store is made and served as scripts/bench-budget.py does (its helpers
are imported from it): each set's corpus ingested into one fresh store,
one library per set, version 1.

Usage:
  scripts/bench-intents.py [--bin PATH] [--model-dir DIR] [--sets a,b,..]
                           [--work DIR] [--reuse-store] [--labels OUT]
                           [--results OUT] [--classify-only]
                           [--labels-from eval/intents.jsonl]

With --labels-from, each query's intent is its hand label (eval/intents.md:
made from the query text alone, without any system output) instead of the
rules of step 1.

Standard library only (bench-budget's tiktoken is not needed here).
"""
import argparse
import json
import math
import os
import random
import re
import shutil
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import docshelf_proc  # noqa: E402


from eval_store import (HELD_OUT, add_arguments, build_store, is_judged,  # noqa: E402
                        post, read_set, set_dir)

INTENTS = ["comparison", "troubleshooting", "how-to", "api-lookup", "concept"]
K = 10
SMALL = 5  # cells with fewer queries are flagged


# --- intent rules -----------------------------------------------------------

def _any(*patterns):
    return re.compile("|".join(f"(?:{p})" for p in patterns))


COMPARISON = _any(r"\bvs\b\.?", r"\bversus\b", r"\bdifferences? between\b", r"\bcompared (?:to|with)\b",
                  r"\bcompare\b", r"\brather than\b", r"\binstead of\b", r"\bbetter\b",
                  r"^(?:should i|which)\b.*\bor\b")
# --narrow-comparison: without "instead of" / "rather than", which in these
# sets mostly ask for a non-default behaviour ("return JSON instead of plain
# text"), not for a comparison.
COMPARISON_NARROW = _any(r"\bvs\b\.?", r"\bversus\b", r"\bdifferences? between\b", r"\bcompared (?:to|with)\b",
                         r"\bcompare\b", r"\bbetter\b", r"^(?:should i|which)\b.*\bor\b")
TROUBLE = _any(r"\berrors?\b", r"\bfail(?:s|ed|ing|ure|ures)?\b", r"\bdoesn't\b", r"\bdoes not\b",
               r"\bnot working\b", r"\bwon't\b", r"\bcan't\b", r"\bcannot\b", r"\bwhy is\b",
               r"\bwhy does\b", r"\bbroken\b", r"\bwarnings?\b", r"\bunexpected(?:ly)?\b",
               r"\bfix(?:es|ing)?\b")
HOWTO_PHRASE = _any(r"\bhow do i\b", r"\bhow to\b", r"\bhow can\b", r"\bhow do you\b", r"\bsteps to\b")
HOWTO_VERBS = ("install|configure|set up|create|add|remove|run|use|make|enable|disable|change"
               "|get|show|list|write|deploy|publish|upgrade|update")
# --more-verbs: the queries are mostly written as bare imperatives ("delete all
# environments", "send a file as a download"); these verbs count too.
MORE_VERBS = ("allow|apply|attach|avoid|build|bump|call|cancel|check|clean|clone|combine|commit|convert"
              "|count|customize|debug|declare|define|delete|display|download|edit|exclude|export|fetch"
              "|filter|find|force|generate|give|group|handle|hide|ignore|import|include|keep|let|limit"
              "|link|load|lock|log|merge|mount|move|open|override|pass|pin|plug|prevent|print|promote"
              "|protect|pull|push|read|record|redirect|register|rename|render|replace|reset|restore"
              "|restrict|retry|return|reuse|revert|save|schedule|search|send|serve|set|share|sign|skip"
              "|sort|specify|split|start|stop|store|stream|switch|tag|test|track|transform|turn|undo"
              "|upload|validate|verify|wait|watch")


def howto_verb(more):
    verbs = HOWTO_VERBS + ("|" + MORE_VERBS if more else "")
    return re.compile(rf"^(?:{verbs})\b")


HOWTO_VERB = howto_verb(False)
API_PHRASE = _any(r"^what does\b.*\b(?:do|return|returns)\b", r"\bparameters of\b", r"\bsignature\b",
                  r"\barguments?\b", r"\boptions?\b", r"\bflags?\b")
# Identifier rules run on the original text (case-sensitive).
NOT_CAMEL = {"macOS", "iOS", "iPhone", "iPad", "eBay", "npm"}
NOT_PASCAL = {"GitHub", "GitLab", "JavaScript", "TypeScript", "OpenAI", "PyPI", "PowerShell", "YouTube",
              "LinkedIn", "PostgreSQL", "MySQL", "MongoDB", "WordPress", "DevOps", "OAuth", "WebSocket",
              "WebSockets", "MkDocs", "CircleCI", "AppVeyor", "HTTPie", "NodeJS", "VSCode", "iTerm", "ChatGPT"}
NOT_DOTTED = re.compile(r"^(?:e\.g|i\.e|etc\.|vs\.)|^[A-Z][a-z]+\.js$")
IDENT_RULES = [
    ("backticks", re.compile(r"`[^`]+`")),
    ("snake_case", re.compile(r"\b[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]+\b")),
    ("camelCase", re.compile(r"\b[a-z][a-z0-9]*[A-Z][A-Za-z0-9]*\b")),
    ("PascalCase", re.compile(r"\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+\b")),
    ("dotted.name", re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+\b")),
    ("--flag", re.compile(r"(?:^|[\s(])--[A-Za-z][\w-]*")),
    ("func()", re.compile(r"\b[A-Za-z_][\w.]*\(\)")),
]


def identifier(text):
    """(rule, matched text) of the first identifier the text names, or None."""
    for name, rx in IDENT_RULES:
        for m in rx.finditer(text):
            word = m.group(0).strip()
            if name == "camelCase" and word in NOT_CAMEL:
                continue
            if name == "PascalCase" and word in NOT_PASCAL:
                continue
            if name == "dotted.name" and NOT_DOTTED.search(word):
                continue
            return name, word
    return None


def classify(text, verb_rx=None, comparison_rx=None):
    """(intent, why): the first rule (in INTENTS order) that matches."""
    verb_rx = verb_rx or HOWTO_VERB
    comparison_rx = comparison_rx or COMPARISON
    low = " ".join(text.lower().replace("\u2019", "'").split())
    m = comparison_rx.search(low)
    if m:
        return "comparison", m.group(0)
    m = TROUBLE.search(low)
    if m:
        return "troubleshooting", m.group(0)
    m = HOWTO_PHRASE.search(low) or verb_rx.search(low)
    if m:
        return "how-to", m.group(0)
    ident = identifier(text)
    if ident:
        return "api-lookup", f"{ident[0]}: {ident[1]}"
    m = API_PHRASE.search(low)
    if m:
        return "api-lookup", m.group(0)
    return "concept", ""


# --- scoring ----------------------------------------------------------------

def score(files, judged, k=K):
    """(nDCG@k, Recall@k) for one query: gain 1 per judged file, ranks over
    the deduplicated file list, as index_core::eval does."""
    seen, ranked = set(), []
    for f in files:
        if f not in seen:
            seen.add(f)
            ranked.append(f)
    ranked = ranked[:k]
    dcg, found = 0.0, set()
    for i, f in enumerate(ranked):
        for want in judged:
            if want not in found and is_judged(f, {want}):
                found.add(want)
                dcg += 1.0 / math.log2(i + 2)
                break
    idcg = sum(1.0 / math.log2(i + 2) for i in range(min(len(judged), k)))
    return (dcg / idcg if idcg else 0.0), (len(found) / len(judged) if judged else 0.0)


# --- tables -----------------------------------------------------------------

def cell(values):
    if not values:
        return "–"
    s = f"{sum(values) / len(values):.3f} ({len(values)})"
    return s + " †" if len(values) < SMALL else s


def metric_table(rows, names, key, title):
    held = [n for n in names if n in HELD_OUT]
    head = (f"| {title} | " + " | ".join(n + ("*" if n in HELD_OUT else "") for n in names)
            + " | all | held-out only |")
    lines = [head, "| --- |" + " ---: |" * (len(names) + 2)]
    for intent in INTENTS + ["(all intents)"]:
        pick = [r for r in rows if intent == "(all intents)" or r["intent"] == intent]
        cells = [cell([r[key] for r in pick if r["set"] == n]) for n in names]
        cells.append(cell([r[key] for r in pick]))
        cells.append(cell([r[key] for r in pick if r["set"] in held]) if held else "–")
        lines.append(f"| {intent} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def count_table(rows, names):
    head = "| intent | " + " | ".join(n + ("*" if n in HELD_OUT else "") for n in names) + " | all | held-out only |"
    lines = [head, "| --- |" + " ---: |" * (len(names) + 2)]
    for intent in INTENTS + ["(all intents)"]:
        pick = [r for r in rows if intent == "(all intents)" or r["intent"] == intent]
        cells = [str(sum(r["set"] == n for r in pick)) for n in names]
        cells += [str(len(pick)), str(sum(r["set"] in HELD_OUT for r in pick))]
        lines.append(f"| {intent} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


# --- main -------------------------------------------------------------------

def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_arguments(p)
    p.add_argument("--labels", help="per-query intent labels, JSON lines (default: WORK/labels.jsonl, "
                                    "or ./intent-labels.jsonl without --work)")
    p.add_argument("--results", help="per-query labels and scores, JSON lines")
    p.add_argument("--examples", type=int, default=5, help="example queries printed per intent")
    p.add_argument("--classify-only", action="store_true", help="label and count; run no search")
    p.add_argument("--more-verbs", action="store_true",
                   help="how-to also when the first word is one of MORE_VERBS (delete, send, find, ..)")
    p.add_argument("--narrow-comparison", action="store_true",
                   help='comparison without "instead of" / "rather than" (COMPARISON_NARROW)')
    p.add_argument("--labels-from", metavar="FILE",
                   help="take each query's intent from hand labels (JSON lines of set, id, intent; "
                        "eval/intents.jsonl) instead of the rules")
    p.add_argument("--from-results", metavar="FILE",
                   help="take every query's scores from a --results file of an earlier run (no store, "
                        "no server; only the labels are made anew)")
    args = p.parse_args()

    started = time.monotonic()
    names = [s for s in args.sets.split(",") if s]
    dirs = {n: set_dir(n, args) for n in names}

    # 1. labels
    verb_rx = howto_verb(args.more_verbs)
    hand = {}
    if args.labels_from:
        with open(args.labels_from) as f:
            hand = {(o["set"], o["id"]): o["intent"] for o in map(json.loads, filter(str.strip, f))}
    rows = []
    for n in names:
        for qid, text, judged in read_set(dirs[n]):
            if hand:
                intent, why = hand[(n, qid)], "hand label"
            else:
                intent, why = classify(text, verb_rx,
                                       COMPARISON_NARROW if args.narrow_comparison else COMPARISON)
            rows.append({"set": n, "id": qid, "query": text, "intent": intent, "rule": why,
                         "judged": sorted(judged)})
    labels = args.labels or (os.path.join(args.work, "labels.jsonl") if args.work else "intent-labels.jsonl")
    os.makedirs(os.path.dirname(os.path.abspath(labels)), exist_ok=True)
    with open(labels, "w") as f:
        for r in rows:
            f.write(json.dumps({k: r[k] for k in ("set", "id", "query", "intent", "rule")}) + "\n")
    print("### queries per intent (* held-out)\n")
    print(count_table(rows, names))
    print(f"\nlabels: {labels}")
    rng = random.Random(0)
    print(f"\n### {args.examples} example queries per intent (seeded sample)\n")
    for intent in INTENTS:
        pick = [r for r in rows if r["intent"] == intent]
        print(f"- **{intent}** ({len(pick)})")
        for r in sorted(rng.sample(pick, min(args.examples, len(pick))), key=lambda r: (names.index(r["set"]), r["id"])):
            print(f"  - [{r['set']} {r['id']}] {r['query']}" + (f"  — rule: `{r['rule']}`" if r["rule"] else ""))
    if args.classify_only:
        return

    # 2. store, server, queries
    if args.from_results:
        with open(args.from_results) as f:
            old = {(o["set"], o["id"]): o for o in map(json.loads, f) if o}
        for r in rows:
            o = old[(r["set"], r["id"])]
            r["files"], r["ndcg"], r["recall"] = o["files"], o["ndcg"], o["recall"]
        print_results(rows, names, started, "(scores from " + args.from_results + ")", args)
        return
    binary, model, work, store, _ = build_store(args, names, dirs, "bench-intents-")

    server, base = docshelf_proc.start(binary, store, model)
    try:
        docshelf_proc.wait_in_memory(base)
        for i, r in enumerate(rows):
            if i == 0 or rows[i - 1]["set"] != r["set"]:
                print(f"==> {r['set']}", file=sys.stderr, flush=True)
            body, _ = post(base + "/api/search",
                              {"query": r["query"], "library": r["set"], "k": K, "mode": "hybrid"})
            files = [h["file_path"] for h in json.loads(body)["results"]]
            r["files"] = files
            r["ndcg"], r["recall"] = score(files, set(r["judged"]))
    finally:
        docshelf_proc.stop(server)

    print_results(rows, names, started, f"binary {binary}; store {store}", args)
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)


def print_results(rows, names, started, where, args):
    # 3. tables
    print("\n### nDCG@10 by intent (* held-out; cell: mean (queries); † fewer than "
          f"{SMALL} queries)\n")
    print(metric_table(rows, names, "ndcg", "nDCG@10"))
    print("\n### Recall@10 by intent\n")
    print(metric_table(rows, names, "recall", "Recall@10"))

    def mean_of(intent, held_only):
        vs = [r["ndcg"] for r in rows if r["intent"] == intent and (not held_only or r["set"] in HELD_OUT)]
        return (sum(vs) / len(vs), len(vs)) if vs else (float("nan"), 0)

    print()
    for held_only, label in ((False, "all sets"), (True, "held-out sets")):
        scored = [(mean_of(i, held_only), i) for i in INTENTS]
        scored = [(m, n, i) for (m, n), i in scored if n]
        if scored:
            m, n, i = min(scored)
            print(f"- weakest intent by nDCG@10, {label}: {i} ({m:.3f} over {n} queries)")
    print(f"- {where}; whole run {time.monotonic() - started:.0f} s")

    if args.results:
        with open(args.results, "w") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
