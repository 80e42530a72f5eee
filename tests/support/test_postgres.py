"""The postgres_url fixture gives a working PostgreSQL 15 server."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

pytestmark = pytest.mark.postgres


def test_select_one(postgres_url):
    assert postgres_url.startswith("postgresql+psycopg://postgres@127.0.0.1:")
    engine = sa.create_engine(postgres_url)
    try:
        with engine.connect() as conn:
            assert conn.execute(sa.text("select 1")).scalar_one() == 1
            version = conn.execute(sa.text("show server_version_num")).scalar_one()
            assert version.startswith("15")
    finally:
        engine.dispose()
