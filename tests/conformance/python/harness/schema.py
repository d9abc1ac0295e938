"""Validates frames an ACP agent writes against the official ACP JSON schema.

Which definition applies to a frame is read from the schema itself: the ``AgentRequest``,
``AgentResponse`` and ``AgentNotification`` envelopes reference the per-method definitions,
and each of those carries ``x-method`` (the JSON-RPC method) and ``x-side`` (who handles
that method). So nothing here names ``SessionNotification`` or ``PromptResponse``: a new
method in a newer schema is picked up without touching this file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker
from jsonschema.exceptions import best_match
from referencing import Registry
from referencing.jsonschema import DRAFT202012

from .paths import FIXTURES_DIR, SCHEMA_PATH, UNSTABLE_SCHEMA_PATH

SCHEMA_ID = "urn:acp:schema"
_DEFS = "#/$defs/"

MethodOf = Callable[[Any], "str | None"]

#: The unstable methods Hearth serves. The stable schema has no types for them, so the answers
#: to them are checked against the unstable schema; every other frame, the notifications these
#: methods cause included, is held to the stable one.
UNSTABLE_METHODS = frozenset({"session/fork", "session/set_title"})


def _refs_under(node: Any, found: set[str] | None = None) -> set[str]:
    """Every ``$ref`` target name under ``node``, without following the refs."""
    found = set() if found is None else found
    if isinstance(node, list):
        for item in node:
            _refs_under(item, found)
    elif isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str) and value.startswith(_DEFS):
                found.add(value[len(_DEFS) :])
            else:
                _refs_under(value, found)
    return found


def _method_table(defs: dict[str, Any], envelope: str, side: str) -> dict[str, str]:
    """method -> definition name, for the definitions ``envelope`` references.

    Raises if a referenced definition's ``x-side`` is not ``side``: then the schema does not
    mean what this validator assumes.
    """
    table: dict[str, str] = {}
    for name in _refs_under(defs[envelope]):
        definition = defs[name]
        if "x-method" not in definition:
            continue
        if definition.get("x-side") != side:
            raise ValueError(f"{envelope} references {name} with x-side {definition.get('x-side')}, expected {side}")
        table[definition["x-method"]] = name
    if not table:
        raise ValueError(f"no x-method definitions under {envelope}")
    return table


def _format_checker() -> FormatChecker:
    """The schema's non-standard formats, from the table shared with the TypeScript suite."""
    formats = json.loads((FIXTURES_DIR / "schema-formats.json").read_text())
    checker = FormatChecker(formats=())

    def is_number(value: Any) -> bool:
        return isinstance(value, (int, float)) and not isinstance(value, bool)

    for name, (low, high) in formats["integers"].items():
        checker.checks(name)(
            lambda v, low=low, high=high: not is_number(v) or (float(v).is_integer() and low <= v <= high)
        )
    for name in formats["numbers"]:
        checker.checks(name)(lambda v: not is_number(v) or v == v and abs(v) != float("inf"))
    uri = re.compile(formats["uriPattern"])
    checker.checks("uri")(lambda v: not isinstance(v, str) or uri.match(v) is not None)
    return checker


class AcpSchema:
    def __init__(self, schema: dict[str, Any]) -> None:
        defs = schema["$defs"]
        self._registry = Registry().with_resource(SCHEMA_ID, DRAFT202012.create_resource(schema))
        self._formats = _format_checker()
        self._validators: dict[str, Draft202012Validator] = {}

        # What the agent sends: responses to methods the agent handles; requests and
        # notifications for methods the client handles.
        self.responses = _method_table(defs, "AgentResponse", "agent")
        self.requests = _method_table(defs, "AgentRequest", "client")
        self.notifications = _method_table(defs, "AgentNotification", "client")

        titles = [branch.get("title") for branch in schema["anyOf"]]
        if "Agent" not in titles:
            raise ValueError("schema has no top-level `Agent` message branch")
        self.envelope_pointer = f"#/anyOf/{titles.index('Agent')}"

    @staticmethod
    @cache
    def load(path: Path = SCHEMA_PATH) -> AcpSchema:
        return AcpSchema(json.loads(path.read_text()))

    def check(self, pointer: str, value: Any) -> str:
        """Why ``value`` breaks the schema node at ``pointer`` ("" when valid)."""
        validator = self._validators.get(pointer)
        if validator is None:
            validator = Draft202012Validator(
                {"$ref": SCHEMA_ID + pointer}, registry=self._registry, format_checker=self._formats
            )
            self._validators[pointer] = validator
        error = best_match(validator.iter_errors(value))
        if error is None:
            return ""
        return f"at {error.json_path}: {error.message}"

    def problems(self, frame: Any, method_of_request: MethodOf) -> list[str]:
        """Problems with one frame the agent wrote, as readable strings (empty when valid).

        ``method_of_request`` gives the method of a request the client sent, by id, to pick
        the response type.
        """
        problems = []
        envelope = self.check(self.envelope_pointer, frame)
        if envelope:
            problems.append(f"not an ACP agent message: {envelope}")
        name, value, problem = self._specific_definition(frame, method_of_request)
        if problem:
            problems.append(problem)
        if name:
            errors = self.check(_DEFS + name, value)
            if errors:
                problems.append(f"{name}: {errors}")
        return problems

    def _specific_definition(self, frame: Any, method_of_request: MethodOf) -> tuple[str | None, Any, str | None]:
        """(definition name, payload, problem): which definition the payload must satisfy."""
        if not isinstance(frame, dict):
            return None, None, "a frame must be a JSON object"
        method = frame.get("method")
        if isinstance(method, str):
            has_id = "id" in frame
            if method.startswith("_"):
                return None, None, None  # extension methods have no schema
            name = (self.requests if has_id else self.notifications).get(method)
            if name is None:
                return None, None, f"agent sent unknown {'request' if has_id else 'notification'} {method}"
            return name, frame.get("params"), None
        if "error" in frame:
            return "Error", frame["error"], None
        if "result" in frame:
            request_method = method_of_request(frame.get("id"))
            if request_method is None:
                return None, None, f"response to an id the client never used: {json.dumps(frame.get('id'))}"
            if request_method.startswith("_"):
                return None, None, None
            name = self.responses.get(request_method)
            if name is None:
                return None, None, f"no response type for method {request_method}"
            return name, frame["result"], None
        return None, None, "neither a request, a notification nor a response"


class FrameSchemas:
    """Picks the schema for each frame: the stable one, or the unstable one for ``UNSTABLE_METHODS``."""

    def __init__(self, stable: AcpSchema, unstable: AcpSchema) -> None:
        self.stable = stable
        self.unstable = unstable

    @staticmethod
    def load() -> FrameSchemas:
        return FrameSchemas(AcpSchema.load(), AcpSchema.load(UNSTABLE_SCHEMA_PATH))

    def problems(self, frame: Any, method_of_request: MethodOf) -> list[str]:
        """As ``AcpSchema.problems``."""
        answered = isinstance(frame, dict) and "method" not in frame
        method = method_of_request(frame.get("id")) if answered else None
        schema = self.unstable if method in UNSTABLE_METHODS else self.stable
        return schema.problems(frame, method_of_request)
