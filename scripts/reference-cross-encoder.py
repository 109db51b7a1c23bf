#!/usr/bin/env python3
"""Writes the reference scores docshelf's cross-encoder path is tested against.

No registry package ships cross-encoder weights, so the test builds one from
the embedding model (server/tests/support/cross_encoder_dir.rs): every tensor
of all-MiniLM-L6-v2 under `bert.`, and a one-label classifier with weight j =
sin(0.37*j + 0.5), bias 0.05. This script builds the same checkpoint and
scores (query, passage) pairs with Hugging Face transformers'
BertForSequenceClassification (PyTorch, CPU): the logits docshelf must give.
The pairs stress what a cross-encoder adds to the embedder: segment ids,
the pooler, truncation of a pair past 512 tokens from the longer text first.
Run once when the model or the pairs change, in the peers venv
(scripts/peers-venv.sh):

    py=$(scripts/peers-venv.sh | tail -n1)
    "$py" scripts/reference-cross-encoder.py models/all-MiniLM-L6-v2 \
        server/tests/fixtures/cross-encoder-reference.json
"""
import json
import math
import os
import shutil
import sys
import tempfile

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402
import transformers  # noqa: E402
from safetensors.torch import load_file, save_file  # noqa: E402
from transformers import AutoTokenizer, BertForSequenceClassification  # noqa: E402

LONG = (
    "Git is a fast, scalable, distributed revision control system with an unusually rich "
    "command set that provides both high-level operations and full access to internals. "
) * 40

PAIRS = [
    ("how do I undo the last commit", "git-reset(1) > DESCRIPTION\n\nReset current HEAD to the specified state."),
    ("how do I undo the last commit", "git-log(1) > NAME\n\nShow commit logs"),
    ("react useEffect cleanup", "Synchronizing with Effects > Cleanup\n\nReturn a cleanup function from your Effect."),
    ("cherry pick a range of commits", LONG),
    (LONG, "a short passage after a query too long for the model"),
    ("configure the proxy", ""),
    ("SELECT id FROM users", "```sql\nSELECT id, name FROM users WHERE created_at > NOW();\n```"),
    ("Konfiguration beim Start", "Die Konfiguration wird beim Start aus der Umgebung gelesen."),
    ("配置", "配置在启动时从环境变量读取。"),
    ("🚀 deploy", "Deploying to production 🎉"),
    ("?", "a"),
    ("HTTP 413", "HTTP/1.1 413 Payload Too Large: the upload is over the limit."),
]


def build(model_dir: str, out: str) -> None:
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt"):
        if os.path.exists(os.path.join(model_dir, name)):
            shutil.copy(os.path.join(model_dir, name), out)
    with open(os.path.join(model_dir, "config.json")) as f:
        config = json.load(f)
    config["architectures"] = ["BertForSequenceClassification"]
    config["id2label"] = {"0": "LABEL_0"}
    config["label2id"] = {"LABEL_0": 0}
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    hidden = config["hidden_size"]
    tensors = {f"bert.{k}": v for k, v in load_file(os.path.join(model_dir, "model.safetensors")).items()}
    weight = [math.sin(0.37 * j + 0.5) for j in range(hidden)]
    tensors["classifier.weight"] = torch.tensor([weight], dtype=torch.float32)
    tensors["classifier.bias"] = torch.tensor([0.05], dtype=torch.float32)
    save_file({k: v.contiguous() for k, v in tensors.items()}, os.path.join(out, "model.safetensors"), metadata={"format": "pt"})


def main() -> None:
    model_dir, out = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as ce:
        build(model_dir, ce)
        tokenizer = AutoTokenizer.from_pretrained(ce)
        model = BertForSequenceClassification.from_pretrained(ce).eval()
        logits = []
        for query, passage in PAIRS:
            inputs = tokenizer(query, passage, truncation="longest_first", max_length=512, return_tensors="pt")
            with torch.no_grad():
                logits.append(float(model(**inputs).logits[0, 0]))
    payload = {
        "built_from": "sentence-transformers/all-MiniLM-L6-v2 with the classifier of server/tests/support/cross_encoder_dir.rs",
        "produced_by": f"transformers {transformers.__version__}, torch {torch.__version__}",
        "max_length": 512,
        "pairs": [list(p) for p in PAIRS],
        "logits": logits,
    }
    with open(out, "w") as f:
        json.dump(payload, f, ensure_ascii=False)
        f.write("\n")
    print(f"wrote {len(PAIRS)} logits to {out}")


if __name__ == "__main__":
    main()
