#!/usr/bin/env python3
"""Measures `docshelf changes` (issue 65, item 5) on real release pairs.

What it does, for each pair LIB FROM TO given with the two releases' docs
folders:

1. With --ingest, uploads each release as a version of LIB
   (`docshelf ingest DIR --library LIB --version V`).
2. Runs `docshelf changes LIB FROM TO --json` --runs times, and with
   `--max-tokens 2000`, `--max-tokens 8000` and `--max-tokens 100000`
   (the last one to count the whole answer's tokens): wall time (median
   and range) and peak memory of each, the JSON's `tokens`, `cut`, sections
   kept and left out.
3. Lists every section the comparison reports (added, removed, changed;
   in changed, added, removed and moved documents) and picks 30 of them,
   evenly spaced over the list of all pairs (index round(i * N / 30)).
4. Compares the source folders themselves: which files differ, and which
   of those the comparison did or did not report (a miss at document level).
5. Prints the hand check: the verdicts below (VERDICTS), made by reading
   `diff -ru FROMDIR TODIR` for each picked section, and the precision.

Only Python 3's standard library. The data: PyPI sdists, which ship docs/
(flask's are named Flask-2.x.y.tar.gz before 2.3):

    for v in 2.1.3 2.2.5 2.3.3 3.0.0 3.0.3 3.1.0; do
        pip download --no-deps --no-binary :all: flask==$v -d src; done
    for v in 8.0.4 8.1.7; do
        pip download --no-deps --no-binary :all: click==$v -d src; done
    (cd src && for f in *.tar.gz; do tar xzf "$f"; done)

Then (the pairs in this order: the sample's indexes depend on it):

    S=src; python3 scripts/measure-changes.py --bin PATH/TO/docshelf \\
        --model-dir models/all-MiniLM-L6-v2 --data /tmp/store --ingest \\
        --pair flask 2.1.3 $S/Flask-2.1.3/docs 2.2.5 $S/Flask-2.2.5/docs \\
        --pair flask 2.3.3 $S/flask-2.3.3/docs 3.0.0 $S/flask-3.0.0/docs \\
        --pair flask 3.0.3 $S/flask-3.0.3/docs 3.1.0 $S/flask-3.1.0/docs \\
        --pair click 8.0.4 $S/click-8.0.4/docs 8.1.7 $S/click-8.1.7/docs \\
        --out /tmp/changes-out

(--ingest once; later runs reuse the store.) --out keeps each answer's JSON,
the list of reported sections (sections.tsv) and the picked ones
(sample.tsv). Each command is timed here with time.perf_counter around the
process, so the times include the process's start and the store's opening.
The tokens of the printed JSON (not only the answer's own `tokens`) were
counted apart: `docshelf changes ... --json --max-tokens N | scripts/tiktoken-count.sh`.
Results of 2026-11-29: docs/benchmarks.md, "What changed between versions".
"""

import argparse
import filecmp
import json
import os
import resource
import statistics
import subprocess
import sys
import time

BUDGETS = (2000, 8000, 100000)
SAMPLE = 30

