"""Exchange accounts: one interface (paper exchange, Binance spot adapter), linking, login by exchange
identity, balances, previewed and confirmed OCO spot orders, the order reconciler."""
