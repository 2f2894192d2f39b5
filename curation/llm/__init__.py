"""The LLM layer: one chat interface for every role (generator, discriminator, candidates, judge,
model under test). A batch of requests goes in, one response per request comes out, in order.

- `types.py`: ChatRequest, ChatResponse.
- `cache.py`: the response cache (SQLite, WAL), keyed by everything that changes an answer.
- `backend.py`: the `Backend` protocol (identity, complete, structured_output, server_report).
- `client.py`: ChatClient = backend + cache + token counts + structured (JSON) replies.
- backends, by name (imported on first use): `openai` (any OpenAI-compatible server, vLLM's
  included), `vllm` (vLLM in-process: `vllm.LLM`), `scripted` (replies a test writes).
"""

from curation.registry import Registry

BACKENDS = Registry("backend", {
    "openai": "curation.llm.openai_backend:OpenAIBackend",
    "vllm": "curation.llm.vllm_backend:VLLMBackend",
    "scripted": "curation.llm.scripted:ScriptedBackend",
})

IN_PROCESS_BACKENDS = ("vllm",)  # they load the model into the process that asks


def uses_in_process_model(*sections: dict | None) -> bool:
    """Whether any `[models.<role>]` section names an in-process backend."""
    return any(s and s.get("backend") in IN_PROCESS_BACKENDS for s in sections)

ROLES = ("generator", "discriminator", "classifier", "candidate_1", "candidate_2", "candidate_3", "judge")
