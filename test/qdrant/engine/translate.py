"""Translation between Qdrant's REST JSON and qdrant-edge-py objects.

Pure functions: REST dicts (already validated) in, `qdrant_edge` objects out, and the
engine's results back to Qdrant's REST JSON. Anything the engine cannot express raises
Unsupported, which the server answers with a 400 naming the feature; nothing is ignored.
"""

from __future__ import annotations

import uuid
from typing import Any, Callable

import qdrant_edge as qe

# REST `{"fusion": "rrf"}` carries no k; Qdrant applies DEFAULT_RRF_K = 2 (segment's
# reciprocal_rank_fusion). The edge binding wants k spelled out, so it is spelled here.
DEFAULT_RRF_K = 2
DEFAULT_LIMIT = 10

DISTANCES = {
    "Cosine": qe.Distance.Cosine,
    "Euclid": qe.Distance.Euclid,
    "Dot": qe.Distance.Dot,
    "Manhattan": qe.Distance.Manhattan,
}

DATATYPES = {
    "float32": qe.VectorStorageDatatype.Float32,
    "float16": qe.VectorStorageDatatype.Float16,
    "uint8": qe.VectorStorageDatatype.Uint8,
}

PAYLOAD_SCHEMA_TYPES = {
    "keyword": qe.PayloadSchemaType.Keyword,
    "integer": qe.PayloadSchemaType.Integer,
    "float": qe.PayloadSchemaType.Float,
    "geo": qe.PayloadSchemaType.Geo,
    "text": qe.PayloadSchemaType.Text,
    "bool": qe.PayloadSchemaType.Bool,
    "datetime": qe.PayloadSchemaType.Datetime,
    "uuid": qe.PayloadSchemaType.Uuid,
}


class Unsupported(Exception):
    """A valid Qdrant request that this test engine cannot serve."""


class WrongInput(Exception):
    """A request Qdrant accepts as JSON but refuses as input (400 "Wrong input: ...")."""


# --------------------------------------------------------------------------- ids


def point_id(value: Any) -> int | uuid.UUID:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise WrongInput(f"value {value!r} is not a valid point ID")
    if isinstance(value, int):
        if value < 0:
            raise WrongInput(f"value {value} is not a valid point ID, valid values are either an unsigned integer or a UUID")
        return value
    try:
        return uuid.UUID(value)
    except ValueError as exc:
        raise WrongInput(
            f"value {value} is not a valid point ID, valid values are either an unsigned integer or a UUID"
        ) from exc


def id_to_json(value: Any) -> int | str:
    return value if isinstance(value, int) else str(value)


# ----------------------------------------------------------------------- config


def edge_config(body: dict[str, Any]) -> tuple[qe.EdgeConfig, dict[str, Any], dict[str, Any] | None]:
    """CreateCollection -> EdgeConfig, plus the vectors/sparse config echoed by GET."""
    vectors = body.get("vectors")
    sparse = body.get("sparse_vectors") or {}
    dense_echo: dict[str, Any] = {}
    if vectors is None:
        edge_vectors: Any = {}
        echo_vectors: Any = {}
    elif "size" in vectors and "distance" in vectors and isinstance(vectors.get("size"), int):
        # A single unnamed vector: the engine's default vector name is "".
        edge_vectors = _vector_params(vectors)
        echo_vectors = _vector_echo(vectors)
    else:
        edge_vectors = {name: _vector_params(p) for name, p in vectors.items()}
        echo_vectors = {name: _vector_echo(p) for name, p in vectors.items()}
    dense_echo = echo_vectors
    edge_sparse = {}
    sparse_echo = {}
    for name, params in sparse.items():
        params = params or {}
        modifier = params.get("modifier")
        index = params.get("index") or {}
        edge_sparse[name] = qe.EdgeSparseVectorParams(
            full_scan_threshold=index.get("full_scan_threshold"),
            on_disk=index.get("on_disk"),
            modifier=qe.Modifier.Idf if modifier == "idf" else None,
            datatype=DATATYPES.get(index.get("datatype")) if index.get("datatype") else None,
        )
        echo: dict[str, Any] = {}
        if index:
            echo["index"] = index
        if modifier is not None:
            echo["modifier"] = modifier
        sparse_echo[name] = echo
    config = qe.EdgeConfig(
        vectors=edge_vectors if (edge_vectors or not edge_sparse) else None,
        sparse_vectors=edge_sparse or None,
        on_disk_payload=body.get("on_disk_payload"),
    )
    return config, dense_echo, (sparse_echo or None)


