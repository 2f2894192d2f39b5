"""curate's core: records, sources, cleaning rules, the pipeline runner and the CLI.

Nothing heavy is imported here so that `curate --help` stays instant.
"""

__version__ = "0.1.0"
