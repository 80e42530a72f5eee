import pytest
from sqlalchemy import Column, Integer, MetaData, String, Table, create_engine, inspect, text

from stackyard.db import Base, Database
from stackyard.db.reconcile import SchemaError, reconcile_schema


def test_fresh_database_gets_every_table_and_second_run_changes_nothing(database_url):
    db = Database(database_url)
    changes = db.reconcile()
    assert {f"created table {t}" for t in Base.metadata.tables} <= set(changes)
    assert set(inspect(db.engine).get_table_names()) >= set(Base.metadata.tables)
    assert db.reconcile() == []
    db.dispose()


def test_older_schema_gets_missing_columns_and_keeps_rows(database_url):
    db = Database(database_url)
    # An older release: schedules without agent_id, retention and enabled.
    with db.engine.begin() as conn:
        conn.execute(
            text(
                "CREATE TABLE schedules (id INTEGER PRIMARY KEY, name VARCHAR(100) NOT NULL, "
                "stack_id VARCHAR(100) NOT NULL, destination_id INTEGER, "
                "cron VARCHAR(100) NOT NULL, "
                "created_at TIMESTAMP NOT NULL, last_run_at TIMESTAMP, last_status VARCHAR(16))"
            )
        )
        conn.execute(
            text(
                "INSERT INTO schedules (id, name, stack_id, cron, created_at) VALUES "
                "(1, 'nightly', 'web', '0 3 * * *', '2026-01-01 00:00:00'), "
                "(2, 'weekly', 'db', '0 4 * * 0', '2026-01-02 00:00:00')"
            )
        )

    changes = db.reconcile()

    assert "added column schedules.agent_id" in changes
    assert "added column schedules.retention" in changes
    assert "added column schedules.enabled" in changes
    assert "created index ix_schedules_agent_id" in changes
    columns = {c["name"]: c for c in inspect(db.engine).get_columns("schedules")}
    assert columns["agent_id"]["nullable"]
    with db.engine.connect() as conn:
        rows = conn.execute(
            text(
                "SELECT id, name, stack_id, agent_id, retention, enabled FROM schedules ORDER BY id"
            )
        ).all()
    assert [tuple(r) for r in rows] == [
        (1, "nightly", "web", None, 7, True),
        (2, "weekly", "db", None, 7, True),
    ]
    assert db.reconcile() == []
    with db.engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM schedules")).scalar() == 2
    db.dispose()


def test_required_column_without_default_is_refused(tmp_path):
    engine = create_engine(f"sqlite:///{tmp_path / 'x.db'}")
    old = MetaData()
    Table("things", old, Column("id", Integer, primary_key=True))
    old.create_all(engine)
    new = MetaData()
    Table(
        "things",
        new,
        Column("id", Integer, primary_key=True),
        Column("name", String(10), nullable=False),
    )
    with pytest.raises(SchemaError, match=r"things\.name"):
        reconcile_schema(engine, new)
    assert [c["name"] for c in inspect(engine).get_columns("things")] == ["id"]
