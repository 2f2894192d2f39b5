"""Multi-table SQL synthesis over relational databases (MMQA): schema graphs, keys, templates."""