# The hand check, made by reading `diff -ru FROMDIR TODIR` (and, for an
# added or removed section, searching the other release for its text):
# (library, "FROM→TO", file_path, heading_path, kind) -> (verdict, reason).
# "true": the section's text really changed (wording, facts, code, a passage
# added or removed); "cosmetic": a real text change, but only a typo or
# grammar fix; "false": the report misleads (an added or removed section
# whose text is still there under a renamed heading, at 0.56 to 0.82 of its
# words alike; nothing but spacing; a wrong section). Precision counts true
# and cosmetic; the strict figure only true.
A, B, C, D = "2.1.3→2.2.5", "2.3.3→3.0.0", "3.0.3→3.1.0", "8.0.4→8.1.7"
VERDICTS = {
    # flask 2.1.3 → 2.2.5: the 24 of the sample that fall in this pair
    ("flask", A, "api.rst", "API > Session Interface", "changed"):
        ("true", "the PERMANENT_SESSION_LIFETIME notice rewritten (integer or timedelta)"),
    ("flask", A, "cli.rst", "Command Line Interface > Run the Development Server", "changed"):
        ("true", "example command now `flask --app hello run`"),
    ("flask", A, "cli.rst", "Command Line Interface > Debug Mode", "removed"):
        ("true", "FLASK_ENV/FLASK_DEBUG text gone; the new Debug Mode (under Run the Development Server) says --debug, 10% alike"),
    ("flask", A, "config.rst", "Configuration Handling > Debug Mode", "added"):
        ("true", "replaces 'Environment and Debug Features' (49% alike): --debug instead of FLASK_ENV; a rename shown as add+remove"),
    ("flask", A, "debugging.rst", "Debugging Application Errors > The Built-In Debugger", "changed"):
        ("true", "FLASK_ENV per-shell commands replaced by `flask --app hello run --debug`"),
    ("flask", A, "design.rst", "Design Decisions in Flask > Micro with Dependencies", "removed"):
        ("false", "both paragraphs kept word for word in the renamed section 'What does \"micro\" mean?' (reported added)"),
    ("flask", A, "index.rst", "Welcome to Flask > User's Guide", "changed"):
        ("true", "introduction paragraph rewritten"),
    ("flask", A, "patterns/celery.rst", "Background Tasks with Celery > Install", "added"):
        ("false", "not new: same `pip install celery`, one sentence reworded; the page title was renamed, so every path changed"),
    ("flask", A, "patterns/celery.rst", "Background Tasks with Celery > Getting Results", "added"):
        ("true", "new section (AsyncResult route)"),
    ("flask", A, "patterns/celery.rst", "Celery Background Tasks > An example task", "removed"):
        ("true", "make_celery/CELERY_CONFIG example gone; rewritten with shared_task (17% alike)"),
    ("flask", A, "patterns/streaming.rst", "Streaming Contents > Streaming from Templates", "changed"):
        ("true", "hand-written stream_template replaced by flask.stream_template"),
    ("flask", A, "quickstart.rst", "Quickstart > What to do if the Server does not Start > Invalid Import Name", "removed"):
        ("true", "troubleshooting section dropped; its text is nowhere in 2.2.5"),
    ("flask", A, "reqcontext.rst", "The Request Context > Lifetime of the Context", "changed"):
        ("true", "now explains contextvars and LocalProxy"),
    ("flask", A, "server.rst", "Development Server > Command Line > Deferred Errors on Reload", "added"):
        ("false", "renamed 'Lazy or Eager Loading', 82% alike; the real change (--eager-loading/--lazy-loading paragraph removed) is not shown as such"),
    ("flask", A, "tutorial/database.rst", "Define and Access the Database > Connect to the Database", "changed"):
        ("true", "`from flask.cli import with_appcontext` dropped from the code"),
    ("flask", A, "tutorial/factory.rst", "Application Setup > Run The Application", "changed"):
        ("true", "FLASK_APP/FLASK_ENV commands replaced by `flask --app flaskr run --debug`"),
    ("flask", A, "views.rst", "Class-based Views > View Lifetime and self", "added"):
        ("true", "new section (init_every_request)"),
    ("flask", A, "views.rst", "Pluggable Views > Basic Principle", "removed"):
        ("true", "page rewritten; old example gone (17% alike to 'Basic Reusable View')"),
    ("flask", A, "lifecycle.rst", "Application Structure and Lifecycle > Application Setup", "added"):
        ("true", "new page"),
    ("flask", A, "advanced_foreword.rst", "Foreword for Experienced Programmers > Thread-Locals in Flask", "removed"):
        ("true", "page deleted; its text is nowhere in 2.2.5"),
    ("flask", A, "foreword.rst", "Foreword > Growing with Flask", "removed"):
        ("true", "page deleted; its text is nowhere in 2.2.5"),
    ("flask", A, "htmlfaq.rst", "HTML/XHTML FAQ > New technologies in HTML5", "removed"):
        ("true", "page deleted"),
    ("flask", A, "patterns/distribute.rst", "Deploying with Setuptools > Distributing Resources", "removed"):
        ("true", "page deleted"),
    ("flask", A, "patterns/fabric.rst", "Deploying with Fabric > Running Fabfiles", "removed"):
        ("true", "page deleted"),
    # flask 2.3.3 → 3.0.0, 3.0.3 → 3.1.0 and click 8.0.4 → 8.1.7: every
    # reported section (33), of which 6 fall in the sample
    ("flask", B, "api.rst", "API > Signals", "changed"):
        ("true", "signals.signals_available entry removed"),
    ("flask", B, "patterns/javascript.rst", "JavaScript, fetch, and JSON > Replacing Content", "changed"):
        ("true", "code fix: innerHtml → innerHTML"),
    ("flask", C, "async-await.rst", "Using async and await", "changed"):
        ("true", "Python 3.8 on Windows admonition removed"),
    ("flask", C, "config.rst", "Configuration Handling > Builtin Configuration Values", "changed"):
        ("true", "5 new keys, SERVER_NAME and MAX_CONTENT_LENGTH rewritten, a warning: right, but one section for 8 changes"),
    ("flask", C, "deploying/asgi.rst", "ASGI", "changed"):
        ("true", "Hypercorn link moved from gitlab to github"),
    ("flask", C, "deploying/waitress.rst", "Waitress > Binding Externally", "changed"):
        ("cosmetic", "typo: revers → reverse"),
    ("flask", C, "extensiondev.rst", "Flask Extension Development > Recommended Extension Guidelines", "changed"):
        ("true", "Python >=3.8 → >=3.9"),
    ("flask", C, "index.rst", "Welcome to Flask", "changed"):
        ("true", "two sentences describing Flask added"),
    ("flask", C, "installation.rst", "Installation > Python Version", "changed"):
        ("true", "Python 3.8 → 3.9"),
    ("flask", C, "quickstart.rst", "Quickstart > Rendering Templates", "changed"):
        ("true", "template variable name → person, in code and text"),
    ("flask", C, "testing.rst", "Testing Flask Applications > Following Redirects", "changed"):
        ("true", "example now passes follow_redirects=True"),
    ("flask", C, "tutorial/database.rst", "Define and Access the Database > Connect to the Database", "changed"):
        ("true", "`from datetime import datetime` added to the code"),
    ("flask", C, "tutorial/database.rst", "Define and Access the Database > Create the Tables", "changed"):
        ("true", "register_converter code and its explanation added"),
    ("flask", C, "web-security.rst", "Security Considerations", "changed"):
        ("true", "introduction rewritten and extended"),
    ("flask", C, "web-security.rst", "Security Considerations > Resource Use", "added"):
        ("true", "new section"),
    ("click", D, "advanced.rst", "Advanced Patterns > Parameter Modifications", "changed"):
        ("cosmetic", "grammar: addition → additional"),
    ("click", D, "advanced.rst", "Advanced Patterns > Forwarding Unknown Options", "changed"):
        ("cosmetic", "grammar: a → an, combinated → combined"),
    ("click", D, "arguments.rst", "Arguments > File Path Arguments", "changed"):
        ("true", "paragraph rewritten: Unicode caveat replaced by format_filename"),
    ("click", D, "complex.rst", "Complex Applications > Lazily Loading Subcommands", "added"):
        ("true", "new section"),
    ("click", D, "complex.rst", "Complex Applications > Lazily Loading Subcommands > Defining the Lazy Group", "added"):
        ("true", "new section"),
    ("click", D, "complex.rst", "Complex Applications > Lazily Loading Subcommands > Using LazyGroup To Define a CLI", "added"):
        ("true", "new section"),
    ("click", D, "complex.rst", "Complex Applications > Lazily Loading Subcommands > What triggers Lazy Loading?", "added"):
        ("true", "new section"),
    ("click", D, "complex.rst", "Complex Applications > Lazily Loading Subcommands > Further Deferring Imports", "added"):
        ("true", "new section"),
    ("click", D, "contrib.rst", "click-contrib", "changed"):
        ("true", "page text rewritten"),
    ("click", D, "documentation.rst", "Documenting Scripts > Preventing Rewrapping", "changed"):
        ("true", "80-character maximum and max_content_width added"),
    ("click", D, "documentation.rst", "Documenting Scripts > Command Epilog Help", "added"):
        ("true", "new section"),
    ("click", D, "exceptions.rst", "Exception Handling > Where are Errors Handled?", "changed"):
        ("cosmetic", "grammar: a/an, capital If"),
    ("click", D, "options.rst", "Options > Basic Value Options", "changed"):
        ("true", "boolean flag show_default paragraph and example added"),
    ("click", D, "quickstart.rst", "Quickstart > virtualenv", "changed"):
        ("true", "virtualenv install steps replaced by python3 -m venv .venv"),
    ("click", D, "quickstart.rst", "Quickstart > Echoing", "changed"):
        ("cosmetic", "grammar: an → a"),
    ("click", D, "setuptools.rst", "Setuptools Integration > Testing The Script", "changed"):
        ("true", "virtualenv venv → python3 -m venv .venv"),
    ("click", D, "shell-completion.rst", "Shell Completion > Enabling Completion", "changed"):
        ("true", "fish activation command changed"),
    ("click", D, "shell-completion.rst", "Shell Completion > Custom Type Completion", "changed"):
        ("true", "name = \"envvar\" added to the example"),
}


