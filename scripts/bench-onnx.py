#!/usr/bin/env python3
"""ONNX Runtime peers for docshelf's embedding bench, fp32 and int8.

What Chroma's default embedding function does with all-MiniLM-L6-v2: the BERT
encoder run by onnxruntime on the CPU, text tokenized with the `tokenizers`
library, mean pooling and L2 normalisation in numpy. The int8 peer is the same
graph after onnxruntime's dynamic quantization. One difference on purpose:
Chroma pads every text to 256 tokens and batches in input order; here texts
are batched as sentence-transformers batches them (longest first, padded to
the batch's longest), so that the runtimes, not the batching, are compared.

No model hub: the ONNX graph is built here, node by node with `onnx.helper`,
from the very weights docshelf loads (model.safetensors and config.json of the
model directory), into a temporary directory that is deleted on exit. Before
anything is measured, the fp32 graph's sentence embeddings are checked
against the committed sentence-transformers reference that docshelf's own
engine is tested against (server/tests/fixtures/minilm-reference.json); a
graph that disagrees stops the script with a non-zero exit.

Same command line as bench-sentence-transformers.py:

    bench-onnx.py MODEL_DIR CHUNKS.jsonl QUERIES.jsonl [DEVICE] [BATCHES]

DEVICE must be `cpu` (the only one measured here: onnxruntime from PyPI is
the CPU build). BATCHES is `32` or a comma list. Prints one JSON object on
stdout:

    {"onnxruntime": "1.32.0", "threads": 2, "reference_min_cosine": ...,
     "precisions": [
       {"precision": "fp32", "batches": [{"batch": 32, "chunks_per_sec": ...}],
        "p50_ms": ..., "p99_ms": ...},
       {"precision": "int8", ..., "cosine_to_fp32_mean": ..., "cosine_to_fp32_min": ...},
       {"precision": "int8 per-channel", ...}]}

threads is the size of onnxruntime's intra-op pool, left at its default.
Progress goes to stderr.
"""
import json
import math
import os
import statistics
import sys
import tempfile
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import QuantType, quantize_dynamic
from safetensors.numpy import load_file
from tokenizers import Tokenizer

HERE = os.path.dirname(os.path.abspath(__file__))
REFERENCE = os.path.join(HERE, "..", "server", "tests", "fixtures", "minilm-reference.json")
# The bar the export must clear on every reference text. docshelf's own
# engine is held to 0.9999 (server/tests/integration/embed.rs); the same
# computation in the same precision on another runtime should do far better.
MIN_COSINE = 0.99999
# LayerNormalization became a standard op in opset 17; nothing newer is used.
OPSET = 17
# Added to the attention scores of padding positions. Large enough that
# softmax gives them exactly zero weight, small enough to stay finite when
# added to a score (torch.finfo(float32).min, which transformers uses, would
# do as well in fp32, but leaves no margin).
MASKED = -1e9


def log(*args):
    print(*args, file=sys.stderr, flush=True)


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


# ---------------------------------------------------------------- the graph


class Graph:
    """Collects nodes and initializers, naming intermediate values uniquely."""

    def __init__(self):
        self.nodes, self.inits, self.count = [], [], 0

    def const(self, name, array):
        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def op(self, op_type, inputs, **attrs):
        self.count += 1
        out = f"{op_type.lower()}_{self.count}"
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=out, **attrs))
        return out


def linear(g, x, w, prefix):
    """torch.nn.Linear as MatMul + Add. The weight is stored transposed
    ([in, out]) as an initializer feeding MatMul directly: that is the
    pattern quantize_dynamic recognises and turns into MatMulInteger."""
    y = g.op("MatMul", [x, g.const(f"{prefix}.weight_t", w[f"{prefix}.weight"].T)])
    return g.op("Add", [y, g.const(f"{prefix}.bias", w[f"{prefix}.bias"])])


def layer_norm(g, x, w, prefix, eps):
    scale = g.const(f"{prefix}.weight", w[f"{prefix}.weight"])
    bias = g.const(f"{prefix}.bias", w[f"{prefix}.bias"])
    return g.op("LayerNormalization", [x, scale, bias], axis=-1, epsilon=eps)


def table(g, w, name):
    """An embedding table as an initializer, under its checkpoint name."""
    return g.const(f"embeddings.{name}.weight", w[f"embeddings.{name}.weight"])


