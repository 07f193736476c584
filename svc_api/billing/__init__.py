"""Plans and payments: card-store webhooks, USDT transfers, in-app purchases, refunds, plan expiry."""
