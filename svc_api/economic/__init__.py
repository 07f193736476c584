"""Economic data: news feeds and an economic calendar, ingested from files or URLs and read by
the ``/user`` operations ``economic_news`` and ``economic_calendar`` (see docs/api.md)."""
