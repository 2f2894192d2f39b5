"""The LLM layer: one chat interface for every role (generator, discriminator, candidates, judge,
model under test). A batch of requests goes in, one response per request comes out, in order.

- `types.py`: ChatRequest, ChatResponse.
- `cache.py`: the response cache (SQLite, WAL), keyed by everything that changes an answer.
- `backend.py`: the `Backend` protocol (identity, complete, structured_output, server_report).
- `client.py`: ChatClient = backend + cache + token counts + structured (JSON) replies.
- `batch.py`: batch files (OpenAI Batch API input, OpenAI's and vLLM's outputs) and `BatchBackend`,
  for any role run where the GPUs are (docs/batch.md).
- `backends/`: the backends, by name (`BACKENDS`; listed from their source, imported on first use):
  `openai` (any OpenAI-compatible server, vLLM's included), `vllm` (vLLM in-process: `vllm.LLM`),
  `scripted` (replies a test writes).
"""

from curate.curation.llm.backends import BACKENDS


def uses_in_process_model(*sections: dict | None) -> bool:
    """Whether any `[models.<role>]` section names a backend that loads the model into the process
    that asks (`@backend("vllm", in_process=True)`)."""
    return any(s and s.get("backend") in BACKENDS and BACKENDS.meta(s["backend"]).get("in_process")
               for s in sections)


ROLES = ("generator", "discriminator", "classifier", "candidate_1", "candidate_2", "candidate_3", "judge")
