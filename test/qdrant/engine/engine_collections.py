"""Collections held by the test engine: one qdrant-edge shard per collection.

Search, scoring, IDF, fusion, filtering, payload selection and payload indexes are
the engine's. Two things are done here because the edge library has no such concept:
the collection registry itself (names, the config echoed by GET) and `query/groups`
(see `query_groups`).
"""

from __future__ import annotations

import itertools
import shutil
from pathlib import Path
from typing import Any

import qdrant_edge as qe

import translate as tr

# Defaults Qdrant reports for a new collection; the edge shard has no cluster,
# WAL or optimizer settings to report, so GET echoes these (and any overrides the
# create request gave) for clients that read them.
_HNSW_DEFAULT = {"m": 16, "ef_construct": 100, "full_scan_threshold": 10000, "max_indexing_threads": 0, "on_disk": False}
_OPTIMIZER_DEFAULT = {
    "deleted_threshold": 0.2,
    "vacuum_min_vector_number": 1000,
    "default_segment_number": 0,
    "max_segment_size": None,
    "memmap_threshold": None,
    "indexing_threshold": 10000,
    "flush_interval_sec": 5,
    "max_optimization_threads": None,
}
_WAL_DEFAULT = {"wal_capacity_mb": 32, "wal_segments_ahead": 0, "wal_retain_closed": 1}


class NotFound(Exception):
    pass


class AlreadyExists(Exception):
    pass


