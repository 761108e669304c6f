"""A Qdrant REST server for tests, backed by the Qdrant engine in-process (qdrant-edge-py).

Answers the subset of Qdrant's REST API that litm-pack's QdrantHybridStore and its tests
use, with Qdrant's envelopes, statuses and error shapes. Request bodies are validated
against Qdrant's own models (see validation.py); the engine does the searching, scoring,
IDF, fusion and filtering (see translate.py and engine_collections.py for the few
things emulated here).

    python server.py --port 0      # prints "LISTENING <port>" once it accepts requests

Single process; data lives in a temporary directory removed on exit (SIGTERM, SIGINT,
or the parent process going away).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import sys
import tempfile
import threading
import time
import traceback
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable
from urllib.parse import parse_qs, unquote, urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))

import engine_collections as ec  # noqa: E402
import translate as tr  # noqa: E402
from validation import BodyError, Validator  # noqa: E402

# qdrant-edge-py 0.8.0 is built from Qdrant's 1.19 line (its `api` crate is 1.19.1-dev);
# the JS client's compatibility check reads this.
QDRANT_VERSION = "1.19.1"
# The one peer of the cluster the engine answers as.
PEER_ID = 1


class HttpError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class Engine:
    """Routes a request to the registry; one lock, so the engine sees one call at a time."""

    def __init__(self, data_dir: Path, validator: Validator) -> None:
        self.registry = ec.Registry(data_dir)
        self.validator = validator
        self.lock = threading.Lock()
        # (method, regex, body schema or None, handler)
        c = r"/collections/(?P<name>[^/]+)"
        self.routes: list[tuple[str, re.Pattern[str], str | None, Callable[..., Any]]] = [
            ("GET", re.compile(r"/collections"), None, self.list_collections),
            ("GET", re.compile(r"/aliases"), None, self.list_aliases),
            ("POST", re.compile(r"/collections/aliases"), "ChangeAliasesOperation", self.change_aliases),
            ("GET", re.compile(r"/cluster"), None, self.cluster),
            ("GET", re.compile(c), None, self.get_collection),
            ("GET", re.compile(c + r"/exists"), None, self.collection_exists),
            ("GET", re.compile(c + r"/aliases"), None, self.collection_aliases),
            ("PUT", re.compile(c), "CreateCollection", self.create_collection),
            ("PATCH", re.compile(c), "UpdateCollection", self.update_collection),
            ("DELETE", re.compile(c), None, self.delete_collection),
            ("PUT", re.compile(c + r"/index"), "CreateFieldIndex", self.create_index),
            ("GET", re.compile(c + r"/shards"), None, self.list_shard_keys),
            ("PUT", re.compile(c + r"/shards"), "CreateShardingKey", self.create_shard_key),
            ("POST", re.compile(c + r"/shards/delete"), "DropShardingKey", self.delete_shard_key),
            ("PUT", re.compile(c + r"/points"), "PointInsertOperations", self.upsert),
            ("POST", re.compile(c + r"/points"), "PointRequest", self.retrieve),
            ("POST", re.compile(c + r"/points/delete"), "PointsSelector", self.delete_points),
            ("POST", re.compile(c + r"/points/scroll"), "ScrollRequest", self.scroll),
            ("POST", re.compile(c + r"/points/count"), "CountRequest", self.count),
            ("POST", re.compile(c + r"/facet"), "FacetRequest", self.facet),
            ("POST", re.compile(c + r"/points/query"), "QueryRequest", self.query),
            ("POST", re.compile(c + r"/points/query/batch"), "QueryRequestBatch", self.query_batch),
            ("POST", re.compile(c + r"/points/query/groups"), "QueryGroupsRequest", self.query_groups),
            ("GET", re.compile(c + r"/points/(?P<point>[^/]+)"), None, self.get_point),
        ]

    def dispatch(self, method: str, path: str, query: dict[str, list[str]], raw: bytes) -> Any:
        for route_method, pattern, schema, handler in self.routes:
            if route_method != method:
                continue
            match = pattern.fullmatch(path)
            if not match:
                continue
            params = {k: unquote(v) for k, v in match.groupdict().items()}
            self.validator.validate_query(method, pattern.pattern, query)
            body = None
            if schema is not None:
                body = self.validator.validate(schema, parse_json(raw))
            with self.lock:
                return handler(body=body, query=query, **params)
        raise HttpError(404, "")

    # --------------------------------------------------------- collections

    def list_collections(self, **_: Any) -> Any:
        return {"collections": [{"name": n} for n in self.registry.collections]}

    def list_aliases(self, **_: Any) -> Any:
        return self.registry.alias_list()

    def collection_aliases(self, name: str, **_: Any) -> Any:
        return self.registry.alias_list(name)

    def change_aliases(self, body: Any, **_: Any) -> Any:
        return self.registry.change_aliases(body["actions"])

    def cluster(self, **_: Any) -> Any:
        # The engine answers as a one-peer cluster: shard keys work (see engine_collections.py).
        return {
            "status": "enabled",
            "peer_id": PEER_ID,
            "peers": {str(PEER_ID): {"uri": "http://127.0.0.1:6335/"}},
            "raft_info": {"term": 1, "commit": 1, "pending_operations": 0, "leader": PEER_ID, "role": "Leader", "is_voter": True},
            "consensus_thread_status": {"consensus_thread_status": "working", "last_update": "1970-01-01T00:00:00Z"},
            "message_send_failures": {},
        }

    def get_collection(self, name: str, **_: Any) -> Any:
        return self.registry.get(name).info()

    def collection_exists(self, name: str, **_: Any) -> Any:
        return {"exists": self.registry.exists(name)}

    def create_collection(self, name: str, body: Any, **_: Any) -> Any:
        self.registry.create(name, body)
        return True

    def update_collection(self, name: str, body: Any, **_: Any) -> Any:
        return self.registry.get(name).update_params(body)

    def delete_collection(self, name: str, **_: Any) -> Any:
        return self.registry.delete(name)

    def list_shard_keys(self, name: str, **_: Any) -> Any:
        return self.registry.get(name).shard_keys()

    def create_shard_key(self, name: str, body: Any, **_: Any) -> Any:
        return self.registry.get(name).create_shard_key(body, PEER_ID)

    def delete_shard_key(self, name: str, body: Any, **_: Any) -> Any:
        return self.registry.get(name).delete_shard_key(body)

    def create_index(self, name: str, body: Any, query: dict[str, list[str]], **_: Any) -> Any:
        return self.registry.get(name).create_index(body, wait_flag(query))

    # -------------------------------------------------------------- points

    def upsert(self, name: str, body: Any, query: dict[str, list[str]], **_: Any) -> Any:
        return self.registry.get(name).upsert(body, wait_flag(query))

    def delete_points(self, name: str, body: Any, query: dict[str, list[str]], **_: Any) -> Any:
        return self.registry.get(name).delete(body, wait_flag(query))

    def retrieve(self, name: str, body: Any, **_: Any) -> Any:
        return self.registry.get(name).retrieve(body)

    def get_point(self, name: str, point: str, **_: Any) -> Any:
        collection = self.registry.get(name)
        raw_id: Any = int(point) if point.isdigit() else point
        records = collection.retrieve({"ids": [raw_id], "with_payload": True, "with_vector": True})
        if not records:
            raise HttpError(404, f"Not found: No point with id {point} found")
        return records[0]

    def scroll(self, name: str, body: Any, **_: Any) -> Any:
        return self.registry.get(name).scroll(body)

    def count(self, name: str, body: Any, **_: Any) -> Any:
        return self.registry.get(name).count(body)

    def facet(self, name: str, body: Any, **_: Any) -> Any:
        return self.registry.get(name).facet(body)

    def query(self, name: str, body: Any, **_: Any) -> Any:
        return self.registry.get(name).query(body)

    def query_batch(self, name: str, body: Any, **_: Any) -> Any:
        return self.registry.get(name).query_batch(body)

    def query_groups(self, name: str, body: Any, **_: Any) -> Any:
        return self.registry.get(name).query_groups(body, self.registry)


def wait_flag(query: dict[str, list[str]]) -> bool:
    return query.get("wait", ["false"])[-1].lower() == "true"


def parse_json(raw: bytes) -> Any:
    try:
        return json.loads(raw.decode("utf-8") if raw else "")
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BodyError(400, f"Format error in JSON body: {exc}") from exc


def error_for(exc: Exception) -> tuple[int, str]:
    """Map a failure to Qdrant's status code and `status.error` text."""
    if isinstance(exc, (BodyError, HttpError)):
        return exc.status, exc.message
    if isinstance(exc, ec.NotFound):
        return 404, f"Not found: {exc}"
    if isinstance(exc, ec.BadRequest):
        return 400, f"Bad request: {exc}"
    if isinstance(exc, ec.AlreadyExists):
        return 409, f"Wrong input: {exc}"
    if isinstance(exc, tr.WrongInput):
        return 400, f"Wrong input: {exc}"
    if isinstance(exc, tr.Unsupported):
        return 400, f"Bad request: not supported by the qdrant-edge test engine: {exc}"
    message = str(exc)
    # qdrant-edge-py raises plain Exception / ValueError for the engine's own refusals
    # (dimension mismatch, unknown vector name, ...); anything else is a bug here.
    if type(exc) in (Exception, ValueError) and not message.startswith("Service"):
        return 400, message if message.startswith("Wrong input") else f"Wrong input: {message}"
    traceback.print_exception(exc, file=sys.stderr)
    return 500, f"Service internal error: {message}"