def _vector_params(params: dict[str, Any]) -> qe.EdgeVectorParams:
    multivector = params.get("multivector_config")
    return qe.EdgeVectorParams(
        size=params["size"],
        distance=DISTANCES[params["distance"]],
        on_disk=params.get("on_disk"),
        multivector_config=(
            qe.MultiVectorConfig(qe.MultiVectorComparator.MaxSim) if multivector else None
        ),
        datatype=DATATYPES.get(params["datatype"]) if params.get("datatype") else None,
    )


def _vector_echo(params: dict[str, Any]) -> dict[str, Any]:
    echo = {"size": params["size"], "distance": params["distance"]}
    for key in ("hnsw_config", "quantization_config", "on_disk", "datatype", "multivector_config"):
        if params.get(key) is not None:
            echo[key] = params[key]
    return echo


def field_index_schema(field_schema: Any) -> Any:
    """CreateFieldIndex.field_schema -> PayloadSchemaType or *IndexParams."""
    if field_schema is None:
        raise WrongInput("field_schema is required to create a payload index")
    if isinstance(field_schema, str):
        return PAYLOAD_SCHEMA_TYPES[field_schema]
    kind = field_schema["type"]
    rest = {k: v for k, v in field_schema.items() if k != "type"}
    builders: dict[str, Callable[..., Any]] = {
        "keyword": qe.KeywordIndexParams,
        "integer": qe.IntegerIndexParams,
        "float": qe.FloatIndexParams,
        "geo": qe.GeoIndexParams,
        "bool": qe.BoolIndexParams,
        "datetime": qe.DatetimeIndexParams,
        "uuid": qe.UuidIndexParams,
    }
    if kind not in builders:
        # Text index parameters (tokenizer, stemmer, ...) have their own enums; the
        # plain type covers what the store's tests need.
        if not rest:
            return PAYLOAD_SCHEMA_TYPES[kind]
        raise Unsupported(f"payload index parameters for type `{kind}`")
    try:
        return builders[kind](**rest)
    except TypeError as exc:
        raise Unsupported(f"payload index parameter for `{kind}`: {exc}") from exc


# ------------------------------------------------------------------------ points


def vector_struct(value: Any) -> Any:
    """A point's `vector` (VectorStruct) -> the engine's vector value."""
    if isinstance(value, list):
        return value  # unnamed dense or multi-dense vector
    if isinstance(value, dict):
        return {name: named_vector(v) for name, v in value.items()}
    raise Unsupported("this vector form (inference objects need an embedding model)")


def named_vector(value: Any) -> Any:
    if isinstance(value, list):
        return value
    if isinstance(value, dict) and "indices" in value and "values" in value:
        _check_sparse(value)
        return qe.SparseVector(indices=value["indices"], values=value["values"])
    raise Unsupported("this vector form (inference objects need an embedding model)")


def _check_sparse(value: dict[str, Any]) -> None:
    if len(value["indices"]) != len(value["values"]):
        raise WrongInput(
            "Validation error in JSON body: [indices: must be the same length as values]"
        )


def points_from_insert(body: dict[str, Any]) -> list[qe.Point]:
    if "points" in body:
        return [
            qe.Point(point_id(p["id"]), vector_struct(p["vector"]), p.get("payload"))
            for p in body["points"]
        ]
    batch = body["batch"]
    ids = batch["ids"]
    vectors = batch["vectors"]
    payloads = batch.get("payloads") or [None] * len(ids)
    points = []
    for i, raw_id in enumerate(ids):
        if isinstance(vectors, list):
            vector: Any = vectors[i]
        else:
            vector = {name: named_vector(vs[i]) for name, vs in vectors.items()}
        points.append(qe.Point(point_id(raw_id), vector, payloads[i] if i < len(payloads) else None))
    return points


UPDATE_MODES = {
    "upsert": "Upsert",
    "insert_only": "InsertOnly",
    "update_only": "UpdateOnly",
}


