"""The dataset card's YAML header, as the Hugging Face Hub validates it: licence identifiers (each
source's own licence named), language, size category, task categories and ids, tags, and one config
per task (its splits' files) and per table serialization. Built with `huggingface_hub`'s
`DatasetCardData`, so the header is the Hub's own YAML."""

from __future__ import annotations

import re
from typing import Any

from curate.exports.release.base import task_slug

# The words a source states its licence in -> the Hub's licence id (the start of the stated text)
HUB_LICENCES = (
    (r"cc[ -]by[ -]sa[ -]4\.0", "cc-by-sa-4.0"), (r"cc[ -]by[ -]sa[ -]3\.0", "cc-by-sa-3.0"),
    (r"cc[ -]by[ -]nc[ -]sa[ -]4\.0", "cc-by-nc-sa-4.0"), (r"cc[ -]by[ -]nc[ -]4\.0", "cc-by-nc-4.0"),
    (r"cc[ -]by[ -]4\.0", "cc-by-4.0"), (r"cc0", "cc0-1.0"), (r"mit\b", "mit"), (r"apache[ -]2\.0", "apache-2.0"),
    (r"gpl[ -]?3|gpl \(>= ?3\)", "gpl-3.0"), (r"gpl[ -]?2|gpl \(>= ?2\)", "gpl-2.0"), (r"odc[ -]by", "odc-by"),
    (r"odbl", "odbl"),
)
# Where each built-in corpus's licences are stated, per package or per source
SOURCE_LINKS = {"rdatasets": "https://vincentarelbundock.github.io/Rdatasets/"}
CRAN = "https://cran.r-project.org/package={}"
# The Hub's size categories: the upper bound of each
SIZES = ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M"),
         (10_000_000, "1M<n<10M"), (100_000_000, "10M<n<100M"))
OTHER_LICENCE = "source-licences"  # license: other, named: each source keeps its own (the card's table)


def hub_licence(stated: str) -> str | None:
    """The Hub id of a licence as a source states it, or None where the text names none."""
    text = (stated or "").strip().lower()
    return next((hub_id for words, hub_id in HUB_LICENCES if re.match(words, text)), None)


def source_licences(manifest: dict[str, Any]) -> list[dict[str, Any]]:
    """Each source of the release's tables: its stated licence, the Hub id (or None), where to read it,
    and its tables; an R package of the built-in corpus is a source of its own (its CRAN page)."""
    out = []
    packages = manifest.get("packages") or {}
    for row in manifest["sources"]:
        stated, source = row["licence"], row["source"]
        if source == "rdatasets" and packages:
            for key, tables in sorted(packages.items()):
                package = key.split(":", 1)[-1]
                out.append({"source": f"rdatasets:{package}", "stated": "the R package's licence (its CRAN page)",
                            "hub": None, "link": CRAN.format(package), "tables": tables})
            continue
        out.append({"source": source, "stated": stated or "not stated by the source", "hub": hub_licence(stated),
                    "link": SOURCE_LINKS.get(source, ""), "tables": row["tables"]})
    return out


def size_category(samples: int) -> str:
    return next((name for bound, name in SIZES if samples < bound), "n>100M")


def card_data(manifest: dict[str, Any]) -> Any:
    """The header: one licence id where every source states the same known one, else `other`, named and
    linked to the card's table of each source's licence."""
    from huggingface_hub import DatasetCardData

    from curate.curation.taxonomy import tasks

    counts = manifest["counts"]
    licences = {s["hub"] for s in source_licences(manifest)}
    one = next(iter(licences)) if len(licences) == 1 else None
    licence = {"license": one} if one else {"license": "other", "license_name": OTHER_LICENCE,
                                            "license_link": "README.md"}
    taxonomy = tasks()
    benchmarks = sorted({taxonomy[t].benchmark.lower() for t in counts["by_task"] if t in taxonomy} - {"imported"})
    imported = manifest["build"].get("import")
    tags = ["tabular", "table-reasoning", "benchmark", "curate", *benchmarks]
    if any(t.startswith("MMQA/") or taxonomy.get(t) and taxonomy[t].benchmark in ("Spider", "BIRD")
           for t in counts["by_task"]):
        tags.append("text-to-sql")
    return DatasetCardData(
        pretty_name=manifest["name"], **licence, language=["en"], multilinguality="monolingual",
        size_categories=[size_category(counts["samples"])],
        task_categories=["table-question-answering", "question-answering"], task_ids=["closed-domain-qa"],
        annotations_creators=["expert-generated" if imported else "machine-generated"],
        language_creators=["expert-generated" if imported else "machine-generated"],
        source_datasets=["original"], tags=tags, configs=configs(manifest))


def configs(manifest: dict[str, Any]) -> list[dict[str, Any]]:
    """`default` (every task, by split), one config per task, one per table serialization: each a
    relative glob of the release's own files, so the header loads the folder as written."""
    counts = manifest["counts"]
    out = [{"config_name": "default", "default": True,
            "data_files": [{"split": s, "path": f"samples/*/{s}.parquet"} for s in sorted(counts["by_split"])]}]
    for task_key, by_split in sorted(counts["by_task_split"].items()):
        slug = task_slug(task_key)
        out.append({"config_name": slug,
                    "data_files": [{"split": s, "path": f"samples/{slug}/{s}.parquet"} for s in sorted(by_split)]})
    for fmt in manifest["table_configurations"]["serializations"]:
        out.append({"config_name": f"tables-{fmt}", "data_files": [{"split": "tables", "path": f"tables/{fmt}.parquet"}]})
    return out