def make_handler(engine: Engine, verbose: bool) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "qdrant-edge-test-engine"
        # Headers and body go out in two writes; with Nagle on, the body waits for the client's delayed ACK
        # (about 40 ms a request on Linux). Qdrant itself answers at once.
        disable_nagle_algorithm = True

        def log_message(self, fmt: str, *args: Any) -> None:  # noqa: D401
            if verbose:
                super().log_message(fmt, *args)

        def _send(self, status: int, payload: Any, content_type: str = "application/json") -> None:
            data = payload if isinstance(payload, bytes) else json.dumps(payload).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _handle(self, method: str) -> None:
            started = time.perf_counter()
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            parts = urlsplit(self.path)
            path = parts.path.rstrip("/") or "/"
            if method == "GET" and path == "/":
                self._send(200, {"title": "qdrant - vector search engine", "version": QDRANT_VERSION, "commit": None})
                return
            if method == "GET" and path in ("/healthz", "/livez", "/readyz"):
                text = "all shards are ready" if path == "/readyz" else "healthz check passed"
                self._send(200, text.encode(), "text/plain; charset=utf-8")
                return
            try:
                result = engine.dispatch(method, path, parse_qs(parts.query), raw)
            except Exception as exc:  # noqa: BLE001 - every failure becomes Qdrant's error shape
                status, message = error_for(exc)
                if status == 404 and not message:
                    self._send(404, b"", "text/plain")
                    return
                if status >= 500 or verbose:
                    print(f"{method} {self.path}: {status} {message}", file=sys.stderr, flush=True)
                self._send(status, {"status": {"error": message}, "time": time.perf_counter() - started})
                return
            self._send(200, {"result": result, "status": "ok", "time": time.perf_counter() - started})

        def do_GET(self) -> None:  # noqa: N802
            self._handle("GET")

        def do_PUT(self) -> None:  # noqa: N802
            self._handle("PUT")

        def do_POST(self) -> None:  # noqa: N802
            self._handle("POST")

        def do_DELETE(self) -> None:  # noqa: N802
            self._handle("DELETE")

        def do_PATCH(self) -> None:  # noqa: N802
            self._handle("PATCH")

    return Handler


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=6333, help="0 picks a free port")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args(argv)

    validator = Validator()
    data_dir = Path(tempfile.mkdtemp(prefix="qdrant-edge-engine-"))
    engine = Engine(data_dir, validator)
    server = ThreadingHTTPServer((args.host, args.port), make_handler(engine, args.verbose))
    server.daemon_threads = True

    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())

    parent = os.getppid()

    def watch_parent() -> None:
        # Reparenting means whoever started us is gone: do not outlive it.
        while not stop.wait(1.0):
            if os.getppid() != parent:
                stop.set()

    threading.Thread(target=watch_parent, daemon=True).start()
    serving = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True)
    serving.start()
    print(f"LISTENING {server.server_address[1]}", flush=True)
    try:
        while not stop.wait(0.5):
            pass
    finally:
        server.shutdown()
        server.server_close()
        with engine.lock:
            engine.registry.close_all()
        shutil.rmtree(data_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
