#!/usr/bin/env python3
"""Writes the reference vectors docshelf's embedding engine is tested against.

Runs sentence-transformers (PyTorch, CPU) on the same model directory docshelf
loads, over texts chosen to stress tokenisation and pooling: short queries, a
paragraph past the 256-token limit, code, non-ASCII scripts, emoji, near-empty
input. Run once when the model or the texts change:

    python3 -m venv .venv && .venv/bin/pip install sentence-transformers
    .venv/bin/python scripts/reference-embeddings.py models/all-MiniLM-L6-v2 \
        server/tests/fixtures/minilm-reference.json
"""
import json
import os
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from sentence_transformers import SentenceTransformer  # noqa: E402

LONG = (
    "Git is a fast, scalable, distributed revision control system with an unusually rich "
    "command set that provides both high-level operations and full access to internals. "
) * 20

TEXTS = [
    "how do I undo the last commit",
    "react useEffect cleanup",
    "What is the difference between a rebase and a merge?",
    "Add file contents to the index",
    "Routing > Dynamic routes",
    LONG,
    "fn main() {\n    let v: Vec<u32> = (0..10).map(|x| x * x).collect();\n    println!(\"{v:?}\");\n}",
    "```python\nimport numpy as np\nprint(np.arange(10).reshape(2, 5))\n```",
    "SELECT id, name FROM users WHERE created_at > NOW() - INTERVAL '7 days' ORDER BY name;",
    "<div class=\"card\"><h2>Title</h2><p>Body &amp; more</p></div>",
    "Die Konfiguration wird beim Start aus der Umgebung gelesen.",
    "La configuración se lee del entorno al arrancar el servidor.",
    "配置在启动时从环境变量读取。",
    "設定は起動時に環境変数から読み込まれます。",
    "Конфигурация читается из окружения при запуске.",
    "🚀 deploy to production 🎉✨",
    "a",
    "?",
    "   ",
    "",
    "e = mc^2; ∑_{i=1}^{n} x_i ≥ 0",
    "HTTP/1.1 413 Payload Too Large",
    "The quick brown fox jumps over the lazy dog. " * 3,
    "kubectl get pods --all-namespaces -o wide | grep CrashLoopBackOff",
    "Cañón naïve café résumé façade coöperate",
    "1234567890 0xDEADBEEF 3.14159 -42",
]


def main() -> None:
    model_dir, out = sys.argv[1], sys.argv[2]
    model = SentenceTransformer(model_dir, device="cpu")
    vectors = model.encode(TEXTS, batch_size=8, normalize_embeddings=True, convert_to_numpy=True)
    payload = {
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "produced_by": f"sentence-transformers {__import__('sentence_transformers').__version__}",
        "max_seq_length": model.max_seq_length,
        "texts": TEXTS,
        "vectors": [[round(float(x), 7) for x in v] for v in vectors],
    }
    with open(out, "w", encoding="utf-8") as f:
        json.dump(payload, f, ensure_ascii=False)
        f.write("\n")
    print(f"wrote {len(TEXTS)} reference vectors to {out}")


if __name__ == "__main__":
    main()
