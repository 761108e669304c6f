"""Collections held by the test engine: qdrant-edge shards behind Qdrant's collection API.

Search, scoring, IDF, fusion, filtering, payload selection, facets and payload indexes
are the engine's. What the edge library has no concept of is done here: the collection
registry (names, aliases, the config and metadata echoed by GET), `query/groups` (see
`query_groups`) and user-defined sharding. A collection with `sharding_method: custom`
holds one edge shard per shard key, as a one-peer Qdrant cluster does (each key gets its
own shard, so its own IDF statistics); requests are routed by `shard_key` with Qdrant's
own refusals (no key on an update, an unknown key). Reads without a key fan out to
every shard and are merged, except fused or prefetched queries, which Qdrant fuses
across shards and this engine cannot: those are refused by name.
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


class BadRequest(Exception):
    """Qdrant's `StorageError::BadRequest` (400 "Bad request: ...")."""


def _key_text(key: Any) -> str:
    # Qdrant displays a keyword shard key quoted, a number bare.
    return f'"{key}"' if isinstance(key, str) else str(key)


def _id_order(pid: Any) -> tuple[int, int]:
    # Qdrant orders numeric ids before UUIDs.
    return (0, pid) if isinstance(pid, int) else (1, pid.int)


def _facet_order(value: Any) -> tuple[int, Any]:
    return (0, value) if isinstance(value, bool) else (1, value) if isinstance(value, int) else (2, str(value))


class AlreadyExists(Exception):
    pass