def update_mode(value: str | None) -> Any:
    if value is None:
        return None
    return getattr(qe.UpdateMode, UPDATE_MODES[value])


# ------------------------------------------------------------------------ filters


def to_filter(f: dict[str, Any] | None) -> qe.Filter | None:
    if f is None:
        return None
    min_should = f.get("min_should")
    return qe.Filter(
        must=_conditions(f.get("must")),
        should=_conditions(f.get("should")),
        must_not=_conditions(f.get("must_not")),
        min_should=(
            qe.MinShould(conditions=_conditions(min_should["conditions"]) or [], min_count=min_should["min_count"])
            if min_should
            else None
        ),
    )


def _conditions(value: Any) -> list[Any] | None:
    if value is None:
        return None
    if isinstance(value, dict):
        return [_condition(value)]
    return [_condition(c) for c in value]


def _condition(c: dict[str, Any]) -> Any:
    if "key" in c:
        return _field_condition(c)
    if "is_empty" in c:
        return qe.IsEmptyCondition(key=c["is_empty"]["key"])
    if "is_null" in c:
        return qe.IsNullCondition(key=c["is_null"]["key"])
    if "has_id" in c:
        return qe.HasIdCondition(point_ids={point_id(i) for i in c["has_id"]})
    if "has_vector" in c:
        return qe.HasVectorCondition(vector=c["has_vector"])
    if "nested" in c:
        return qe.NestedCondition(key=c["nested"]["key"], filter=to_filter(c["nested"]["filter"]))
    if "slice" in c:
        raise Unsupported("slice condition")
    return to_filter(c)


def _field_condition(c: dict[str, Any]) -> qe.FieldCondition:
    kwargs: dict[str, Any] = {"key": c["key"]}
    if c.get("match") is not None:
        kwargs["match"] = _match(c["match"])
    if c.get("range") is not None:
        kwargs["range"] = _range(c["range"])
    if c.get("geo_bounding_box") is not None:
        box = c["geo_bounding_box"]
        kwargs["geo_bounding_box"] = qe.GeoBoundingBox(
            top_left=_geo_point(box["top_left"]), bottom_right=_geo_point(box["bottom_right"])
        )
    if c.get("geo_radius") is not None:
        radius = c["geo_radius"]
        kwargs["geo_radius"] = qe.GeoRadius(center=_geo_point(radius["center"]), radius=radius["radius"])
    if c.get("geo_polygon") is not None:
        polygon = c["geo_polygon"]
        kwargs["geo_polygon"] = qe.GeoPolygon(
            exterior=[_geo_point(p) for p in polygon["exterior"]["points"]],
            interiors=[[_geo_point(p) for p in ring["points"]] for ring in polygon.get("interiors") or []]
            or None,
        )
    if c.get("values_count") is not None:
        vc = c["values_count"]
        kwargs["values_count"] = qe.ValuesCount(lt=vc.get("lt"), gt=vc.get("gt"), gte=vc.get("gte"), lte=vc.get("lte"))
    if c.get("is_empty") is not None:
        kwargs["is_empty"] = c["is_empty"]
    if c.get("is_null") is not None:
        kwargs["is_null"] = c["is_null"]
    return qe.FieldCondition(**kwargs)


def _geo_point(p: dict[str, Any]) -> qe.GeoPoint:
    return qe.GeoPoint(lon=p["lon"], lat=p["lat"])


def _match(m: dict[str, Any]) -> Any:
    if "value" in m:
        return qe.MatchValue(value=m["value"])
    if "any" in m:
        return qe.MatchAny(any=m["any"])
    if "except" in m:
        return qe.MatchExcept(except_=m["except"])
    if "text" in m:
        return qe.MatchText(text=m["text"])
    if "text_any" in m:
        return qe.MatchTextAny(text_any=m["text_any"])
    if "phrase" in m:
        return qe.MatchPhrase(phrase=m["phrase"])
    if "prefix" in m:
        return qe.MatchPrefix(prefix=m["prefix"])
    raise Unsupported(f"match condition {sorted(m)}")


def _range(r: dict[str, Any]) -> Any:
    bounds = {k: r.get(k) for k in ("gt", "gte", "lt", "lte")}
    if any(isinstance(v, str) for v in bounds.values()):
        return qe.RangeDateTime(**bounds)
    return qe.RangeFloat(**bounds)


