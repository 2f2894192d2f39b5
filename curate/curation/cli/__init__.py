"""The `curate` command line (`curate = "curate.curation.cli:main"`): `base.py` holds the group and the options
commands share; each module beside it holds one family of commands, registered on the group when
imported here. Heavy packages are imported inside commands, so `curate --help` stays instant."""

from curate.curation.cli import audit, build, evaluate, releases, review, sandbox, stages, tables  # noqa: F401  (register)
from curate.curation.cli.base import main

__all__ = ["main"]
