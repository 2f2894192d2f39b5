"""Chat backends, one module each, registered by `@backend("name")` on a class that implements
`curation.llm.backend.Backend`. `[models.<role>] backend = "name"` and `curate evaluate --backend
name` make one with the section's settings (`client_from_config`); a backend takes the generic CLI
options its constructor names. Adding a backend is one new module here.
"""

from curation.registry import Registry

BACKENDS = Registry("backend", plugins="curation.llm.backends.*")
backend = BACKENDS.decorator
