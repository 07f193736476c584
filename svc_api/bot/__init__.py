"""The messenger bot: account handoff, account and plan, keys, signal preferences and delivery,
manually confirmed orders, on python-telegram-bot (see docs/bot.md)."""
