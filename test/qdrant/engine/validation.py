"""Request-body validation against Qdrant's own models.

Two checks, mirroring how the real server reports problems:

1. Shape. The body must parse as the `qdrant_client.http.models` pydantic model
   generated from Qdrant's OpenAPI spec (these forbid unknown fields), and as that
   model's JSON schema, made as strict as the spec where the models are laxer (_NOT_NULL,
   _UNIQUE_ITEMS below). Pydantic alone coerces (e.g. the string "10" into an integer
   limit), the strict schema pass catches what serde would refuse. A failure is Qdrant's
   deserialisation error: 400 with "Format error in JSON body: ...".
2. Constraints. Qdrant's value constraints (`limit` at least 1, ...), which the
   generated models do not carry, are written out below in QDRANT_LIMITS and checked
   in a second schema pass. A failure is Qdrant's validation error: 422 with
   "Validation error in JSON body: [...]".
"""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path
from typing import Any

import pydantic
from typing_extensions import TypeAliasType


def _load_qdrant_models(module_name: str, *, named_aliases: bool = False) -> Any:
    """qdrant_client.http.models.models, without importing the whole client.

    The generated models module needs only pydantic; importing it through the
    `qdrant_client` package would first load the gRPC/HTTP clients (seconds of startup).
    """
    package = importlib.util.find_spec("qdrant_client")
    if package is None or not package.submodule_search_locations:
        raise ImportError("qdrant-client is not installed (run: bash scripts/setup-qdrant-engine.sh)")
    path = Path(list(package.submodule_search_locations)[0]) / "http" / "models" / "models.py"
    spec = importlib.util.spec_from_file_location(module_name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    # Forward references resolve lazily, on a model's first use, from this module.
    spec.loader.exec_module(module)
    if named_aliases:
        _name_union_aliases(module, path)
    return module


def _name_union_aliases(module: Any, path: Path) -> None:
    """Makes the module's `Name = Union[...]` aliases named types (TypeAliasType).

    As plain Unions they are inlined wherever they are used (nested ones flattened), so the
    JSON schema would lose the spec's names (ExtendedPointId, ShardKey, ...) that some limits
    belong to. Named, each becomes one schema definition, as in the spec. Re-evaluated in
    source order, each sees the named versions of the aliases before it; the models see them
    too, since they resolve their quoted references only on first use.
    """
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            continue
        value = node.value
        if isinstance(value, ast.Subscript) and isinstance(value.value, ast.Name) and value.value.id == "Union":
            name = node.targets[0].id
            union = eval(compile(ast.Expression(value), str(path), "eval"), vars(module))  # noqa: S307
            setattr(module, name, TypeAliasType(name, union))


# Pydantic validates with the models as generated; the schema passes use a copy whose aliases are named.
qm = _load_qdrant_models("qdrant_rest_models")
_schema_models = _load_qdrant_models("qdrant_rest_models_named", named_aliases=True)

# Qdrant's value constraints on every schema the request bodies below can reach, as Qdrant 1.19's OpenAPI
# spec states them (docs/redoc/master/openapi.json of qdrant/qdrant at 74f3e85, components.schemas). That spec
# is written by schemars from Qdrant's REST types: a `#[validate(range(...))]` or `#[validate(length(...))]`
# becomes minimum/maximum/minLength, an unsigned integer type `minimum: 0`. qdrant-client's models, generated
# from the same spec, leave them out. Keys: schema, then property ("name[]": the array's items; "": the schema
# itself, an alias whose one numeric branch is constrained, such as a point id or a shard key).
QDRANT_LIMITS: dict[str, dict[str, dict[str, float]]] = {
    "AcornSearchParams": {"max_selectivity": {"maximum": 1, "minimum": 0}},
    "Bm25Config": {"min_token_len": {"minimum": 0}, "max_token_len": {"minimum": 0}},
    "CollectionParamsDiff": {
        "replication_factor": {"minimum": 1},
        "write_consistency_factor": {"minimum": 1},
        "read_fan_out_factor": {"minimum": 0},
        "read_fan_out_delay_ms": {"minimum": 0},
    },
    "CreateCollection": {
        "shard_number": {"minimum": 1},
        "replication_factor": {"minimum": 1},
        "write_consistency_factor": {"minimum": 1},
    },
    "CreateShardingKey": {
        "shards_number": {"minimum": 1},
        "replication_factor": {"minimum": 1},
        "placement[]": {"minimum": 0},
    },
    "Document": {"model": {"minLength": 1}},
    "ExtendedPointId": {"": {"minimum": 0}},
    "FacetRequest": {"limit": {"minimum": 1}},
    "HnswConfigDiff": {
        "m": {"minimum": 0},
        "ef_construct": {"minimum": 4},
        "full_scan_threshold": {"minimum": 10},
        "max_indexing_threads": {"minimum": 0},
        "payload_m": {"minimum": 0},
    },
    "Image": {"model": {"minLength": 1}},
    "InferenceObject": {"model": {"minLength": 1}},
    "MaxOptimizationThreads": {"": {"minimum": 0}},
    "MinShould": {"min_count": {"minimum": 1}},
    "Mmr": {"diversity": {"maximum": 1, "minimum": 0}, "candidates_limit": {"maximum": 16384, "minimum": 0}},
    "NaiveFeedbackStrategyParams": {"b": {"minimum": 0}},
    "OptimizersConfigDiff": {
        "deleted_threshold": {"maximum": 1, "minimum": 0},
        "vacuum_min_vector_number": {"minimum": 100},
        "default_segment_number": {"minimum": 0},
        "max_segment_size": {"minimum": 1},
        "memmap_threshold": {"minimum": 0},
        "indexing_threshold": {"minimum": 0},
        "flush_interval_sec": {"minimum": 0},
    },
    "Prefetch": {"limit": {"minimum": 1}},
    "QuantizationSearchParams": {"oversampling": {"minimum": 1}},
    "QueryGroupsRequest": {"group_by": {"minLength": 1}, "group_size": {"minimum": 1}, "limit": {"minimum": 1}},
    "QueryRequest": {"limit": {"minimum": 1}, "offset": {"minimum": 0}},
    "Rrf": {"k": {"minimum": 1}},
    "ScalarQuantizationConfig": {"quantile": {"maximum": 1, "minimum": 0.5}},
    "ScrollRequest": {"limit": {"minimum": 1}},
    "SearchParams": {"hnsw_ef": {"minimum": 1}},
    "ShardKey": {"": {"minimum": 0}},
    "Slice": {"total": {"minimum": 1}, "index": {"minimum": 0}},
    "SparseIndexParams": {"full_scan_threshold": {"minimum": 0}},
    "SparseVector": {"indices[]": {"minimum": 0}},
    "StrictModeConfig": {
        "max_query_limit": {"minimum": 1},
        "max_timeout": {"minimum": 1},
        "search_max_hnsw_ef": {"minimum": 0},
        "upsert_max_batchsize": {"minimum": 0},
        "search_max_batchsize": {"minimum": 0},
        "max_collection_vector_size_bytes": {"minimum": 0},
        "read_rate_limit": {"minimum": 1},
        "write_rate_limit": {"minimum": 1},
        "max_collection_payload_size_bytes": {"minimum": 0},
        "max_points_count": {"minimum": 1},
        "filter_max_conditions": {"minimum": 0},
        "condition_max_size": {"minimum": 0},
        "max_payload_index_count": {"minimum": 0},
        "max_resident_memory_percent": {"maximum": 100, "minimum": 1},
    },
    "StrictModeMultivector": {"max_vectors": {"minimum": 1}},
    "StrictModeSparse": {"max_length": {"minimum": 1}},
    "TextIndexParams": {"min_token_len": {"minimum": 0}, "max_token_len": {"minimum": 0}},
    "ValuesCount": {"lt": {"minimum": 0}, "gt": {"minimum": 0}, "gte": {"minimum": 0}, "lte": {"minimum": 0}},
    "VectorParams": {"size": {"minimum": 1}},
    "WalConfigDiff": {
        "wal_capacity_mb": {"minimum": 1},
        "wal_segments_ahead": {"minimum": 0},
        "wal_retain_closed": {"minimum": 0},
    },
}

# Where the spec's shapes are stricter than the generated models (breaking them is a 400): fields that
# serde fills in when absent but refuses as null (`#[serde(default)]` on a field that is not an Option),
# and sets (a HashSet in Qdrant's types, `uniqueItems` in the spec; "" is the alias itself).
_NOT_NULL: dict[str, tuple[str, ...]] = {
    "AcornSearchParams": ("enable",),
    "Bm25Config": ("avg_len", "b", "k", "tokenizer"),
    "CountRequest": ("exact",),
    "CreateCollection": ("vectors",),
    "FormulaQuery": ("defaults",),
    "PointRequest": ("with_vector",),
    "QuantizationSearchParams": ("ignore",),
    "ScrollRequest": ("with_vector",),
    "SearchParams": ("exact", "indexed_only"),
    "TextIndexParams": ("tokenizer",),
}
_UNIQUE_ITEMS: dict[str, tuple[str, ...]] = {
    "AnyVariants": ("",),
    "HasIdCondition": ("has_id",),
    "StopwordsSet": ("custom", "languages"),
}

# Schemas that refuse unknown fields in the spec. The models forbid them everywhere (the pydantic pass
# enforces that); for the schema passes only these are closed, as in the spec, so unions match as Qdrant's do.
_CLOSED_SCHEMAS = frozenset({"Filter", "PayloadSelectorInclude", "PayloadSelectorExclude"})

# The request-body model of each endpoint the test engine answers.
BODY_MODELS: dict[str, Any] = {
    "CreateCollection": qm.CreateCollection,
    "CreateFieldIndex": qm.CreateFieldIndex,
    "PointInsertOperations": qm.PointInsertOperations,
    "PointsSelector": qm.PointsSelector,
    "PointRequest": qm.PointRequest,
    "ScrollRequest": qm.ScrollRequest,
    "CountRequest": qm.CountRequest,
    "QueryRequest": qm.QueryRequest,
    "QueryRequestBatch": qm.QueryRequestBatch,
    "QueryGroupsRequest": qm.QueryGroupsRequest,
    "UpdateCollection": qm.UpdateCollection,
    "ChangeAliasesOperation": qm.ChangeAliasesOperation,
    "CreateShardingKey": qm.CreateShardingKey,
    "DropShardingKey": qm.DropShardingKey,
    "FacetRequest": qm.FacetRequest,
}

_WRITE_ORDERING = ("weak", "medium", "strong")
_READ_CONSISTENCY = ("majority", "quorum", "all")


def _check_query_param(name: str, value: str) -> tuple[int, str] | None:
    """Qdrant's reading of the query parameters the store sends: (status, error), or None when fine.

    serde refusing a value is 400 "Deserialize error"; a value it reads but a validator refuses (a
    consistency factor or a timeout of 0) is 422 "Validation error", as actix_web_validator answers.
    """

    def deserialize(message: str) -> tuple[int, str]:
        return 400, "Deserialize error in query parameters: " + message

    def validation(message: str) -> tuple[int, str]:
        return 422, "Validation error in query parameters: [" + message + "]"

    if name == "wait":
        return None if value in ("true", "false") else deserialize("wait: provided string was not `true` or `false`")
    if name == "ordering":
        if value in _WRITE_ORDERING:
            return None
        return deserialize(f"ordering: unknown variant `{value}`, expected one of `weak`, `medium`, `strong`")
    if name == "consistency":
        # ReadConsistency: a number of replicas (validated >= 1) or majority | quorum | all.
        if value in _READ_CONSISTENCY:
            return None
        if value.isdigit():
            return None if int(value) >= 1 else validation("consistency.factor: range: value 0, min 1")
        return deserialize("consistency: data did not match any variant of untagged enum ReadConsistency")
    if name == "timeout":
        if not value.isdigit():
            return deserialize("timeout: invalid digit found in string")
        return None if int(value) >= 1 else validation("timeout: range: value 0, min 1")
    return None


class BodyError(Exception):
    """A request body Qdrant would refuse; carries the HTTP status and message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


_REF = "#/components/schemas/{model}"


def _schema_document(root: str, *, constraints: bool) -> dict[str, Any]:
    """The JSON schema of body model `root` with the facts above applied, definitions under components.schemas.

    Without constraints, of QDRANT_LIMITS only the `minimum: 0` entries apply: a negative number for an
    unsigned field is a serde error (400), not a validator's (422).
    """
    schema = pydantic.TypeAdapter(getattr(_schema_models, root)).json_schema(ref_template=_REF)
    schemas: dict[str, Any] = schema.pop("$defs", {})
    if "$ref" not in schema:
        schemas[root] = schema
    for name, definition in schemas.items():
        if definition.get("additionalProperties") is False and name not in _CLOSED_SCHEMAS:
            del definition["additionalProperties"]
    for name, fields in _NOT_NULL.items():
        for field in fields if name in schemas else ():
            _drop_null(_subschema(schemas, name, field), f"{name}.{field}")
    for name, fields in _UNIQUE_ITEMS.items():
        for field in fields if name in schemas else ():
            _constrain(_subschema(schemas, name, field), {"uniqueItems": True}, f"{name}.{field}")
    for name, properties in QDRANT_LIMITS.items():
        for where, limits in properties.items() if name in schemas else ():
            kept = limits if constraints else {k: v for k, v in limits.items() if k == "minimum" and v == 0}
            if kept:
                _constrain(_subschema(schemas, name, where), kept, f"{name}.{where}")
    _fold_unions(schemas)
    return {"components": {"schemas": schemas}, "$ref": _REF.format(model=root)}


# The JSON types a keyword constrains.
_KEYWORD_TYPES = {
    "minimum": ("integer", "number"),
    "maximum": ("integer", "number"),
    "minLength": ("string",),
    "uniqueItems": ("array",),
}
# Keywords that only annotate.
_ANNOTATIONS = frozenset({"title", "description", "default"})


def _subschema(schemas: dict[str, Any], name: str, where: str) -> dict[str, Any]:
    """What an entry above is about: schema `name` ("") or its property `where` ("prop[]": its items)."""
    node = schemas[name]
    if where:
        node = node.get("properties", {}).get(where.removesuffix("[]"))
        if node is None:
            raise KeyError(f"{name} has no property {where!r}")
    if where.endswith("[]"):
        arrays = [b for b in node.get("anyOf", [node]) if b.get("type") == "array" and "items" in b]
        if len(arrays) != 1:
            raise KeyError(f"{name}.{where} is not one array")
        node = arrays[0]["items"]
    return node


def _constrain(node: dict[str, Any], keywords: dict[str, Any], label: str) -> None:
    """Puts each keyword on the branches of its JSON type (a union's), as the spec has them.

    Fails loudly when none fits, e.g. a $ref, beside which draft 7 ignores keywords: a limit
    the models no longer fit would otherwise never be checked.
    """
    for keyword, value in keywords.items():
        branches = [b for b in node.get("anyOf", [node]) if b.get("type") in _KEYWORD_TYPES[keyword]]
        if not branches:
            raise KeyError(f"{label}: no {'/'.join(_KEYWORD_TYPES[keyword])} to carry {keyword}")
        for branch in branches:
            branch[keyword] = value


def _drop_null(node: dict[str, Any], label: str) -> None:
    branches = [b for b in node.get("anyOf", []) if b != {"type": "null"}]
    if len(branches) != len(node.get("anyOf", [])) - 1:
        raise KeyError(f"{label} is not optional in the models")
    node["anyOf"] = branches


def _fold_unions(node: Any) -> None:
    """`anyOf: [X, null]` as `type: [X's type, "null"]`, and a one-branch anyOf as its branch, as the spec
    writes them: errors then read "is not of type 'integer', 'null'", not "not valid under any of the
    given schemas"."""
    if isinstance(node, list):
        for item in node:
            _fold_unions(item)
        return
    if not isinstance(node, dict):
        return
    for value in node.values():
        _fold_unions(value)
    branches = node.get("anyOf")
    if branches is None or not set(node) - {"anyOf"} <= _ANNOTATIONS:
        return
    if len(branches) == 2 and {"type": "null"} in branches:
        (other,) = [b for b in branches if b != {"type": "null"}]
        if isinstance(other.get("type"), str) and not {"$ref", "anyOf", "const"} & set(other):
            folded = {**other, "type": [other["type"], "null"]}
            if "enum" in folded:
                folded["enum"] = [*folded["enum"], None]
            del node["anyOf"]
            node.update(folded)
    elif len(branches) == 1:
        del node["anyOf"]
        node.update(branches[0])


class Validator:
    def __init__(self) -> None:
        self._adapters: dict[str, pydantic.TypeAdapter[Any]] = {}
        self._validators: dict[tuple[str, bool], Any] = {}

    def _schema_errors(self, schema_name: str, body: Any, *, constraints: bool) -> list[str]:
        import jsonschema
        import jsonschema.exceptions

        key = (schema_name, constraints)
        validator = self._validators.get(key)
        if validator is None:
            doc = _schema_document(schema_name, constraints=constraints)
            validator = self._validators[key] = jsonschema.Draft7Validator(doc)
        errors = list(validator.iter_errors(body))
        if not errors:
            return []
        # For a union (anyOf) this descends to the branch that came closest to fitting.
        err = jsonschema.exceptions.best_match(errors)
        where = ".".join(str(p) for p in err.absolute_path) or "body"
        messages = [f"{where}: {_short(err.message)}"]
        if len(errors) > 1:
            messages.append(f"and {len(errors) - 1} more")
        return messages

    def validate_query(self, method: str, route: str, query: dict[str, list[str]]) -> None:
        """Query parameters (`wait`, `ordering`, `consistency`, `timeout`) as Qdrant reads and validates them."""
        for name, values in query.items():
            for value in values:
                problem = _check_query_param(name, value)
                if problem is not None:
                    raise BodyError(*problem)

    def validate(self, schema_name: str, body: Any) -> Any:
        """Return the body (a parsed JSON value) or raise BodyError as Qdrant would."""
        adapter = self._adapters.get(schema_name)
        if adapter is None:
            adapter = self._adapters[schema_name] = pydantic.TypeAdapter(BODY_MODELS[schema_name])
        try:
            adapter.validate_python(body)
        except pydantic.ValidationError as exc:
            raise BodyError(400, "Format error in JSON body: " + _pydantic_summary(exc)) from exc
        shape = self._schema_errors(schema_name, body, constraints=False)
        if shape:
            raise BodyError(400, "Format error in JSON body: " + "; ".join(shape))
        constraints = self._schema_errors(schema_name, body, constraints=True)
        if constraints:
            raise BodyError(422, "Validation error in JSON body: [" + ", ".join(constraints) + "]")
        return body


def _short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _pydantic_summary(exc: pydantic.ValidationError) -> str:
    parts = []
    for err in exc.errors(include_url=False)[:5]:
        where = ".".join(str(p) for p in err["loc"]) or "body"
        parts.append(f"{where}: {err['msg']}")
    more = exc.error_count() - len(parts)
    if more > 0:
        parts.append(f"and {more} more")
    return _short("; ".join(parts), 1000)
