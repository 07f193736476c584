"""Tables of the marketplace: listings, subscriptions with their coin bindings, reviews.

Example:
    >>> sorted(t.name for t in TABLES)
    ['marketplace_bindings', 'marketplace_listings', 'marketplace_reviews', 'marketplace_subscriptions']
"""

from __future__ import annotations

import sqlalchemy as sa

from svc_api.core.tables import metadata

marketplace_listings = sa.Table(
    "marketplace_listings",
    metadata,
    sa.Column("listing_id", sa.String(40), primary_key=True),
    sa.Column("svc_id", sa.String(6), sa.ForeignKey("accounts.svc_id"), nullable=False),
    sa.Column("strategy_key", sa.String(20), nullable=False),
    # "<svc_id>:<strategy_key>" while active, NULL once removed: one active listing per strategy.
    sa.Column("active_key", sa.String(32), nullable=True, unique=True),
    sa.Column("strategy_name", sa.String(32), nullable=False),
    sa.Column("market_type", sa.String(8), nullable=False),
    sa.Column("timeframe", sa.String(8), nullable=False),
    sa.Column("signal_mode", sa.String(16), nullable=False),
    sa.Column("listed_coins", sa.Text, nullable=False),
    sa.Column("rejected_coins", sa.Text, nullable=False),
    sa.Column("backtest_summary", sa.Text, nullable=False),
    sa.Column("description", sa.String(500), nullable=False, server_default=""),
    sa.Column("monthly_price_units", sa.BigInteger, nullable=False),
    sa.Column("leverage", sa.Integer, nullable=False, server_default="1"),
    sa.Column("total_pnl_pct", sa.Float, nullable=False, server_default="0"),
    sa.Column("win_rate_pct", sa.Float, nullable=False, server_default="0"),
    sa.Column("status", sa.String(8), nullable=False),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.Column("updated_at", sa.BigInteger, nullable=False),
    sa.Index("ix_marketplace_listings_owner", "svc_id", "created_at"),
    sa.Index("ix_marketplace_listings_browse", "status", "created_at"),
)

marketplace_subscriptions = sa.Table(
    "marketplace_subscriptions",
    metadata,
    sa.Column("subscription_id", sa.String(40), primary_key=True),
    sa.Column("listing_id", sa.String(40), sa.ForeignKey("marketplace_listings.listing_id"), nullable=False),
    sa.Column("svc_id", sa.String(6), sa.ForeignKey("accounts.svc_id"), nullable=False),
    sa.Column("creator_svc_id", sa.String(6), nullable=False),
    sa.Column("selected_coins", sa.Text, nullable=False),
    sa.Column("status", sa.String(12), nullable=False),  # active | cancelled | lapsed
    sa.Column("monthly_price_units", sa.BigInteger, nullable=False),
    sa.Column("periods_charged", sa.Integer, nullable=False, server_default="0"),
    sa.Column("signals_received", sa.Integer, nullable=False, server_default="0"),
    sa.Column("credits_spent_units", sa.BigInteger, nullable=False, server_default="0"),
    sa.Column("creator_units", sa.BigInteger, nullable=False, server_default="0"),  # the creator's share
    sa.Column("next_charge_at", sa.BigInteger, nullable=False),
    sa.Column("expires_at", sa.BigInteger, nullable=False),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.Column("updated_at", sa.BigInteger, nullable=False),
    sa.Index("ix_marketplace_subscriptions_user", "svc_id", "created_at"),
    sa.Index("ix_marketplace_subscriptions_due", "status", "next_charge_at"),
    sa.Index("ix_marketplace_subscriptions_listing", "listing_id", "status"),
)

marketplace_bindings = sa.Table(
    "marketplace_bindings",
    metadata,
    sa.Column(
        "subscription_id",
        sa.String(40),
        sa.ForeignKey("marketplace_subscriptions.subscription_id"),
        primary_key=True,
    ),
    sa.Column("coin", sa.String(30), primary_key=True),
    sa.Column("listing_id", sa.String(40), nullable=False),
    sa.Column("svc_id", sa.String(6), nullable=False),
    sa.Index("ix_marketplace_bindings_coin", "listing_id", "coin"),
)

marketplace_reviews = sa.Table(
    "marketplace_reviews",
    metadata,
    sa.Column("review_id", sa.String(40), primary_key=True),
    sa.Column("listing_id", sa.String(40), sa.ForeignKey("marketplace_listings.listing_id"), nullable=False),
    sa.Column("rating", sa.Integer, nullable=False),
    sa.Column("comment", sa.String(500), nullable=False, server_default=""),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.Index("ix_marketplace_reviews_listing", "listing_id", "created_at"),
)

TABLES = (marketplace_listings, marketplace_subscriptions, marketplace_bindings, marketplace_reviews)