def build_bert(model_dir):
    """BertModel's encoder (no pooler: sentence-transformers pools itself)
    as an onnx.ModelProto, from config.json and model.safetensors."""
    with open(os.path.join(model_dir, "config.json"), encoding="utf-8") as f:
        cfg = json.load(f)
    # Only what this graph implements; anything else would silently be a
    # different model.
    if cfg.get("hidden_act") != "gelu" or cfg.get("position_embedding_type", "absolute") != "absolute":
        raise SystemExit(f"bench-onnx: unsupported BERT variant in {model_dir}/config.json")
    w = load_file(os.path.join(model_dir, "model.safetensors"))
    # Checkpoints saved from BertForX carry a "bert." prefix; BertModel's don't.
    w = {k.removeprefix("bert."): v for k, v in w.items()}
    hidden, heads = cfg["hidden_size"], cfg["num_attention_heads"]
    head_dim, eps = hidden // heads, cfg["layer_norm_eps"]

    g = Graph()
    ids, mask, types = "input_ids", "attention_mask", "token_type_ids"

    # Embeddings: word + position + token type, then LayerNorm. Positions are
    # 0..seq-1, so the position term is the table's first seq rows: a Slice
    # whose end is read from the input's shape, so one graph serves every
    # length. (Not Gather(table, Range(0, seq)), the form PyTorch exports:
    # onnxruntime 1.32's optimiser rewrites that into a Slice itself, and on
    # this graph it made the Slice's bounds 2-D, failing at run time with
    # "Starts must be a 1-D array".)
    zero, one_i, two_i = (g.const(f"i64_{n}", np.array([n], np.int64)) for n in (0, 1, 2))
    seq = g.op("Slice", [g.op("Shape", [ids]), one_i, two_i])  # [seq], 1-D as Slice wants
    positions = g.op("Slice", [table(g, w, "position_embeddings"), zero, seq, zero])
    x = g.op("Gather", [table(g, w, "word_embeddings"), ids])
    x = g.op("Add", [x, positions])
    x = g.op("Add", [x, g.op("Gather", [table(g, w, "token_type_embeddings"), types])])
    x = layer_norm(g, x, w, "embeddings.LayerNorm", eps)

    # The mask, once for all layers: [batch, seq] of 1/0 -> [batch, 1, 1, seq]
    # of 0/MASKED, broadcast over heads and query positions when added to the
    # scores, so padding keys get no attention.
    one = g.const("one", np.array(1.0, np.float32))
    m = g.op("Cast", [mask], to=TensorProto.FLOAT)
    m = g.op("Mul", [g.op("Sub", [one, m]), g.const("masked", np.array(MASKED, np.float32))])
    m = g.op("Unsqueeze", [m, g.const("axes_1_2", np.array([1, 2], np.int64))])

    # [batch, seq, hidden] <-> [batch, seq, heads, head_dim]; 0 in a Reshape
    # shape copies that dimension from the input, so batch and seq stay free.
    split = g.const("split_heads", np.array([0, 0, heads, head_dim], np.int64))
    merge = g.const("merge_heads", np.array([0, 0, hidden], np.int64))
    scale = g.const("scale", np.array(1.0 / math.sqrt(head_dim), np.float32))
    sqrt2 = g.const("sqrt2", np.array(math.sqrt(2.0), np.float32))
    half = g.const("half", np.array(0.5, np.float32))

    def heads_of(x, prefix, perm):
        return g.op("Transpose", [g.op("Reshape", [linear(g, x, w, prefix), split])], perm=perm)

    for i in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{i}"
        # Self-attention. Heads to [batch, heads, seq, head_dim]; keys to
        # [batch, heads, head_dim, seq] so one MatMul gives all the scores.
        q = heads_of(x, f"{p}.attention.self.query", [0, 2, 1, 3])
        k = heads_of(x, f"{p}.attention.self.key", [0, 2, 3, 1])
        v = heads_of(x, f"{p}.attention.self.value", [0, 2, 1, 3])
        scores = g.op("Add", [g.op("Mul", [g.op("MatMul", [q, k]), scale]), m])
        ctx = g.op("MatMul", [g.op("Softmax", [scores], axis=-1), v])
        ctx = g.op("Reshape", [g.op("Transpose", [ctx], perm=[0, 2, 1, 3]), merge])
        out = linear(g, ctx, w, f"{p}.attention.output.dense")
        x = layer_norm(g, g.op("Add", [out, x]), w, f"{p}.attention.output.LayerNorm", eps)

        # Feed-forward with BERT's exact GELU, 0.5·h·(1 + erf(h/√2)), not the
        # tanh approximation (opset 17 has no Gelu op; onnxruntime fuses this
        # pattern into its own BiasGelu kernel when it optimises the graph).
        h = linear(g, x, w, f"{p}.intermediate.dense")
        erf = g.op("Erf", [g.op("Div", [h, sqrt2])])
        h = g.op("Mul", [g.op("Mul", [h, half]), g.op("Add", [erf, one])])
        out = linear(g, h, w, f"{p}.output.dense")
        x = layer_norm(g, g.op("Add", [out, x]), w, f"{p}.output.LayerNorm", eps)

    g.nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"], name="output"))
    dims = ["batch", "seq"]
    graph = helper.make_graph(
        g.nodes,
        "bert_encoder",
        [helper.make_tensor_value_info(n, TensorProto.INT64, dims) for n in (ids, mask, types)],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, dims + [hidden])],
        g.inits,
    )
    opsets = [helper.make_opsetid("", OPSET)]
    model = helper.make_model(graph, opset_imports=opsets, producer_name="docshelf bench-onnx.py")
    # The oldest IR version that can carry this opset, rather than whatever
    # the installed onnx writes by default, so an older runtime loads it too.
    model.ir_version = helper.find_min_ir_version_for(opsets)
    onnx.checker.check_model(model, full_check=True)
    return model


