"""Tables of the community: chat, leaders and their applications, follows, posts with their likes,
comments and reports. Times are integer Unix seconds.

Example:
    >>> sorted(t.name for t in TABLES)[:3]
    ['community_applications', 'community_chat', 'community_comments']
"""

from __future__ import annotations

import sqlalchemy as sa

from svc_api.core.tables import metadata

chat = sa.Table(
    "community_chat",
    metadata,
    sa.Column("channel", sa.String(16), primary_key=True),
    sa.Column("sort_key", sa.String(40), primary_key=True),
    sa.Column("msg_id", sa.String(24), nullable=False),
    sa.Column("svc_id", sa.String(6), sa.ForeignKey("accounts.svc_id"), nullable=False),
    sa.Column("message", sa.String(500), nullable=False),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.Column("deleted_by", sa.String(16), nullable=True),
    sa.Index("ix_community_chat_recent", "channel", "created_at", "msg_id"),
)

applications = sa.Table(
    "community_applications",
    metadata,
    sa.Column("application_id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("svc_id", sa.String(6), sa.ForeignKey("accounts.svc_id"), nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("display_name", sa.String(30), nullable=False),
    sa.Column("nickname", sa.String(30), nullable=False),
    sa.Column("reason", sa.String(1000), nullable=False),
    sa.Column("experience", sa.String(2000), nullable=False),
    sa.Column("twitter", sa.String(100), nullable=False, server_default=""),
    sa.Column("instagram", sa.String(100), nullable=False, server_default=""),
    sa.Column("youtube", sa.String(100), nullable=False, server_default=""),
    sa.Column("telegram", sa.String(100), nullable=False, server_default=""),
    sa.Column("applied_at", sa.BigInteger, nullable=False),
    sa.Column("updated_at", sa.BigInteger, nullable=False),
    sa.Column("decided_at", sa.BigInteger, nullable=True),
    sa.Index("ix_community_applications_user", "svc_id", "application_id"),
    sa.Index("ix_community_applications_status", "status", "application_id"),
)

nicknames = sa.Table(
    "community_nicknames",
    metadata,
    sa.Column("nickname", sa.String(30), primary_key=True),
    sa.Column("svc_id", sa.String(6), sa.ForeignKey("accounts.svc_id"), nullable=False, unique=True),
)

leaders = sa.Table(
    "community_leaders",
    metadata,
    sa.Column("svc_id", sa.String(6), sa.ForeignKey("accounts.svc_id"), primary_key=True),
    sa.Column("display_name", sa.String(30), nullable=False),
    sa.Column("nickname", sa.String(30), nullable=False),
    sa.Column("bio", sa.String(500), nullable=False, server_default=""),
    sa.Column("avatar_url", sa.String(2048), nullable=False, server_default=""),
    sa.Column("approved_at", sa.BigInteger, nullable=False),
    sa.Index("ix_community_leaders_recent", "approved_at", "svc_id"),
)

follows = sa.Table(
    "community_follows",
    metadata,
    sa.Column("leader_id", sa.String(6), sa.ForeignKey("accounts.svc_id"), primary_key=True),
    sa.Column("follower_id", sa.String(6), sa.ForeignKey("accounts.svc_id"), primary_key=True),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.Index("ix_community_follows_follower", "follower_id", "leader_id"),
)

posts = sa.Table(
    "community_posts",
    metadata,
    sa.Column("post_id", sa.String(24), primary_key=True),
    sa.Column("author_id", sa.String(6), sa.ForeignKey("accounts.svc_id"), nullable=False),
    sa.Column("title", sa.String(200), nullable=False, server_default=""),
    sa.Column("content", sa.Text, nullable=False),
    sa.Column("image_url", sa.String(2048), nullable=False, server_default=""),
    sa.Column("like_count", sa.Integer, nullable=False, server_default="0"),
    sa.Column("comment_count", sa.Integer, nullable=False, server_default="0"),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.Column("hidden_at", sa.BigInteger, nullable=True),
    sa.Column("delete_after", sa.BigInteger, nullable=True),
    sa.Index("ix_community_posts_feed", "hidden_at", "created_at", "post_id"),
    sa.Index("ix_community_posts_purge", "delete_after"),
)

likes = sa.Table(
    "community_likes",
    metadata,
    sa.Column("post_id", sa.String(24), sa.ForeignKey("community_posts.post_id"), primary_key=True),
    sa.Column("svc_id", sa.String(6), sa.ForeignKey("accounts.svc_id"), primary_key=True),
    sa.Column("created_at", sa.BigInteger, nullable=False),
)

comments = sa.Table(
    "community_comments",
    metadata,
    sa.Column("comment_id", sa.String(24), primary_key=True),
    sa.Column("post_id", sa.String(24), sa.ForeignKey("community_posts.post_id"), nullable=False, index=True),
    sa.Column("svc_id", sa.String(6), sa.ForeignKey("accounts.svc_id"), nullable=False),
    sa.Column("comment", sa.String(300), nullable=False),
    sa.Column("created_at", sa.BigInteger, nullable=False),
)

reports = sa.Table(
    "community_reports",
    metadata,
    sa.Column("report_id", sa.String(24), primary_key=True),
    sa.Column("reporter_id", sa.String(6), sa.ForeignKey("accounts.svc_id"), nullable=False),
    sa.Column("post_id", sa.String(24), nullable=True, index=True),
    sa.Column("channel", sa.String(16), nullable=True),
    sa.Column("sort_key", sa.String(40), nullable=True),
    sa.Column("reason", sa.String(500), nullable=False, server_default=""),
    sa.Column("created_at", sa.BigInteger, nullable=False, index=True),
)

TABLES = (chat, applications, nicknames, leaders, follows, posts, likes, comments, reports)
