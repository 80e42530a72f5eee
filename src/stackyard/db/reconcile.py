"""Start-up schema reconciliation: create missing tables, add missing columns.

Only additive and only for columns an existing row can take without a value: nullable
columns and columns with a server default. Running it twice changes nothing.
"""

from __future__ import annotations

import logging
from typing import Any

from sqlalchemy import Column, MetaData, inspect
from sqlalchemy.engine import Engine
from sqlalchemy.schema import CreateColumn

log = logging.getLogger(__name__)


class SchemaError(RuntimeError):
    """A mapped column cannot be added to an existing table."""


def _add_column_sql(engine: Engine, table_name: str, column: Column[Any]) -> str:
    if column.primary_key or (not column.nullable and column.server_default is None):
        raise SchemaError(
            f"cannot add column {table_name}.{column.name} to an existing table: it must be "
            "nullable or have a server default"
        )
    preparer = engine.dialect.identifier_preparer
    definition = CreateColumn(column).compile(dialect=engine.dialect)
    return f"ALTER TABLE {preparer.quote(table_name)} ADD COLUMN {definition}"


def reconcile_schema(engine: Engine, metadata: MetaData) -> list[str]:
    """Create missing tables and add missing columns and indexes; return what changed.
    One transaction: a first start commits (and syncs to disk) once, not once a table."""
    changes: list[str] = []
    with engine.begin() as conn:
        inspector = inspect(conn)
        existing = set(inspector.get_table_names())
        for table in metadata.sorted_tables:
            if table.name not in existing:
                table.create(conn)
                changes.append(f"created table {table.name}")
                continue
            present = {c["name"] for c in inspector.get_columns(table.name)}
            for column in table.columns:
                if column.name not in present:
                    conn.exec_driver_sql(_add_column_sql(engine, table.name, column))
                    changes.append(f"added column {table.name}.{column.name}")
            indexes = {i["name"] for i in inspector.get_indexes(table.name)}
            for index in table.indexes:
                if index.name not in indexes:
                    index.create(conn)
                    changes.append(f"created index {index.name}")
    for change in changes:
        log.info("schema: %s", change)
    return changes
