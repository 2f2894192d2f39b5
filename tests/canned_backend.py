"""A scripted backend a build config can name: `backend = "canned"` with `rules = [[substring, reply], ...]`.

The reply is the first rule whose substring occurs in the conversation's last message (else
`default`). For unit tests of stages that build their clients from the config; register it with
`BACKENDS.register("canned", "tests.canned_backend:CannedBackend")`.
"""

from __future__ import annotations

from typing import Any

from curate.curation.llm.backends.scripted import ScriptedBackend


class CannedBackend(ScriptedBackend):
    kind = "canned"
    calls_by_model: dict[str, list[Any]] = {}

    def __init__(self, model: str, rules: list[list[str]] = (), default: str = "", **_: Any) -> None:
        def reply(request: Any) -> str:
            last = request.messages[-1]["content"]
            return next((r for s, r in rules if s in last), default)

        super().__init__(reply, model)
        self.calls = CannedBackend.calls_by_model.setdefault(model, [])
