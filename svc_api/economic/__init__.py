"""Economic data: news and calendar, ingested from real feeds, deduplicated by source id."""
