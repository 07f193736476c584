"""``svc admin exchange ...``: paper-exchange accounts for trying orders without real money, and the
rotation of the key that encrypts stored exchange credentials.

Example:
    >>> from click.testing import CliRunner
    >>> "paper-account" in CliRunner().invoke(exchange, ["--help"]).output
    True
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

import click

from svc_api.cli.admin import _run
from svc_api.core.services import Services
from svc_api.exchange import service as exchange_service


def _amount(value: str) -> Decimal:
    try:
        amount = Decimal(value)
    except InvalidOperation:
        raise click.BadParameter(f"{value!r} is not a number") from None
    if not amount.is_finite() or amount < 0:
        raise click.BadParameter(f"{value!r} must be a number >= 0")
    return amount


def _balances(pairs: tuple[str, ...]) -> dict[str, Decimal]:
    out: dict[str, Decimal] = {}
    for pair in pairs:
        asset, sep, amount = pair.partition("=")
        if not sep or not asset.isalnum():
            raise click.BadParameter(f"{pair!r}: give ASSET=AMOUNT, such as BTC=0.5")
        out[asset.upper()] = _amount(amount)
    return out


@click.group("exchange")
def exchange() -> None:
    """Paper-exchange accounts and the encryption of exchange credentials."""


@exchange.command("paper-account")
@click.option("--balance", "balances", multiple=True, help="ASSET=AMOUNT of spot balance (repeatable).")
@click.option(
    "--whitelist",
    default=None,
    help="Comma-separated IPs the key is restricted to (default: ORDER_PROXY_IP).",
)
@click.option("--unrestricted", is_flag=True, help="A key with no IP restriction.")
@click.option("--no-spot", is_flag=True, help="A key that may not trade spot.")
def paper_account(
    balances: tuple[str, ...], whitelist: str | None, unrestricted: bool, no_spot: bool
) -> None:
    """Open a paper-exchange account with one API key (the secret is printed once)."""
    funds = _balances(balances)

    def work(services: Services) -> dict[str, Any]:
        ips = None if unrestricted else tuple((whitelist or services.settings.order_proxy_ip).split(","))
        now = services.clock.now()
        return exchange_service.create_account(
            services.store, balances=funds, ip_whitelist=ips, can_trade_spot=not no_spot, now=now
        )

    _run(work)


@exchange.command("fund")
@click.argument("account_id")
@click.argument("balance")
@click.option("--wallet", type=click.Choice(["spot", "futures", "funding"]), default="spot")
def fund(account_id: str, balance: str, wallet: str) -> None:
    """Set a balance (ASSET=AMOUNT) of a paper account."""
    [(asset, amount)] = _balances((balance,)).items()

    def work(services: Services) -> dict[str, Any]:
        exchange_service.fund(services.store, account_id, asset, amount, wallet=wallet)
        return {"account_id": account_id, "wallet": wallet, "asset": asset, "free": str(amount)}

    _run(work)


@exchange.command("deposit")
@click.argument("account_id")
@click.argument("tx_id")
@click.argument("balance")
@click.option("--payer", default=None, help="The sender's exchange account ID.")
@click.option("--note", default="", help="The transfer's note (a payment puts the svc_id here).")
def deposit(account_id: str, tx_id: str, balance: str, payer: str | None, note: str) -> None:
    """Record an incoming transfer (ASSET=AMOUNT) into a paper account, once per TX_ID."""
    [(asset, amount)] = _balances((balance,)).items()

    def work(services: Services) -> dict[str, Any]:
        now = services.clock.now()
        added = exchange_service.deposit(
            services.store, account_id, tx_id, asset, amount, payer=payer, note=note, now=now
        )
        return {"tx_id": tx_id, "added": added}

    _run(work)


@exchange.command("rotate-key")
def rotate_key() -> None:
    """Re-encrypt every stored exchange key and secret with a new encryption key."""
    _run(exchange_service.rotate_keys)
