"""Economic data domain: news and calendar (work in progress)."""
