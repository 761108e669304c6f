"""Request-body validation against Qdrant's own models.

Two checks, mirroring how the real server reports problems:

1. Shape. The body must parse as the `qdrant_client.http.models` pydantic model
   generated from Qdrant's OpenAPI spec (these forbid unknown fields), and, when the
   spec file is available, as the spec's JSON schema with its value constraints
   removed. Pydantic alone coerces (e.g. the string "10" into an integer limit), the
   strict schema pass catches what serde would refuse. A failure is Qdrant's
   deserialisation error: 400 with "Format error in JSON body: ...".
2. Constraints. The spec's value constraints (`minimum: 1` on `limit`, ...) come from
   Qdrant's `#[validate(...)]` attributes. A failure is Qdrant's validation error:
   422 with "Validation error in JSON body: [...]".

The spec is read at run time from QDRANT_OPENAPI_SPEC, else from
`<repo>/../shared/qdrant/openapi.json`; it is never copied into the repository.
"""

from __future__ import annotations

import copy
import json
import os
import sys
from pathlib import Path
from typing import Any

import pydantic


def _load_qdrant_models() -> Any:
    """qdrant_client.http.models.models, without importing the whole client.

    The generated models module needs only pydantic; importing it through the
    `qdrant_client` package would first load the gRPC/HTTP clients (seconds of startup).
    """
    import importlib.util

    package = importlib.util.find_spec("qdrant_client")
    if package is None or not package.submodule_search_locations:
        raise ImportError("qdrant-client is not installed (run: bash scripts/setup-qdrant-engine.sh)")
    path = Path(list(package.submodule_search_locations)[0]) / "http" / "models" / "models.py"
    spec = importlib.util.spec_from_file_location("qdrant_rest_models", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    # Forward references resolve lazily, on a model's first use, from this module.
    spec.loader.exec_module(module)
    return module


qm = _load_qdrant_models()

# Keywords that stem from Qdrant's validators rather than from serde's types.
_CONSTRAINT_KEYWORDS = (
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "pattern",
    "multipleOf",
)

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


def default_spec_path() -> Path | None:
    env = os.environ.get("QDRANT_OPENAPI_SPEC")
    if env:
        return Path(env)
    repo_root = Path(__file__).resolve().parents[3]
    candidate = repo_root.parent / "shared" / "qdrant" / "openapi.json"
    return candidate if candidate.exists() else None


def _openapi_to_json_schema(node: Any, strip_constraints: bool) -> Any:
    """OpenAPI 3.0 schema -> JSON Schema (draft 7): `nullable`, `oneOf` as serde sees them."""
    if isinstance(node, list):
        return [_openapi_to_json_schema(item, strip_constraints) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("nullable", "example", "description", "deprecated", "title"):
            continue
        if strip_constraints and key in _CONSTRAINT_KEYWORDS:
            # A negative number for an unsigned field is a serde error, not a validator's.
            if not (key == "minimum" and value == 0):
                continue
        # serde's untagged enums take the first variant that fits: anyOf, not oneOf.
        out["anyOf" if key == "oneOf" else key] = _openapi_to_json_schema(value, strip_constraints)
    if node.get("nullable"):
        if "type" in out:
            out["type"] = [out["type"], "null"]
            if "enum" in out:
                out["enum"] = [*out["enum"], None]
        elif not out:
            out = {"type": "null"}
        else:
            out = {"anyOf": [out, {"type": "null"}]}
    return out


class Validator:
    def __init__(self, spec_path: Path | None) -> None:
        self.spec_path = spec_path
        self._adapters: dict[str, pydantic.TypeAdapter[Any]] = {}
        self._validators: dict[tuple[int, str], Any] = {}
        self._shape = None
        self._full = None
        if spec_path is None:
            print(
                "qdrant test engine: OpenAPI spec not found (set QDRANT_OPENAPI_SPEC); "
                "validating with qdrant-client's models only",
                file=sys.stderr,
            )
            return
        import jsonschema

        spec = json.loads(Path(spec_path).read_text(encoding="utf-8"))
        schemas = spec["components"]["schemas"]
        for strip, attr in ((True, "_shape"), (False, "_full")):
            doc = {"components": {"schemas": _openapi_to_json_schema(copy.deepcopy(schemas), strip)}}
            setattr(self, attr, (jsonschema.Draft7Validator, doc))

    def _schema_errors(self, which: Any, schema_name: str, body: Any) -> list[str]:
        if which is None:
            return []
        import jsonschema.exceptions

        key = (id(which), schema_name)
        validator = self._validators.get(key)
        if validator is None:
            validator_cls, doc = which
            validator = validator_cls({**doc, "$ref": f"#/components/schemas/{schema_name}"})
            self._validators[key] = validator
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
        shape = self._schema_errors(self._shape, schema_name, body)
        if shape:
            raise BodyError(400, "Format error in JSON body: " + "; ".join(shape))
        constraints = self._schema_errors(self._full, schema_name, body)
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
