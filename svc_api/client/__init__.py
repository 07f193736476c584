"""The typed Python client of the service: ``Client`` has one method per operation of the route
families, taking the operation's fields as keyword arguments and returning its reply model;
a failure raises :class:`ApiFailure` with the service's status and error body.

Example:
    >>> client = Client("http://127.0.0.1:8000")
    >>> callable(client.login)
    True
"""

from svc_api.client.backtest import BacktestOperations
from svc_api.client.base import UNSET, ApiFailure, BaseClient
from svc_api.client.tradingdata import TradingdataOperations
from svc_api.client.user import UserOperations


class Client(UserOperations, BacktestOperations, TradingdataOperations):
    """A client of the service: every operation of the three families (see :class:`BaseClient`)."""


__all__ = ["UNSET", "ApiFailure", "BaseClient", "Client"]
