"""Stage reports are typed objects over the JSON a stage writes (curate/curation/pipeline/reports.py):
a stored report.json reads as it is, a key written before a field existed takes its default, and
each stage's one line is written once, by its report type."""

from curate.curation.pipeline import STAGES
from curate.curation.pipeline.reports import (AdversarialReport, ContractsReport, IngestReport, SamplesReport, SqlReport,
                                       VerifyReport)


def test_a_report_reads_the_json_it_was_written_as_and_keeps_what_it_does_not_name():
    stored = {"tables": 3, "databases": 1, "failed": 1, "failures": [{"path": "x.csv", "reason": "empty"}],
              "skipped_files": [], "warnings": [], "by_reader": {"csv": 3}}
    report = IngestReport.from_json(stored)
    assert (report.tables, report.databases, report.failed) == (3, 1, 1)
    assert report.failures[0]["reason"] == "empty" and report.extra == {"by_reader": {"csv": 3}}
    assert IngestReport.from_json({}).tables == 0 and IngestReport.from_json(None).failures == []  # older reports


def test_each_stage_summary_is_its_report_types_line():
    assert STAGES.get("ingest").summary({"tables": 2293, "databases": 8}) == "2,293 tables, 8 databases"
    assert STAGES.get("ingest").summary({"tables": 1, "failed": 2}) == "1 tables, 0 databases, 2 unreadable inputs skipped"
    assert STAGES.get("clean").summary({"kept": 1666, "tables_in": 2293}) == "kept 1,666 of 2,293 tables"
    assert STAGES.get("rules").summary({"samples": 310673}) == "310,673 samples"
    assert STAGES.get("sql").summary({"samples": 215, "queries": 186, "databases": 8}) == \
        "215 samples from 186 queries over 8 databases"
    failed = {"samples": 5, "failed": [{"table": "a"}, {"database": "b"}]}
    assert SamplesReport.from_json(failed).summary() == "5 samples; 2 failed: a, b"
    reworded = {"samples": 2, "tried": 4, "by_status": {"kept": 2, "rejected": 2},
                "verdicts": {"verdicts": 9, "rejected": 7, "unnatural": 4, "wrong_answer": 3}}
    assert AdversarialReport.from_json(reworded).summary() == \
        "2 samples reworded of 4 tried (kept 2, rejected 2); the discriminator sent back 7 of 9 rewrites"
    verify = {"checked": 10, "matched": 9, "mismatch_count": 1, "error_count": 0, "ok": False, "human_fixed": 2}
    assert STAGES.get("verify").summary(verify) == VerifyReport.from_json(verify).summary() == \
        "9 of 10 programs agree; 1 mismatches, 0 errors; 2 gold answers fixed by annotators"
    # retrieval and key samples have no program: the line says so rather than "every program agrees"
    assert VerifyReport.from_json({"checked": 4, "matched": 4, "no_program": 876}).summary() == \
        "4 of 4 programs agree; 0 mismatches, 0 errors; 876 samples have no program to re-run"
    contracts = {"ok": False, "expectations": [{"success": True}, {"success": False}], "failed": ["suite: x()"]}
    assert STAGES.get("contracts").summary(contracts) == "1 of 2 expectations met"
    assert not ContractsReport.from_json(contracts).ok and SqlReport.from_json({}).queries == 0
    imported = {"samples": 886, "tables": 421, "release": "tablebench", "version": "1.0.0"}
    assert STAGES.get("imported").summary(imported) == "886 samples, 421 tables of tablebench 1.0.0"


def test_every_stage_has_a_typed_report():
    """The build, the CLI and the card read each stage's report through its type, never as a bare dict."""
    from curate.curation.pipeline.graph import PIPELINE_ORDER

    assert [name for name in PIPELINE_ORDER if STAGES.get(name).report_type is None] == []