class Collection:
    def __init__(self, name: str, path: Path, body: dict[str, Any]) -> None:
        config, dense_echo, sparse_echo = tr.edge_config(body)
        path.mkdir(parents=True, exist_ok=False)
        self.name = name
        self.path = path
        self.config = config
        self.custom = body.get("sharding_method") == "custom"
        # shard key (None for auto sharding) -> edge shard; custom collections start with none.
        self.shards: dict[Any, Any] = {}
        self._shard_dirs = itertools.count()
        if not self.custom:
            self.shards[None] = self._new_shard()
        vectors = body.get("vectors")
        # Unnamed single-vector collections return vectors as a bare list, as Qdrant does.
        self.unnamed = isinstance(vectors, dict) and isinstance(vectors.get("size"), int)
        self.body = body
        self.metadata: dict[str, Any] | None = body.get("metadata")
        self.dense_echo = dense_echo
        self.sparse_echo = sparse_echo
        self.operations = itertools.count()
        self.field_schemas: dict[str, Any] = {}

    def _new_shard(self) -> Any:
        path = self.path / f"s{next(self._shard_dirs)}"
        path.mkdir()
        return qe.EdgeShard.create(str(path), self.config)

    def close(self) -> None:
        for shard in self.shards.values():
            shard.close()

    # -------------------------------------------------------------- shards

    def _keys(self, selector: Any) -> list[Any]:
        """A ShardKeySelector as a list of keys (None: no selector)."""
        if selector is None:
            return []
        if isinstance(selector, dict):
            raise tr.Unsupported("shard key selectors with a fallback")
        return list(selector) if isinstance(selector, list) else [selector]

    def _update_shards(self, selector: Any) -> list[Any]:
        """Shards an update goes to: Qdrant's `split_by_shard` (no key means the default shard)."""
        keys = self._keys(selector)
        if not keys:
            if self.custom:
                raise tr.WrongInput("Shard key not specified")
            return [self.shards[None]]
        for key in keys:
            if key not in self.shards or key is None:
                raise tr.WrongInput(f"Shard key {_key_text(key)} not found")
        return [self.shards[key] for key in keys]

    def _read_shards(self, selector: Any) -> list[Any]:
        """Shards a read goes to: the selected keys, else all of them (Qdrant's `select_shards`)."""
        keys = self._keys(selector)
        if not keys:
            return list(self.shards.values())
        for key in keys:
            if key not in self.shards or key is None:
                raise BadRequest(f"Shard key {_key_text(key)} not found")
        return [self.shards[key] for key in keys]

    def create_shard_key(self, body: dict[str, Any], peer_id: int) -> bool:
        key = body["shard_key"]
        if not self.custom:
            raise BadRequest("Shard Key cannot be created with Auto sharding method")
        if key in self.shards:
            raise BadRequest(f"Sharding key {_key_text(key)} already exists for collection {self.name}")
        placement = body.get("placement")
        if placement is not None:
            if not placement:
                raise BadRequest(
                    f"Sharding key {_key_text(key)} placement cannot be empty. If you want to use random placement, do not specify placement"
                )
            for peer in placement:
                if peer != peer_id:
                    raise BadRequest(f"Peer {peer} does not exist")
        if body.get("initial_state") not in (None, "Active", "Partial"):
            raise BadRequest(f"Initial state cannot be {body['initial_state']}, only Active or Partial are allowed")
        shard = self._new_shard()
        for field, schema in self.field_schemas.items():
            shard.update(qe.UpdateOperation.create_field_index(field, tr.field_index_schema(schema)))
        self.shards[key] = shard
        return True

    def delete_shard_key(self, body: dict[str, Any]) -> bool:
        key = body["shard_key"]
        if not self.custom:
            raise BadRequest("Shard Key cannot be created with Auto sharding method")
        if key not in self.shards:
            raise BadRequest(f"Sharding key {_key_text(key)} does not exist for collection {self.name}")
        self.shards.pop(key).close()
        return True

    def shard_keys(self) -> dict[str, Any]:
        if not self.custom:
            return {"shard_keys": None}
        return {"shard_keys": [{"key": key} for key in self.shards]}

    # ---------------------------------------------------------------- info

    def info(self) -> dict[str, Any]:
        infos = [shard.info() for shard in self.shards.values()]
        payload_schema = {}
        for field, schema in self.field_schemas.items():
            data_type = schema if isinstance(schema, str) else schema["type"]
            points = 0
            for shard_info in infos:
                index = shard_info.payload_schema.get(field)
                if index is not None:
                    data_type = str(index.data_type).rsplit(".", 1)[-1].lower()
                    points += index.points
            entry: dict[str, Any] = {"data_type": data_type, "points": points}
            if isinstance(schema, dict) and len(schema) > 1:
                entry["params"] = schema
            payload_schema[field] = entry
        params: dict[str, Any] = {
            "vectors": self.dense_echo,
            "shard_number": self.body.get("shard_number") or 1,
            "replication_factor": self.body.get("replication_factor") or 1,
            "write_consistency_factor": self.body.get("write_consistency_factor") or 1,
            "on_disk_payload": self.body.get("on_disk_payload", True),
        }
        if self.body.get("sharding_method") is not None:
            params["sharding_method"] = self.body["sharding_method"]
        if self.sparse_echo is not None:
            params["sparse_vectors"] = self.sparse_echo
        config: dict[str, Any] = {
            "params": params,
            "hnsw_config": {**_HNSW_DEFAULT, **(self.body.get("hnsw_config") or {})},
            "optimizer_config": {**_OPTIMIZER_DEFAULT, **(self.body.get("optimizers_config") or {})},
            "wal_config": {**_WAL_DEFAULT, **(self.body.get("wal_config") or {})},
            "quantization_config": self.body.get("quantization_config"),
            "strict_mode_config": {"enabled": False},
        }
        if self.metadata is not None:
            config["metadata"] = self.metadata
        return {
            "status": "green",
            "optimizer_status": "ok",
            "indexed_vectors_count": sum(i.indexed_vectors_count for i in infos),
            "points_count": sum(i.points_count for i in infos),
            "segments_count": sum(i.segments_count for i in infos),
            "config": config,
            "payload_schema": payload_schema,
        }

    def update_params(self, body: dict[str, Any]) -> bool:
        """PATCH: only `metadata` (merged into the existing one, as Qdrant does) is applied here."""
        for key, value in body.items():
            if key != "metadata" and value is not None:
                raise tr.Unsupported(f"updating `{key}` of a collection")
        metadata = body.get("metadata")
        if metadata is not None:
            self.metadata = {**(self.metadata or {}), **metadata} if metadata else {}
        return True

    # ------------------------------------------------------------- updates

    def _update(self, shards: list[Any], operation: Any, wait: bool) -> dict[str, Any]:
        for shard in shards:
            shard.update(operation)
        # The edge shard applies updates synchronously, so with wait=true they are done.
        return {"operation_id": next(self.operations), "status": "completed" if wait else "acknowledged"}

    def upsert(self, body: dict[str, Any], wait: bool) -> dict[str, Any]:
        shards = self._update_shards(body.get("shard_key"))
        points = tr.points_from_insert(body)
        op = qe.UpdateOperation.upsert_points(
            points,
            condition=tr.to_filter(body.get("update_filter")),
            update_mode=tr.update_mode(body.get("update_mode")),
        )
        return self._update(shards, op, wait)

    def delete(self, body: dict[str, Any], wait: bool) -> dict[str, Any]:
        shards = self._update_shards(body.get("shard_key"))
        if "points" in body:
            op = qe.UpdateOperation.delete_points([tr.point_id(i) for i in body["points"]])
        else:
            op = qe.UpdateOperation.delete_points_by_filter(tr.to_filter(body["filter"]))
        return self._update(shards, op, wait)

    def create_index(self, body: dict[str, Any], wait: bool) -> dict[str, Any]:
        schema = body.get("field_schema")
        op = qe.UpdateOperation.create_field_index(body["field_name"], tr.field_index_schema(schema))
        result = self._update(list(self.shards.values()), op, wait)
        self.field_schemas[body["field_name"]] = schema
        return result

    # --------------------------------------------------------------- reads

    def retrieve(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        out = []
        for shard in self._read_shards(body.get("shard_key")):
            records = shard.retrieve(
                [tr.point_id(i) for i in body["ids"]],
                with_payload=tr.with_payload(body.get("with_payload"), True),
                with_vector=tr.with_vector(body.get("with_vector")),
            )
            out.extend(tr.record_json(r, self.unnamed) for r in records)
        return out

    def scroll(self, body: dict[str, Any]) -> dict[str, Any]:
        offset = body.get("offset")
        limit = body.get("limit") if body.get("limit") is not None else tr.DEFAULT_LIMIT
        shards = self._read_shards(body.get("shard_key"))
        if len(shards) > 1 and body.get("order_by") is not None:
            raise tr.Unsupported("scroll with order_by across several shard keys")

        def request(page: int) -> Any:
            return qe.ScrollRequest(
                offset=None if offset is None else tr.point_id(offset),
                limit=page,
                filter=tr.to_filter(body.get("filter")),
                with_payload=tr.with_payload(body.get("with_payload"), True),
                with_vector=tr.with_vector(body.get("with_vector")),
                order_by=tr.order_by(body["order_by"]) if body.get("order_by") is not None else None,
            )

        if len(shards) == 1:
            records, next_offset = shards[0].scroll(request(limit))
        else:
            # Each shard's next `limit + 1` points from the offset, merged in id order (Qdrant's scroll order).
            merged = sorted((r for shard in shards for r in shard.scroll(request(limit + 1))[0]), key=lambda r: _id_order(r.id))
            records, next_offset = merged[:limit], (merged[limit].id if len(merged) > limit else None)
        return {
            "points": [tr.record_json(r, self.unnamed) for r in records],
            "next_page_offset": None if next_offset is None else tr.id_to_json(next_offset),
        }

    def count(self, body: dict[str, Any]) -> dict[str, Any]:
        exact = body.get("exact")
        request = qe.CountRequest(exact=True if exact is None else exact, filter=tr.to_filter(body.get("filter")))
        return {"count": sum(shard.count(request) for shard in self._read_shards(body.get("shard_key")))}

    def facet(self, body: dict[str, Any]) -> dict[str, Any]:
        limit = body.get("limit") if body.get("limit") is not None else tr.DEFAULT_LIMIT
        request = qe.FacetRequest(key=body["key"], limit=limit, exact=bool(body.get("exact") or False), filter=tr.to_filter(body.get("filter")))
        counts: dict[Any, int] = {}
        for shard in self._read_shards(body.get("shard_key")):
            for hit in shard.facet(request).hits:
                counts[hit.value] = counts.get(hit.value, 0) + hit.count
        # Qdrant's facet order: count descending, then value.
        hits = sorted(counts.items(), key=lambda kv: (-kv[1], _facet_order(kv[0])))[:limit]
        return {"hits": [{"value": value, "count": count} for value, count in hits]}

    def _lookup_vector(self, pid: Any, using: str) -> Any:
        for shard in self.shards.values():
            records = shard.retrieve([pid], with_payload=False, with_vector=[using] if using else True)
            if records:
                break
        else:
            raise tr.WrongInput(f"No point with id {tr.id_to_json(pid)} found")
        vector = records[0].vector
        if isinstance(vector, dict):
            if using not in vector:
                raise tr.WrongInput(f"Vector `{using}` not found in point {tr.id_to_json(pid)}")
            return vector[using]
        return vector

    def _run_query(self, body: dict[str, Any]) -> list[Any]:
        shards = self._read_shards(body.get("shard_key"))
        request = tr.query_request(body, tr.QueryContext(self._lookup_vector))
        if len(shards) == 1:
            return shards[0].query(request)
        query = body.get("query")
        mmr = isinstance(query, dict) and query.get("mmr") is not None
        # Qdrant runs MMR over the candidates of every shard together; one shard at a time cannot.
        if body.get("prefetch") or body.get("offset") or mmr or not isinstance(query, (list, dict)):
            raise tr.Unsupported("a query with prefetch, fusion, MMR, offset or ordering across several shard keys")
        limit = body.get("limit") if body.get("limit") is not None else tr.DEFAULT_LIMIT
        merged = sorted((p for shard in shards for p in shard.query(request)), key=lambda p: -p.score)
        return merged[:limit]

    def query(self, body: dict[str, Any]) -> dict[str, Any]:
        return {"points": [tr.scored_point_json(p, self.unnamed) for p in self._run_query(body)]}

    def query_batch(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        # Each search is the engine's; qdrant-edge-py 0.8 has no batch call.
        return [self.query(search) for search in body["searches"]]

    def query_groups(self, body: dict[str, Any], registry: "Registry") -> dict[str, Any]:
        """Emulated: qdrant-edge-py has no grouping API.

        The engine runs the query (scoring, fusion, filtering) over every candidate,
        returning only the `group_by` field; grouping is done here the way Qdrant
        defines it: a point joins one group per value of the field (strings or
        integers; points without it are skipped), groups are ordered by their best
        hit, each keeps its `group_size` best hits, and `limit` groups are returned.
        The hits' payloads and vectors are then fetched through the engine.
        """
        if len(self.shards) != 1:
            raise tr.Unsupported("query/groups on a collection with several shard keys")
        shard = next(iter(self.shards.values()))
        group_by = body["group_by"]
        group_size = body.get("group_size") if body.get("group_size") is not None else 3
        limit = body.get("limit") if body.get("limit") is not None else tr.DEFAULT_LIMIT
        ctx = tr.QueryContext(self._lookup_vector)
        candidates = max(shard.info().points_count, 1)
        request = tr.query_request(
            {**{k: v for k, v in body.items() if k not in ("group_by", "group_size", "limit", "with_lookup")}, "offset": None},
            ctx,
            limit=candidates,
            payload=[group_by],
            vector=False,
        )
        groups: dict[Any, list[Any]] = {}
        order: list[Any] = []
        for point in shard.query(request):
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
            fetched = shard.retrieve(
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
    """Collections and aliases, resolved as Qdrant's table of contents resolves them."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.collections: dict[str, Collection] = {}
        self.aliases: dict[str, str] = {}
        self._dirs = itertools.count()

    def resolve(self, name: str) -> str:
        real = self.aliases.get(name, name)
        if real not in self.collections:
            raise NotFound(f"Collection `{real}` doesn't exist!")
        return real

    def get(self, name: str) -> Collection:
        return self.collections[self.resolve(name)]

    def exists(self, name: str) -> bool:
        try:
            self.resolve(name)
        except NotFound:
            return False
        return True

    def create(self, name: str, body: dict[str, Any]) -> None:
        if name in self.collections:
            raise AlreadyExists(f"Collection `{name}` already exists!")
        if name in self.aliases:
            raise tr.WrongInput(f"Can't create collection with name {name}. Alias with the same name already exists")
        # Directory names are counters, so any collection name is safe on disk.
        self.collections[name] = Collection(name, self.root / f"c{next(self._dirs)}", body)

    def delete(self, name: str) -> bool:
        # Deleting by an alias deletes nothing (Qdrant looks the name up as a collection).
        collection = self.collections.pop(name, None)
        if collection is None:
            return False
        self.aliases = {alias: target for alias, target in self.aliases.items() if target != name}
        collection.close()
        shutil.rmtree(collection.path, ignore_errors=True)
        return True

    def close_all(self) -> None:
        for name in list(self.collections):
            self.delete(name)

    def change_aliases(self, actions: list[dict[str, Any]]) -> bool:
        """Applied one by one, as Qdrant does: a failing action leaves the ones before it applied."""
        for action in actions:
            if "create_alias" in action:
                create = action["create_alias"]
                if create["collection_name"] not in self.collections:
                    raise NotFound(f"Collection `{create['collection_name']}` doesn't exist!")
                if create["alias_name"] in self.collections:
                    raise AlreadyExists(f"Collection `{create['alias_name']}` already exists!")
                self.aliases[create["alias_name"]] = create["collection_name"]
            elif "delete_alias" in action:
                self.aliases.pop(action["delete_alias"]["alias_name"], None)
            else:
                rename = action["rename_alias"]
                target = self.aliases.get(rename["old_alias_name"])
                if target is None:
                    raise NotFound(f"Alias {rename['old_alias_name']} does not exists!")
                del self.aliases[rename["old_alias_name"]]
                self.aliases[rename["new_alias_name"]] = target
        return True

    def alias_list(self, collection: str | None = None) -> dict[str, Any]:
        pairs = sorted(self.aliases.items())
        if collection is not None:
            real = self.resolve(collection)
            pairs = [(alias, target) for alias, target in pairs if target == real]
        return {"aliases": [{"alias_name": alias, "collection_name": target} for alias, target in pairs]}

    def lookup_record(self, lookup: Any, group_id: Any) -> dict[str, Any] | None:
        if isinstance(lookup, str):
            lookup = {"collection": lookup}
        other = self.get(lookup["collection"])
        try:
            pid = tr.point_id(group_id)
        except tr.WrongInput:
            return None
        records = next(iter(other.shards.values())).retrieve(
            [pid],
            with_payload=tr.with_payload(lookup.get("with_payload"), True),
            with_vector=tr.with_vector(lookup.get("with_vectors")),
        )
        return tr.record_json(records[0], other.unnamed) if records else None
