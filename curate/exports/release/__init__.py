"""Versioned, immutable benchmark releases, by job: `base` (layout, settings, versions, the fingerprint and
checksums), `write` (the writer and the manifest), `card` (the dataset card), `diff` (releases compared)
`files` (the one place that opens a release: only its checksummed files) and `verify` (`curate release
verify`'s file checks). Every name is importable from here as before."""

from __future__ import annotations

from curate.exports.release.base import (  # noqa: F401
    ANSWER_EXAMPLES, CARD, CHECKSUMS, DEFAULTS, DEFAULT_PERTURBATION, DEFAULT_SERIALIZATION, DIFF, DIFF_EXAMPLES,
    FORMAT, MANIFEST, RELEASE_NAME, ReleaseBusy, ReleaseExists, ReleaseInputs, SEMVER, SERIALIZE_CHUNK,
    TABLE_RECORDS, _rows_digest, _serialized_schema, _table_records, content_fingerprint, next_version,
    read_manifest, settings, sha256_file, task_slug, versions, write_checksums,
)
from curate.exports.release.write import (  # noqa: F401
    _environment, _git_commit, _manifest, _read_ids, _same_content, _status, _write_locked, _write_samples,
    _write_tables, samples_waiting_for_review, serialize_chunk, write_release,
)
from curate.exports.release.card import (  # noqa: F401
    _card_built, _card_database_shares, _card_import, _card_method, _stage_line, _yaml_string, dataset_card,
)
from curate.exports.release.diff import (  # noqa: F401
    SAMPLE_DIGEST, _flatten, _sample_files, compare_releases, diff_releases,
)
from curate.curation.release_files import (  # noqa: F401
    Problem, ReleaseFiles, ReleaseIntegrityError, open_release, unsafe_path,
)
from curate.exports.release.verify import (  # noqa: F401
    _count_samples, _inconsistent, check_files, duplicate_sample_ids,
)
