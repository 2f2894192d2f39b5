"""`python -m curation.cli`: the `curate` command."""

from curation.cli import main

main()