# ------------------------------------------------------------------------ selectors


def with_payload(value: Any, default: bool) -> Any:
    if value is None:
        return default
    if isinstance(value, (bool, list)):
        return value
    if "include" in value:
        keys = value["include"]
        return qe.PayloadSelector.Include(keys if isinstance(keys, list) else [keys])
    keys = value["exclude"]
    return qe.PayloadSelector.Exclude(keys if isinstance(keys, list) else [keys])


def with_vector(value: Any, default: bool = False) -> Any:
    return default if value is None else value


def search_params(p: dict[str, Any] | None) -> qe.SearchParams | None:
    if p is None:
        return None
    quantization = p.get("quantization")
    acorn = p.get("acorn")
    idf = p.get("idf")
    return qe.SearchParams(
        idf=None if idf is None or idf == "global" else qe.IdfParams(corpus=to_filter(idf["corpus"])),
        hnsw_ef=p.get("hnsw_ef"),
        exact=bool(p.get("exact") or False),
        quantization=(
            qe.QuantizationSearchParams(
                ignore=bool(quantization.get("ignore") or False),
                rescore=quantization.get("rescore"),
                oversampling=quantization.get("oversampling"),
            )
            if quantization
            else None
        ),
        indexed_only=bool(p.get("indexed_only") or False),
        acorn=(
            qe.AcornSearchParams(enable=bool(acorn.get("enable") or False), max_selectivity=acorn.get("max_selectivity"))
            if acorn
            else None
        ),
    )


# ------------------------------------------------------------------------ queries

# Looks a point's vector up by id (query by point id); given (id, vector name).
VectorLookup = Callable[[Any, str], Any]


class QueryContext:
    """What a query translation needs from its collection: id lookups, excluded ids."""

    def __init__(self, lookup: VectorLookup) -> None:
        self.lookup = lookup
        self.excluded_ids: set[Any] = set()
        # The request's limit (MMR's default candidates_limit).
        self.limit = DEFAULT_LIMIT


def to_scoring_query(q: Any, using: str | None, ctx: QueryContext) -> Any:
    if q is None:
        return None
    if isinstance(q, dict):
        if "nearest" in q:
            mmr = q.get("mmr")
            if mmr is not None:
                # As Qdrant's REST layer: lambda = 1 - diversity (default 0.5), candidates_limit defaults to limit.
                diversity = mmr.get("diversity")
                limit = mmr.get("candidates_limit")
                return qe.Mmr(
                    _vector_input(q["nearest"], using, ctx),
                    0.5 if diversity is None else 1.0 - diversity,
                    ctx.limit if limit is None else limit,
                    using=using,
                )
            return qe.Query.Nearest(_vector_input(q["nearest"], using, ctx), using=using)
        if "fusion" in q:
            return qe.Fusion.Rrf(k=DEFAULT_RRF_K) if q["fusion"] == "rrf" else qe.Fusion.Dbsf()
        if "rrf" in q:
            rrf = q["rrf"] or {}
            k = rrf.get("k")
            return qe.Fusion.Rrf(k=DEFAULT_RRF_K if k is None else k, weights=rrf.get("weights"))
        if "order_by" in q:
            return order_by(q["order_by"])
        if "sample" in q:
            return qe.Sample.Random
        if "indices" in q and "values" in q:
            return qe.Query.Nearest(_vector_input(q, using, ctx), using=using)
        for name in ("recommend", "discover", "context", "formula", "relevance_feedback"):
            if name in q:
                raise Unsupported(f"`{name}` queries")
        raise Unsupported("inference queries (documents, images, objects need an embedding model)")
    return qe.Query.Nearest(_vector_input(q, using, ctx), using=using)


def _vector_input(v: Any, using: str | None, ctx: QueryContext) -> Any:
    if isinstance(v, list):
        return v
    if isinstance(v, dict) and "indices" in v and "values" in v:
        _check_sparse(v)
        return qe.SparseVector(indices=v["indices"], values=v["values"])
    if isinstance(v, (int, str)) and not isinstance(v, bool):
        # Query by point id: Qdrant resolves the stored vector and leaves that point out.
        pid = point_id(v)
        ctx.excluded_ids.add(pid)
        return ctx.lookup(pid, using or "")
    raise Unsupported("inference queries (documents, images, objects need an embedding model)")


