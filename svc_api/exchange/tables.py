"""Tables of the exchange domain: linked exchange accounts (keys encrypted at rest), orders by
idempotency key, and the paper exchange's own books (keys, balances, order lists, transfers).

Example:
    >>> sorted(t.name for t in TABLES)[:3]
    ['exchange_links', 'exchange_orders', 'paper_balances']
"""

from __future__ import annotations

import sqlalchemy as sa

from svc_api.core.tables import metadata

links = sa.Table(
    "exchange_links",
    metadata,
    sa.Column("svc_id", sa.String(6), sa.ForeignKey("accounts.svc_id"), primary_key=True),
    sa.Column("exchange", sa.String(16), nullable=False),
    sa.Column("account_id", sa.String(64), nullable=False),
    sa.Column("key_digest", sa.String(64), nullable=False),
    sa.Column("api_key_enc", sa.Text, nullable=False),
    sa.Column("api_secret_enc", sa.Text, nullable=False),
    sa.Column("linked_at", sa.BigInteger, nullable=False),
    sa.UniqueConstraint("exchange", "account_id", name="uq_exchange_links_account"),
)

orders = sa.Table(
    "exchange_orders",
    metadata,
    sa.Column("svc_id", sa.String(6), sa.ForeignKey("accounts.svc_id"), primary_key=True),
    sa.Column("idempotency_key", sa.String(128), primary_key=True),
    sa.Column("order_history_id", sa.String(32), nullable=False, unique=True),
    sa.Column("fingerprint", sa.String(64), nullable=False),
    sa.Column("client_order_id", sa.String(36), nullable=False),
    sa.Column("exchange", sa.String(16), nullable=False),
    sa.Column("symbol", sa.String(32), nullable=False),
    sa.Column("coin", sa.String(24), nullable=False),
    sa.Column("strategy_name", sa.String(64), nullable=False, server_default=""),
    sa.Column("order_source", sa.String(16), nullable=False),
    sa.Column("signal_position_key", sa.String(80), nullable=False, server_default=""),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("exchange_status", sa.String(16), nullable=False),
    sa.Column("order_list_id", sa.String(40), nullable=False, server_default=""),
    sa.Column("result", sa.Text, nullable=False, server_default=""),
    sa.Column("message", sa.String(500), nullable=False, server_default=""),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.Column("updated_at", sa.BigInteger, nullable=False),
    sa.Index("ix_exchange_orders_history", "svc_id", "created_at", "order_history_id"),
    sa.Index("ix_exchange_orders_open", "state", "exchange_status", "updated_at"),
)

paper_keys = sa.Table(
    "paper_keys",
    metadata,
    sa.Column("api_key", sa.String(64), primary_key=True),
    sa.Column("secret_digest", sa.String(64), nullable=False),
    sa.Column("account_id", sa.String(32), nullable=False, index=True),
    sa.Column("can_trade_spot", sa.Boolean, nullable=False),
    sa.Column("ip_whitelist", sa.String(500), nullable=True),
    sa.Column("created_at", sa.BigInteger, nullable=False),
)

paper_balances = sa.Table(
    "paper_balances",
    metadata,
    sa.Column("account_id", sa.String(32), primary_key=True),
    sa.Column("wallet", sa.String(8), primary_key=True),
    sa.Column("asset", sa.String(16), primary_key=True),
    sa.Column("free", sa.Numeric(28, 10), nullable=False),
    sa.Column("locked", sa.Numeric(28, 10), nullable=False, server_default="0"),
)

paper_orders = sa.Table(
    "paper_order_lists",
    metadata,
    sa.Column("order_list_id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("account_id", sa.String(32), nullable=False),
    sa.Column("client_order_id", sa.String(36), nullable=False),
    sa.Column("symbol", sa.String(32), nullable=False),
    sa.Column("side", sa.String(4), nullable=False),
    sa.Column("quantity", sa.Numeric(28, 10), nullable=False),
    sa.Column("take_profit_price", sa.Numeric(28, 10), nullable=False),
    sa.Column("stop_price", sa.Numeric(28, 10), nullable=False),
    sa.Column("stop_limit_price", sa.Numeric(28, 10), nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("filled_leg", sa.String(16), nullable=True),
    sa.Column("placed_ms", sa.BigInteger, nullable=False),
    sa.Column("checked_ms", sa.BigInteger, nullable=False),
    sa.UniqueConstraint("account_id", "client_order_id", name="uq_paper_order_lists_client"),
    sa.Index("ix_paper_order_lists_open", "status", "symbol"),
)

paper_transfers = sa.Table(
    "paper_transfers",
    metadata,
    sa.Column("tx_id", sa.String(64), primary_key=True),
    sa.Column("account_id", sa.String(32), nullable=False, index=True),
    sa.Column("asset", sa.String(16), nullable=False),
    sa.Column("amount", sa.Numeric(28, 10), nullable=False),
    sa.Column("payer", sa.String(32), nullable=True),
    sa.Column("note", sa.String(200), nullable=False, server_default=""),
    sa.Column("time", sa.BigInteger, nullable=False),
)

TABLES = (links, orders, paper_keys, paper_balances, paper_orders, paper_transfers)
