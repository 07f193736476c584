"""The strategy marketplace: listings, subscriptions and their renewals, reviews."""
