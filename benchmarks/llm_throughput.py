"""Request throughput of the LLM layer against the local model server, at concurrency 1, 4 and 16,
next to the server's single-stream speed; print what was measured.

The server is the test suite's: llama-cpp-python's OpenAI-compatible server with Gemma 3 270M
(Q4_K_M) in `.envs/llm` (built on first use). No cache: every request reaches the server. Every
request generates exactly `--max-tokens` tokens.

    python benchmarks/llm_throughput.py [--requests N] [--max-tokens T] [--env DIR]

`--env` times another llama-cpp-python environment built the same way (a native build, say,
next to the suite's portable one): its `bin/python` serves its `models/` GGUF.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from curate.curation.llm.client import ChatClient  # noqa: E402
from curate.curation.llm.backends.openai_backend import OpenAIBackend  # noqa: E402
from curate.curation.llm.types import ChatRequest, user  # noqa: E402
from tests.llm_server import MODEL_NAME, LocalServer  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=32)
    parser.add_argument("--max-tokens", type=int, default=32)
    parser.add_argument("--env", default=None, help="another llama-cpp-python environment (default: .envs/llm)")
    options = parser.parse_args()
    # the base model often ends its turn at once; banning its end tokens (<eos> 1, <end_of_turn> 106)
    # makes every request generate exactly max_tokens tokens, so rates compare like with like
    params = {"temperature": 0, "max_tokens": options.max_tokens, "logit_bias": {"1": -100, "106": -100}}
    with tempfile.TemporaryDirectory() as tmp:
        argv = None
        if options.env:
            env = Path(options.env)
            argv = [str(env / "bin" / "python"), "-m", "llama_cpp.server", "--model",
                    str(env / "models" / f"{MODEL_NAME}.gguf"), "--model_alias", MODEL_NAME, "--chat_format", "gemma",
                    "--host", "127.0.0.1", "--port", "{port}", "--n_ctx", "4096", "--n_threads", str(os.cpu_count() or 2)]
        server = LocalServer(Path(tmp) / "server.log", argv=argv).start()
        print(f"server: {options.env or '.envs/llm'} ({(env / '.ready').read_text()[:60].strip() if options.env else 'portable'})")
        try:
            warm = ChatClient(OpenAIBackend(MODEL_NAME, base_url=server.url, concurrency=1))
            warm.complete([ChatRequest(user("Hello"), params)])
            started = time.perf_counter()
            single = warm.complete([ChatRequest(user("Write a sentence about tables, number 0."), params)])[0]
            single_seconds = time.perf_counter() - started
            print(f"single stream: {single.completion_tokens} tokens in {single_seconds:.2f}s = "
                  f"{single.completion_tokens / single_seconds:.1f} tokens/s")
            for concurrency in (1, 4, 16):
                client = ChatClient(OpenAIBackend(MODEL_NAME, base_url=server.url, concurrency=concurrency))
                prompts = [ChatRequest(user(f"Write a sentence about tables, number {i}."), params, index=concurrency)
                           for i in range(options.requests)]
                started = time.perf_counter()
                replies = client.complete(prompts)
                seconds = time.perf_counter() - started
                tokens = sum(r.completion_tokens for r in replies)
                errors = sum(1 for r in replies if not r.ok)
                print(f"concurrency {concurrency:>2}: {len(prompts)} requests in {seconds:6.2f}s = "
                      f"{len(prompts) / seconds:5.2f} requests/s, {tokens / seconds:6.1f} tokens/s, {errors} errors")
        finally:
            server.kill()


if __name__ == "__main__":
    main()