# ------------------------------------------------------------ the embedder


class Embedder:
    """tokenizers -> onnxruntime -> mean pooling -> L2 norm, the pipeline of
    Chroma's default embedding function, with sentence-transformers' batching
    (see encode) so the runtimes are compared on the same work."""

    def __init__(self, model_path, model_dir):
        with open(os.path.join(model_dir, "sentence_bert_config.json"), encoding="utf-8") as f:
            max_len = json.load(f)["max_seq_length"]
        self.tok = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
        # tokenizer.json ships with truncation at 128 and fixed padding to
        # 128; sentence-transformers overrides both (truncate at the model's
        # max_seq_length, 256, pad to the batch's longest), and so must we.
        self.tok.enable_truncation(max_length=max_len)
        pad = self.tok.padding or {}
        self.tok.enable_padding(pad_id=pad.get("pad_id", 0), pad_token=pad.get("pad_token", "[PAD]"))
        # onnxruntime's defaults throughout (all graph optimisations, the
        # intra-op pool sized by onnxruntime): a stack that just creates an
        # InferenceSession gets these.
        self.session = ort.InferenceSession(model_path, providers=["CPUExecutionProvider"])

    def _batch(self, texts):
        enc = self.tok.encode_batch(texts)
        feed = {
            "input_ids": np.array([e.ids for e in enc], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in enc], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids for e in enc], dtype=np.int64),
        }
        (hidden,) = self.session.run(["last_hidden_state"], feed)
        # Mean over real tokens only; the clamp is sentence-transformers' own
        # guard against an all-padding row (which [CLS]/[SEP] rule out here).
        m = feed["attention_mask"][:, :, None].astype(np.float32)
        pooled = (hidden * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)
        norm = np.linalg.norm(pooled, axis=1, keepdims=True)
        return pooled / np.clip(norm, 1e-12, None)

    def encode(self, texts, batch_size=32):
        # Like sentence-transformers' encode: longest texts first, so each
        # batch pads to a similar length, then back to the caller's order.
        # Without this the ONNX peers would pay for padding PyTorch (and
        # docshelf, which sorts by token count) does not.
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        out = np.empty((len(texts), self.session.get_outputs()[0].shape[-1]), np.float32)
        for s in range(0, len(texts), batch_size):
            rows = order[s : s + batch_size]
            out[rows] = self._batch([texts[i] for i in rows])
        return out


def threads_of_session(make):
    """Builds a session with `make` and says how many threads its intra-op
    pool computes with. onnxruntime's Python API reports the setting (0:
    "decide for me"), not what it decided, so count the OS threads the
    session starts: the pool spawns n-1 workers, the calling thread being the
    n-th. Linux only (/proc); None elsewhere."""
    task = f"/proc/{os.getpid()}/task"
    if not os.path.isdir(task):
        return make(), None
    before = len(os.listdir(task))
    obj = make()
    return obj, len(os.listdir(task)) - before + 1


# ------------------------------------------------------------ the checks


def verify(embedder, model_dir):
    """The export must reproduce the sentence-transformers reference vectors."""
    if not os.path.exists(REFERENCE):
        raise SystemExit(f"bench-onnx: reference vectors not found at {REFERENCE}")
    with open(REFERENCE, encoding="utf-8") as f:
        ref = json.load(f)
    want = np.array(ref["vectors"], dtype=np.float64)
    # Same batch size the reference was made with (scripts/reference-embeddings.py).
    got = embedder.encode(ref["texts"], batch_size=8).astype(np.float64)
    if got.shape != want.shape:
        raise SystemExit(f"bench-onnx: export gives {got.shape[1]}-d vectors, reference has "
                         f"{want.shape[1]} (is {model_dir} the model the reference was made from?)")
    cos = (got * want).sum(1) / (np.linalg.norm(got, axis=1) * np.linalg.norm(want, axis=1))
    worst = int(np.argmin(cos))
    log(f"bench-onnx: export checked on {len(cos)} reference texts: min cosine {cos[worst]:.9f} "
        f"({ref['texts'][worst][:40]!r}), need {MIN_COSINE}")
    bad = [(float(c), t) for c, t in zip(cos, ref["texts"]) if c < MIN_COSINE]
    if bad:
        for c, t in bad:
            log(f"  cosine {c:.7f} < {MIN_COSINE} for {t[:60]!r}")
        raise SystemExit(f"bench-onnx: the ONNX export does not match {ref['produced_by']} "
                         f"({len(bad)} of {len(cos)} texts below {MIN_COSINE})")
    return float(cos[worst])


