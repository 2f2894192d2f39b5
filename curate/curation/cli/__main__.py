"""`python -m curate.curation.cli`: the `curate` command."""

from curate.curation.cli import main

main()
