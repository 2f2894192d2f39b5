"""What the card tells a reader who opens the release: one sample as it is stored, how to read its
JSON-text columns (`answer`, `provenance`) and join it to its tables, in snippets that run in the
release folder as written, and how to cite curate and the benchmarks it follows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from curate.exports.release.base import task_slug

EXAMPLE_TEXT_CHARS = 300  # a longer string of the example record is cut, marked with "…"

CITATIONS = {
    "curate": """@software{curate,
  title = {curate: building, curating and evaluating table-reasoning benchmarks for LLMs},
  note = {The toolkit that built this release; cite the release by its name, version and fingerprint}
}""",
    "TReB": """@article{li2025treb,
  title = {{TReB}: A Comprehensive Benchmark for Evaluating Table Reasoning Capabilities of Large Language Models},
  author = {Li, Ce and Liu, Xiaofan and Song, Zhiyan and Chi, Ce and Zhao, Chen and Yang, Jingjing and Wang, Zhendong and Yang, Kexin and Shi, Boshen and Wang, Xing and Deng, Chao and Feng, Junlan},
  journal = {arXiv preprint arXiv:2506.18421},
  year = {2025}
}""",
    "RealHiTBench": """@inproceedings{wu2025realhitbench,
  title = {{RealHiTBench}: A Comprehensive Realistic Hierarchical Table Benchmark for Evaluating {LLM}-Based Table Analysis},
  author = {Wu, Pengzuo and Yang, Yuhang and Zhu, Guangcheng and Ye, Chao and Gu, Hong and Lu, Xu and Xiao, Ruixuan and Bao, Bowen and He, Yijing and Zha, Liangyu and Ye, Wentao and Zhao, Junbo and Wang, Haobo},
  booktitle = {Findings of the Association for Computational Linguistics: ACL 2025},
  year = {2025},
  note = {arXiv:2506.13405}
}""",
    "MMQA": """@inproceedings{wu2025mmqa,
  title = {{MMQA}: Evaluating {LLMs} with Multi-Table Multi-Hop Complex Questions},
  author = {Wu, Jian and others},
  booktitle = {The Thirteenth International Conference on Learning Representations (ICLR)},
  year = {2025}
}""",
    "ToRR": """@article{ashurytahan2025torr,
  title = {The Mighty {ToRR}: A Benchmark for Table Reasoning and Robustness},
  author = {Ashury-Tahan, Shir and Mai, Yifan and C, Rajmohan and Gera, Ariel and Perlitz, Yotam and Yehudai, Asaf and Bandel, Elron and Choshen, Leshem and Shnarch, Eyal and Liang, Percy and Shmueli-Scheuer, Michal},
  journal = {arXiv preprint arXiv:2502.19412},
  year = {2025}
}""",
    "TableBench": """@inproceedings{wu2025tablebench,
  title = {{TableBench}: A Comprehensive and Complex Benchmark for Table Question Answering},
  author = {Wu, Xianjie and others},
  booktitle = {Proceedings of the AAAI Conference on Artificial Intelligence},
  year = {2025},
  note = {arXiv:2408.09174}
}""",
}
# What curate takes from each
FOLLOWS = {
    "TReB": "the task taxonomy (TU, TBO, TCO, DA, ADA), TCoT/PoT/ICoT inference, the cleaning rules, "
            "the generator/discriminator question loop and three-model voting",
    "RealHiTBench": "hierarchical headers, LaTeX/HTML/image serializations, per-type question prompts and "
                    "judge-weighted voting",
    "MMQA": "multi-table SQL synthesis over key-joined databases, retrieval and key-selection tasks",
    "ToRR": "every table in several serializations, and robustness to the format and perturbations",
    "TableBench": "its published questions, imported and scored with its official metrics",
}


def first_file(manifest: dict[str, Any]) -> tuple[str, str]:
    """The (task slug, split) of the card's example: the first task's first split."""
    task, by_split = sorted(manifest["counts"]["by_task_split"].items())[0]
    return task_slug(task), sorted(by_split)[0]


def example_record(release_dir: Path, manifest: dict[str, Any]) -> dict[str, Any] | None:
    """The first sample of the first task's first split as its JSON Lines file holds it (long strings cut)."""
    slug, split = first_file(manifest)
    path = release_dir / "samples" / slug / f"{split}.jsonl"
    if not path.exists():
        return None
    with path.open() as f:
        record = json.loads(f.readline())

    def cut(value: Any) -> Any:
        if isinstance(value, str) and len(value) > EXAMPLE_TEXT_CHARS:
            return value[:EXAMPLE_TEXT_CHARS] + "…"
        if isinstance(value, dict):
            return {k: cut(v) for k, v in value.items()}
        if isinstance(value, list):
            return [cut(v) for v in value[:10]]
        return value

    return cut(record)