def run(cmd, check=True):
    """Runs cmd; its stdout, wall seconds and the peak RSS (MiB) of the
    largest child so far (ru_maxrss is a high-water mark over children)."""
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True)
    if not check:
        done.stdout += done.stderr
    wall = time.perf_counter() - start
    if check and done.returncode != 0:
        sys.exit(f"failed ({done.returncode}): {' '.join(cmd)}\n{done.stderr[-3000:]}")
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return done.stdout, wall, rss


def common(args):
    return ["--data", args.data, "--model-dir", args.model_dir]


def ingest(args, library, version, folder):
    # A file with no text of its own (an `.. include::` of a file outside
    # docs/, as flask's contributing.rst) fails alone; the rest is stored.
    out, wall, _ = run([args.bin, "ingest", folder, "--library", library,
                        "--version", version] + common(args), check=False)
    stored = sum(line.startswith("stored") for line in out.splitlines())
    print(f"ingest {library} {version} from {folder}: {wall:.1f} s, {stored} stored")
    for line in out.splitlines():
        if line.startswith("failed"):
            print("  " + line)


def changes(args, library, old, new, budget=None):
    cmd = [args.bin, "changes", library, old, new, "--json"] + common(args)
    if budget:
        cmd += ["--max-tokens", str(budget)]
    walls, answer, rss = [], None, 0.0
    for _ in range(args.runs):
        out, wall, rss = run(cmd)
        walls.append(wall)
        answer = json.loads(out)
    return answer, walls, rss


