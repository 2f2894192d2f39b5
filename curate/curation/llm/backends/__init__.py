"""Chat backends, one module each, registered by `@backend("name")` on a class that implements
`curate.curation.llm.backend.Backend`. `[models.<role>] backend = "name"` and `curate evaluate --backend
name` make one with the section's settings (`client_from_config`); a backend takes the generic CLI
options its constructor names. Adding a backend is one new module here.
"""

from curate.curation.registry import Registry

BACKENDS = Registry("backend", plugins="curate.curation.llm.backends.*")
backend = BACKENDS.decorator


def offered() -> list[str]:
    """The backends a user may name (`curate evaluate --backend`): all but those only tests use."""
    return [name for name in BACKENDS.names() if not BACKENDS.meta(name).get("for_tests")]
