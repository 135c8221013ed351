"""The versioned data tables the package ships (the agent catalogue, the vendor table, the
model-id table): their one size cap (pure).

A running hook never parses a table (the validated policy carries what it took from them), but it
hashes their bytes to know whether the validated form is still current: this module is what it
imports for the cap. The tables are validated by pydantic models (`configschema.CatalogueFile`,
`VendorTableFile`, `ModelNamesFile`) where pydantic is already loaded.
"""

from __future__ import annotations

#: The most bytes a shipped data table may hold (read capped, parsed capped).
MAX_TABLE_BYTES = 1 << 20