def sections_of(answer):
    """Every reported section, in the answer's order."""
    rows = []
    for doc in answer["documents"]:
        for s in doc["sections"]:
            rows.append({
                "library": answer["library"],
                "pair": f"{answer['from']}→{answer['to']}",
                "document": doc["file_path"],
                "document_kind": doc["change"],
                "previous_path": doc.get("previous_path") or "",
                "section": s["heading_path"] or "(before the first heading)",
                "heading_path": s["heading_path"],
                "kind": s["change"],
                "body": s.get("diff") or s.get("text") or "",
            })
    return rows


def source_files(folder):
    found = {}
    for root, _, files in os.walk(folder):
        for name in files:
            path = os.path.join(root, name)
            found[os.path.relpath(path, folder)] = path
    return found


def source_diff(old_dir, new_dir):
    """Files that differ between the two folders: changed, added, removed."""
    old, new = source_files(old_dir), source_files(new_dir)
    changed = sorted(p for p in old.keys() & new.keys()
                     if not filecmp.cmp(old[p], new[p], shallow=False))
    return changed, sorted(new.keys() - old.keys()), sorted(old.keys() - new.keys())


def fmt_walls(walls):
    return f"{statistics.median(walls):.2f} s ({min(walls):.2f}–{max(walls):.2f})"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--bin", required=True)
    p.add_argument("--model-dir", required=True)
    p.add_argument("--data", required=True)
    p.add_argument("--pair", nargs=5, action="append", required=True,
                   metavar=("LIB", "FROM", "FROM_DIR", "TO", "TO_DIR"))
    p.add_argument("--ingest", action="store_true")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--out")
    args = p.parse_args()
    if args.out:
        os.makedirs(args.out, exist_ok=True)

    if args.ingest:
        done = set()
        for library, old, old_dir, new, new_dir in args.pair:
            for version, folder in ((old, old_dir), (new, new_dir)):
                if (library, version) not in done:
                    ingest(args, library, version, folder)
                    done.add((library, version))

    everything = []
    for library, old, old_dir, new, new_dir in args.pair:
        print(f"\n## {library} {old} → {new}")
        answer, walls, rss = changes(args, library, old, new)
        t = answer["totals"]
        print(f"whole answer: {fmt_walls(walls)}, peak RSS {rss:.0f} MiB, "
              f"{len(json.dumps(answer))} bytes of JSON")
        print("totals: " + ", ".join(f"{k} {v}" for k, v in t.items()))
        if args.out:
            with open(os.path.join(args.out, f"{library}-{old}-{new}.json"), "w") as f:
                json.dump(answer, f, indent=1, ensure_ascii=False)
        for budget in BUDGETS:
            cut, bwalls, _ = changes(args, library, old, new, budget)
            kept = sum(len(d["sections"]) for d in cut["documents"])
            left = sum(d.get("sections_left_out", 0) for d in cut["documents"])
            print(f"--max-tokens {budget}: {fmt_walls(bwalls)}, tokens {cut.get('tokens')}, "
                  f"cut {cut['cut']}, documents {len(cut['documents'])}, "
                  f"sections kept {kept}, left out {left}")
            if args.out:
                with open(os.path.join(args.out, f"{library}-{old}-{new}-{budget}.json"), "w") as f:
                    json.dump(cut, f, indent=1, ensure_ascii=False)
        rows = sections_of(answer)
        everything += rows

        changed, added, removed = source_diff(old_dir, new_dir)
        reported = {d["file_path"] for d in answer["documents"]}
        reported |= {d.get("previous_path") for d in answer["documents"] if d.get("previous_path")}
        print(f"source files differing: {len(changed)} changed, {len(added)} added, "
              f"{len(removed)} removed")
        for path in changed + added + removed:
            stem = os.path.splitext(path)[0]
            hit = [r for r in reported if os.path.splitext(r)[0] == stem]
            print(f"  {path}: {'reported as ' + ', '.join(hit) if hit else 'NOT reported'}")
        for path in sorted(reported):
            stem = os.path.splitext(path)[0]
            if not any(os.path.splitext(x)[0] == stem for x in changed + added + removed):
                print(f"  reported but identical in the sources: {path}")

    n = len(everything)
    picks = sorted({round(i * n / SAMPLE) for i in range(SAMPLE)} if n > SAMPLE else range(n))
    sample = [everything[i] for i in picks]
    cols = ["library", "pair", "document", "document_kind", "previous_path", "section", "kind"]
    if args.out:
        for name, rows in (("sections.tsv", everything), ("sample.tsv", sample)):
            with open(os.path.join(args.out, name), "w") as f:
                f.write("\t".join(cols + ["body"]) + "\n")
                for r in rows:
                    body = r["body"].replace("\t", " ").replace("\n", " ⏎ ")[:400]
                    f.write("\t".join([r[c] for c in cols] + [body]) + "\n")

    print(f"\n## Hand check: {len(sample)} of {n} reported sections (index round(i·{n}/{SAMPLE}))\n")
    print("| # | pair | document | section | reported | verdict | reason |")
    print("| ---: | --- | --- | --- | --- | --- | --- |")
    def verdict_of(r):
        key = (r["library"], r["pair"], r["document"], r["heading_path"], r["kind"])
        return VERDICTS.get(key, ("?", "not judged"))

    def precision(rows, label):
        got = [verdict_of(r)[0] for r in rows]
        judged = [v for v in got if v != "?"]
        if not judged:
            return
        real = sum(v in ("true", "cosmetic") for v in judged)
        strict = sum(v == "true" for v in judged)
        print(f"\n{label}: precision {real}/{len(judged)} = {real / len(judged):.2f}; "
              f"without typo/grammar fixes {strict}/{len(judged)} = {strict / len(judged):.2f}"
              + ("" if len(judged) == len(rows) else f" ({len(rows) - len(judged)} not judged)"))

    for i, r in zip(picks, sample):
        verdict, reason = verdict_of(r)
        kind = r["kind"] if r["document_kind"] == "changed" else f"{r['kind']} ({r['document_kind']} page)"
        print(f"| {i} | {r['library']} {r['pair']} | {r['document']} | {r['section']} | "
              f"{kind} | {verdict} | {reason} |")
    precision(sample, "the sample")
    census = [r for r in everything if verdict_of(r)[0] != "?"]
    precision(census, f"every judged section ({len(census)})")


if __name__ == "__main__":
    main()