class Collection:
    def __init__(self, name: str, path: Path, body: dict[str, Any]) -> None:
        config, dense_echo, sparse_echo = tr.edge_config(body)
        path.mkdir(parents=True, exist_ok=False)
        self.name = name
        self.path = path
        self.shard = qe.EdgeShard.create(str(path), config)
        vectors = body.get("vectors")
        # Unnamed single-vector collections return vectors as a bare list, as Qdrant does.
        self.unnamed = isinstance(vectors, dict) and isinstance(vectors.get("size"), int)
        self.body = body
        self.dense_echo = dense_echo
        self.sparse_echo = sparse_echo
        self.operations = itertools.count()
        self.field_schemas: dict[str, Any] = {}

    def close(self) -> None:
        self.shard.close()

    # ---------------------------------------------------------------- info

    def info(self) -> dict[str, Any]:
        shard_info = self.shard.info()
        payload_schema = {}
        for field, index in shard_info.payload_schema.items():
            schema = self.field_schemas.get(field)
            entry: dict[str, Any] = {
                "data_type": str(index.data_type).rsplit(".", 1)[-1].lower(),
                "points": index.points,
            }
            if isinstance(schema, dict) and len(schema) > 1:
                entry["params"] = schema
            payload_schema[field] = entry
        params: dict[str, Any] = {
            "vectors": self.dense_echo,
            "shard_number": 1,
            "replication_factor": 1,
            "write_consistency_factor": 1,
            "on_disk_payload": self.body.get("on_disk_payload", True),
        }
        if self.sparse_echo is not None:
            params["sparse_vectors"] = self.sparse_echo
        return {
            "status": "green",
            "optimizer_status": "ok",
            "indexed_vectors_count": shard_info.indexed_vectors_count,
            "points_count": shard_info.points_count,
            "segments_count": shard_info.segments_count,
            "config": {
                "params": params,
                "hnsw_config": {**_HNSW_DEFAULT, **(self.body.get("hnsw_config") or {})},
                "optimizer_config": {**_OPTIMIZER_DEFAULT, **(self.body.get("optimizers_config") or {})},
                "wal_config": {**_WAL_DEFAULT, **(self.body.get("wal_config") or {})},
                "quantization_config": self.body.get("quantization_config"),
                "strict_mode_config": {"enabled": False},
            },
            "payload_schema": payload_schema,
        }

    # ------------------------------------------------------------- updates

    def _update(self, operation: Any, wait: bool) -> dict[str, Any]:
        self.shard.update(operation)
        # The edge shard applies updates synchronously, so with wait=true they are done.
        return {"operation_id": next(self.operations), "status": "completed" if wait else "acknowledged"}

    def upsert(self, body: dict[str, Any], wait: bool) -> dict[str, Any]:
        if body.get("shard_key") is not None:
            raise tr.Unsupported("`shard_key` (the test engine has one shard per collection)")
        points = tr.points_from_insert(body)
        op = qe.UpdateOperation.upsert_points(
            points,
            condition=tr.to_filter(body.get("update_filter")),
            update_mode=tr.update_mode(body.get("update_mode")),
        )
        return self._update(op, wait)

    def delete(self, body: dict[str, Any], wait: bool) -> dict[str, Any]:
        if body.get("shard_key") is not None:
            raise tr.Unsupported("`shard_key` (the test engine has one shard per collection)")
        if "points" in body:
            op = qe.UpdateOperation.delete_points([tr.point_id(i) for i in body["points"]])
        else:
            op = qe.UpdateOperation.delete_points_by_filter(tr.to_filter(body["filter"]))
        return self._update(op, wait)

    def create_index(self, body: dict[str, Any], wait: bool) -> dict[str, Any]:
        schema = body.get("field_schema")
        op = qe.UpdateOperation.create_field_index(body["field_name"], tr.field_index_schema(schema))
        result = self._update(op, wait)
        self.field_schemas[body["field_name"]] = schema
        return result

    # --------------------------------------------------------------- reads

    def retrieve(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        records = self.shard.retrieve(
            [tr.point_id(i) for i in body["ids"]],
            with_payload=tr.with_payload(body.get("with_payload"), True),
            with_vector=tr.with_vector(body.get("with_vector")),
        )
        return [tr.record_json(r, self.unnamed) for r in records]

    def scroll(self, body: dict[str, Any]) -> dict[str, Any]:
        offset = body.get("offset")
        records, next_offset = self.shard.scroll(
            qe.ScrollRequest(
                offset=None if offset is None else tr.point_id(offset),
                limit=body.get("limit") if body.get("limit") is not None else tr.DEFAULT_LIMIT,
                filter=tr.to_filter(body.get("filter")),
                with_payload=tr.with_payload(body.get("with_payload"), True),
                with_vector=tr.with_vector(body.get("with_vector")),
                order_by=tr.order_by(body["order_by"]) if body.get("order_by") is not None else None,
            )
        )
        return {
            "points": [tr.record_json(r, self.unnamed) for r in records],
            "next_page_offset": None if next_offset is None else tr.id_to_json(next_offset),
        }

    def count(self, body: dict[str, Any]) -> dict[str, Any]:
        exact = body.get("exact")
        n = self.shard.count(qe.CountRequest(exact=True if exact is None else exact, filter=tr.to_filter(body.get("filter"))))
        return {"count": n}

    def _lookup_vector(self, pid: Any, using: str) -> Any:
        records = self.shard.retrieve([pid], with_payload=False, with_vector=[using] if using else True)
        if not records:
            raise tr.WrongInput(f"No point with id {tr.id_to_json(pid)} found")
        vector = records[0].vector
        if isinstance(vector, dict):
            if using not in vector:
                raise tr.WrongInput(f"Vector `{using}` not found in point {tr.id_to_json(pid)}")
            return vector[using]
        return vector

    def query(self, body: dict[str, Any]) -> dict[str, Any]:
        request = tr.query_request(body, tr.QueryContext(self._lookup_vector))
        points = self.shard.query(request)
        return {"points": [tr.scored_point_json(p, self.unnamed) for p in points]}

    def query_batch(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        requests = [tr.query_request(r, tr.QueryContext(self._lookup_vector)) for r in body["searches"]]
        if hasattr(self.shard, "query_batch") and hasattr(qe, "QueryBatchRequest"):
            results = self.shard.query_batch(qe.QueryBatchRequest(requests))
        else:
            # qdrant-edge-py before 0.9 has no batch call; each search is still the engine's.
            results = [self.shard.query(r) for r in requests]
        return [{"points": [tr.scored_point_json(p, self.unnamed) for p in points]} for points in results]

    def query_groups(self, body: dict[str, Any], registry: "Registry") -> dict[str, Any]:
        """Emulated: qdrant-edge-py has no grouping API.

        The engine runs the query (scoring, fusion, filtering) over every candidate,
        returning only the `group_by` field; grouping is done here the way Qdrant
        defines it: a point joins one group per value of the field (strings or
        integers; points without it are skipped), groups are ordered by their best
        hit, each keeps its `group_size` best hits, and `limit` groups are returned.
        The hits' payloads and vectors are then fetched through the engine.
        """
        group_by = body["group_by"]
        group_size = body.get("group_size") if body.get("group_size") is not None else 3
        limit = body.get("limit") if body.get("limit") is not None else tr.DEFAULT_LIMIT
        ctx = tr.QueryContext(self._lookup_vector)
        candidates = max(self.shard.info().points_count, 1)
        request = tr.query_request(
            {**{k: v for k, v in body.items() if k not in ("group_by", "group_size", "limit", "with_lookup")}, "offset": None},
            ctx,
            limit=candidates,
            payload=[group_by],
            vector=False,
        )
        groups: dict[Any, list[Any]] = {}
        order: list[Any] = []
        for point in self.shard.query(request):
            for value in _group_values(point.payload or {}, group_by):
                key = (type(value).__name__, value)
                hits = groups.get(key)
                if hits is None:
                    if len(order) >= limit:
                        continue
                    hits = groups[key] = []
                    order.append(key)
                if len(hits) < group_size:
                    hits.append(point)
        wanted = {p.id for key in order for p in groups[key]}
        records = {}
        if wanted:
            fetched = self.shard.retrieve(
                list(wanted),
                with_payload=tr.with_payload(body.get("with_payload"), False),
                with_vector=tr.with_vector(body.get("with_vector")),
            )
            records = {r.id: r for r in fetched}
        out_groups = []
        for key in order:
            hits_json = []
            for p in groups[key]:
                record = records.get(p.id)
                hit = tr.scored_point_json(p, self.unnamed)
                hit["payload"] = record.payload if record is not None else None
                hit["vector"] = tr.vector_to_json(record.vector, self.unnamed) if record is not None else None
                hits_json.append(hit)
            group: dict[str, Any] = {"id": key[1], "hits": hits_json}
            lookup = body.get("with_lookup")
            if lookup is not None:
                group["lookup"] = registry.lookup_record(lookup, key[1])
            out_groups.append(group)
        return {"groups": out_groups}


def _group_values(payload: dict[str, Any], path: str) -> list[Any]:
    values: list[Any] = [payload]
    for part in path.split("."):
        array = part.endswith("[]")
        name = part[:-2] if array else part
        nxt: list[Any] = []
        for v in values:
            if isinstance(v, dict) and name in v:
                item = v[name]
                nxt.extend(item if isinstance(item, list) else [item])
        values = nxt
    flat: list[Any] = []
    for v in values:
        for item in v if isinstance(v, list) else [v]:
            if isinstance(item, (str, int)) and not isinstance(item, bool) and item not in flat:
                flat.append(item)
    return flat


class Registry:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.collections: dict[str, Collection] = {}
        self._dirs = itertools.count()

    def get(self, name: str) -> Collection:
        collection = self.collections.get(name)
        if collection is None:
            raise NotFound(f"Collection `{name}` doesn't exist!")
        return collection

    def create(self, name: str, body: dict[str, Any]) -> None:
        if name in self.collections:
            raise AlreadyExists(f"Collection `{name}` already exists!")
        # Directory names are counters, so any collection name is safe on disk.
        self.collections[name] = Collection(name, self.root / f"c{next(self._dirs)}", body)

    def delete(self, name: str) -> bool:
        collection = self.collections.pop(name, None)
        if collection is None:
            return False
        collection.close()
        shutil.rmtree(collection.path, ignore_errors=True)
        return True

    def close_all(self) -> None:
        for name in list(self.collections):
            self.delete(name)

    def lookup_record(self, lookup: Any, group_id: Any) -> dict[str, Any] | None:
        if isinstance(lookup, str):
            lookup = {"collection": lookup}
        other = self.get(lookup["collection"])
        try:
            pid = tr.point_id(group_id)
        except tr.WrongInput:
            return None
        records = other.shard.retrieve(
            [pid],
            with_payload=tr.with_payload(lookup.get("with_payload"), True),
            with_vector=tr.with_vector(lookup.get("with_vectors")),
        )
        return tr.record_json(records[0], other.unnamed) if records else None
