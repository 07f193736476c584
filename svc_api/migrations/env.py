"""Alembic environment: runs revisions on the connection :func:`svc_api.migrations.migrate` passes in
(``config.attributes["connection"]``), inside the caller's transaction."""

from __future__ import annotations

from alembic import context

from svc_api.migrations import include_object
from svc_api.schema import load_all

connection = context.config.attributes["connection"]
context.configure(
    connection=connection,
    target_metadata=load_all(),
    render_as_batch=connection.dialect.name == "sqlite",
    compare_type=True,
    include_object=include_object,
)
with context.begin_transaction():
    context.run_migrations()