def measure(embedder, chunks, queries, batches):
    """The measurements of bench-sentence-transformers.py, in its order."""
    runs, vectors = [], None
    for batch in batches:
        embedder.encode(chunks[:batch], batch_size=batch)  # warm-up
        start = time.perf_counter()
        v = embedder.encode(chunks, batch_size=batch)
        runs.append({"batch": batch, "chunks_per_sec": len(chunks) / (time.perf_counter() - start)})
        log(f"  batch {batch}: {runs[-1]['chunks_per_sec']:.1f} chunks/s")
        vectors = v if vectors is None else vectors
    embedder.encode(queries[:5])
    latencies = []
    for q in queries:
        t = time.perf_counter()
        embedder.encode([q])
        latencies.append((time.perf_counter() - t) * 1000)
    latencies.sort()
    result = {
        "batches": runs,
        "p50_ms": statistics.median(latencies),
        # The same index bench-sentence-transformers.py takes.
        "p99_ms": latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))],
    }
    log(f"  queries: p50 {result['p50_ms']:.2f} ms, p99 {result['p99_ms']:.2f} ms")
    return result, vectors


def main():
    if len(sys.argv) < 4:
        raise SystemExit(__doc__)
    model_dir, chunks_path, queries_path = sys.argv[1:4]
    device = sys.argv[4] if len(sys.argv) > 4 else "cpu"
    batches = [int(b) for b in (sys.argv[5] if len(sys.argv) > 5 else "32").split(",")]
    if device != "cpu":
        # onnxruntime on PyPI is the CPU build; onnxruntime-gpu is another
        # package, and this script measures what Chroma runs by default.
        raise SystemExit(f"bench-onnx: device {device!r} not supported, only cpu")
    chunks, queries = read_jsonl(chunks_path), read_jsonl(queries_path)

    with tempfile.TemporaryDirectory(prefix="docshelf-bench-onnx-") as tmp:
        fp32_path, int8_path = os.path.join(tmp, "model.onnx"), os.path.join(tmp, "model.int8.onnx")
        log(f"bench-onnx: building the ONNX graph from {model_dir}")
        onnx.save(build_bert(model_dir), fp32_path)

        fp32, threads = threads_of_session(lambda: Embedder(fp32_path, model_dir))
        log(f"bench-onnx: onnxruntime {ort.__version__}, {threads} intra-op threads")
        reference_cosine = verify(fp32, model_dir)

        # Dynamic quantization: int8 weights for the 36 weight MatMuls (and
        # the word and token-type tables), activations quantized on the fly
        # at each call. Two variants: the defaults, which a stack that calls
        # quantize_dynamic plainly gets (per_channel=False: one scale per
        # weight tensor, which moves this model's vectors far from fp32's:
        # docs/benchmarks.md, "Reduced precision"), and per_channel=True (a
        # scale per output column, as docshelf's int8 has), which loses far
        # less.
        variants = [("int8", False), ("int8 per-channel", True)]
        models = []
        for name, per_channel in variants:
            path = os.path.join(tmp, f"model.{name.replace(' ', '-')}.onnx")
            log(f"bench-onnx: quantizing to {name} (dynamic)")
            quantize_dynamic(fp32_path, path, weight_type=QuantType.QInt8, per_channel=per_channel)
            models.append((name, Embedder(path, model_dir)))

        precisions = []
        log("bench-onnx: fp32")
        result, fp32_vectors = measure(fp32, chunks, queries, batches)
        precisions.append({"precision": "fp32", **result})
        for name, embedder in models:
            log(f"bench-onnx: {name}")
            result, vectors = measure(embedder, chunks, queries, batches)
            # Both sets are unit vectors: the cosine is the dot product.
            cos = (fp32_vectors * vectors).sum(axis=1)
            log(f"  cosine to fp32 over {len(cos)} chunks: mean {cos.mean():.5f}, min {cos.min():.5f}")
            precisions.append({
                "precision": name,
                **result,
                "cosine_to_fp32_mean": float(cos.mean()),
                "cosine_to_fp32_min": float(cos.min()),
            })

    print(json.dumps({
        "onnxruntime": ort.__version__,
        "threads": threads,
        # The export check's worst case, for the record.
        "reference_min_cosine": reference_cosine,
        "precisions": precisions,
    }))


if __name__ == "__main__":
    main()
