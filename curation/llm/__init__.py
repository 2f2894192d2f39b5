"""The LLM layer: one chat interface for every role (generator, discriminator, candidates, judge,
model under test). A batch of requests goes in, one response per request comes out, in order.

- `types.py`: ChatRequest, ChatResponse.
- `cache.py`: the response cache (SQLite, WAL), keyed by everything that changes an answer.
- `client.py`: ChatClient = backend + cache + token counts + structured (JSON) replies.
- backends, by name (imported on first use): `openai` (any OpenAI-compatible server, vLLM's
  included), `scripted` (replies a test writes). vLLM in-process is not built yet.
"""

from curation.registry import Registry

BACKENDS = Registry("backend", {
    "openai": "curation.llm.openai_backend:OpenAIBackend",
    "scripted": "curation.llm.scripted:ScriptedBackend",
})

ROLES = ("generator", "discriminator", "candidate_1", "candidate_2", "candidate_3", "judge")
