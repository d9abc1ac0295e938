"""The client's side of ``session/request_permission``: what a user clicking in an editor
would do, scripted. A test queues the answer (an option kind) before the prompt; the
official client's ``request_permission`` callback calls :meth:`PermissionDesk.answer`."""

from __future__ import annotations

from typing import Any

from acp.schema import AllowedOutcome, DeniedOutcome, PermissionOption, RequestPermissionResponse, ToolCallUpdate


class PermissionDesk:
    def __init__(self) -> None:
        #: Every request as camelCase JSON (``{sessionId, toolCall, options}``), in arrival order.
        self.requests: list[dict[str, Any]] = []
        #: Option kinds to pick, one per coming request.
        self.choices: list[str] = []

    def choose(self, kind: str) -> None:
        """Answer the next request with the offered option of this kind (``allow_once``, ``reject_once``…)."""
        self.choices.append(kind)

    def answer(self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption]) -> RequestPermissionResponse:
        def dump(model: Any) -> dict[str, Any]:
            return model.model_dump(mode="json", by_alias=True, exclude_none=True)

        self.requests.append({"sessionId": session_id, "toolCall": dump(tool_call), "options": [dump(o) for o in options]})
        kind = self.choices.pop(0) if self.choices else None
        option = next((o for o in options if o.kind == kind), None)
        if option is None:
            # Unexpected or unanswerable: dismiss it, as closing the dialog would. The test
            # sees the extra request (and the dismissal) in its assertions.
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=option.option_id))