def shown_serialization(manifest: dict[str, Any]) -> str:
    """The release's default serialization (what `curate evaluate` shows a model), if it ships."""
    configs = manifest["table_configurations"]
    default = configs.get("default", {}).get("serialization")
    return default if default in configs["serializations"] else configs["serializations"][0]


def reading_snippet(manifest: dict[str, Any]) -> str:
    """Python that runs in the release folder as written: a sample, its JSON-text columns read, and the
    tables it names joined by id (typed, and as the model is shown them)."""
    slug, split = first_file(manifest)
    shown = shown_serialization(manifest)
    return f'''import json

import pandas as pd
import pyarrow as pa

samples = pd.read_parquet("samples/{slug}/{split}.parquet")  # one task's {split} split
sample = samples.iloc[0]
answer = json.loads(sample["answer"])  # the gold answer: a number, text, a list or a result table
provenance = json.loads(sample["provenance"])  # where it came from: template, table, seed, ...
print(sample["question"], "->", answer, provenance)

# the tables the sample names, by id: typed records, each body an Arrow IPC stream
tables = pd.read_parquet("tables/tables.parquet", columns=["id", "name", "body"]).set_index("id")
for table_id in sample["table_ids"]:
    frame = pa.ipc.open_stream(tables.loc[table_id, "body"]).read_all().to_pandas()
    print(tables.loc[table_id, "name"], frame.shape)

# the same tables as a model is shown them ({shown}; a table too large to serialize is only typed)
serialized = pd.read_parquet("tables/{shown}.parquet").set_index("table_id")
for table_id in sample["table_ids"]:
    if table_id in serialized.index:
        print(serialized.loc[table_id, "text"][:500])'''


def usage_section(manifest: dict[str, Any], release_dir: Path | None) -> list[str]:
    """## Loading, ## An example sample, ## Reading a sample and its tables."""
    slug, _ = first_file(manifest)
    lines = ["## Loading", "",
             "With `datasets`, run in this folder (from the Hub, the repository's id in place of `here`):", "",
             "```python", "import os", "", "import datasets", "",
             "here = os.getcwd()  # this release's folder",
             "samples = datasets.load_dataset(here)  # every task, by split",
             f"one_task = datasets.load_dataset(here, \"{slug}\")",
             f"tables = datasets.load_dataset(here, \"tables-{shown_serialization(manifest)}\")",
             "```", ""]
    record = example_record(release_dir, manifest) if release_dir else None
    if record is not None:
        lines += ["## An example sample", "",
                  f"The first sample of `samples/{slug}/`, as its `.jsonl` file holds it (strings over "
                  f"{EXAMPLE_TEXT_CHARS} characters cut here):", "",
                  "```json", json.dumps(record, indent=2, ensure_ascii=False), "```", ""]
    lines += ["## Reading a sample and its tables", "",
              "In the Parquet files `answer` and `provenance` are JSON text (one column holds numbers, text, lists "
              "and result tables alike): read them with `json.loads`. The `.jsonl` files hold them as JSON values. "
              "`table_ids` names the sample's tables: join them to `tables/tables.parquet` (typed bodies, as Arrow "
              "IPC) or to a serialization's file (`tables/<format>.parquet`, keyed by `table_id`). Run in this "
              "folder:", "",
              "```python", reading_snippet(manifest), "```", ""]
    return lines


def citation_section(manifest: dict[str, Any]) -> list[str]:
    """## Citation: curate, the release itself, and each benchmark curate follows (what it takes from each)."""
    imported = manifest["build"].get("import")
    lines = ["## Citation", "",
             f"Cite this release as {manifest['name']} {manifest['version']} (fingerprint `{manifest['fingerprint']}`), "
             "built with curate:", "", "```bibtex", CITATIONS["curate"], "```", ""]
    if imported:
        lines += [f"The questions are {imported['benchmark']}'s: cite its authors ({imported['citation']}).", ""]
    lines += ["curate follows these benchmarks:", ""]
    lines += [f"- **{name}**: {what}." for name, what in FOLLOWS.items()]
    lines += ["", "```bibtex", "\n\n".join(CITATIONS[name] for name in FOLLOWS), "```", ""]
    return lines