def order_by(value: Any) -> qe.OrderBy:
    if isinstance(value, str):
        return qe.OrderBy(key=value)
    direction = value.get("direction")
    return qe.OrderBy(
        key=value["key"],
        direction=None if direction is None else (qe.Direction.Asc if direction == "asc" else qe.Direction.Desc),
        start_from=value.get("start_from"),
    )


def _reject_lookup_from(req: dict[str, Any]) -> None:
    if req.get("lookup_from") is not None:
        raise Unsupported("`lookup_from`")


def prefetch(p: dict[str, Any], ctx: QueryContext) -> qe.Prefetch:
    _reject_lookup_from(p)
    nested = p.get("prefetch")
    return qe.Prefetch(
        limit=p.get("limit") if p.get("limit") is not None else DEFAULT_LIMIT,
        query=to_scoring_query(p.get("query"), p.get("using"), ctx),
        prefetches=_prefetches(nested, ctx),
        params=search_params(p.get("params")),
        filter=to_filter(p.get("filter")),
        score_threshold=p.get("score_threshold"),
    )


def _prefetches(value: Any, ctx: QueryContext) -> list[qe.Prefetch]:
    if value is None:
        return []
    if isinstance(value, dict):
        value = [value]
    return [prefetch(p, ctx) for p in value]


def _exclude_ids(f: qe.Filter | None, raw: dict[str, Any] | None, ids: set[Any]) -> qe.Filter | None:
    if not ids:
        return f
    exclusion = qe.HasIdCondition(point_ids=set(ids))
    if raw is None:
        return qe.Filter(must_not=[exclusion])
    return qe.Filter(must=[f], must_not=[exclusion])


def query_request(
    req: dict[str, Any],
    ctx: QueryContext,
    *,
    limit: int | None = None,
    payload: Any = None,
    vector: Any = None,
) -> qe.QueryRequest:
    """QueryRequest JSON -> engine QueryRequest (limit/payload/vector overridable for groups)."""
    _reject_lookup_from(req)
    # `shard_key` routes the request to shards (engine_collections.py); the query itself does not carry it.
    ctx.limit = limit if limit is not None else (req.get("limit") if req.get("limit") is not None else DEFAULT_LIMIT)
    query = to_scoring_query(req.get("query"), req.get("using"), ctx)
    prefetches = _prefetches(req.get("prefetch"), ctx)
    raw_filter = req.get("filter")
    flt = _exclude_ids(to_filter(raw_filter), raw_filter, ctx.excluded_ids)
    return qe.QueryRequest(
        limit=limit if limit is not None else (req.get("limit") if req.get("limit") is not None else DEFAULT_LIMIT),
        offset=req.get("offset") or 0,
        query=query,
        prefetches=prefetches,
        with_vector=vector if vector is not None else with_vector(req.get("with_vector")),
        with_payload=payload if payload is not None else with_payload(req.get("with_payload"), False),
        filter=flt,
        score_threshold=req.get("score_threshold"),
        params=search_params(req.get("params")),
    )


# ------------------------------------------------------------------------ results


def vector_to_json(vector: Any, unnamed: bool) -> Any:
    if vector is None:
        return None
    if isinstance(vector, dict):
        out = {name: _named_vector_json(v) for name, v in vector.items()}
        if unnamed and set(out) == {""}:
            return out[""]
        return out
    return _named_vector_json(vector)


def _named_vector_json(v: Any) -> Any:
    if isinstance(v, qe.SparseVector):
        return {"indices": list(v.indices), "values": [float(x) for x in v.values]}
    return v


def scored_point_json(p: Any, unnamed: bool) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": id_to_json(p.id),
        "version": p.version,
        "score": p.score,
        "payload": p.payload,
        "vector": vector_to_json(p.vector, unnamed),
    }
    if p.order_value is not None:
        out["order_value"] = p.order_value
    return out


def record_json(r: Any, unnamed: bool) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": id_to_json(r.id),
        "payload": r.payload,
        "vector": vector_to_json(r.vector, unnamed),
    }
    if r.order_value is not None:
        out["order_value"] = r.order_value
    return out
