"""``/user`` credits operations: the caller's ledger, newest first.

Example:
    >>> sorted(USER)
    ['credits_history']
"""

from __future__ import annotations

from typing import Any

from svc_api.core.dispatch import Call, Operation
from svc_api.core.fields import position_int
from svc_api.credits import contract as c
from svc_api.credits import service as credits


def _credits_history(call: Call, req: c.CreditsHistory) -> dict[str, Any]:
    position = call.cursor("credits_history")
    before = None if position is None else position_int(position, "s")
    page, more = credits.history_page(call.store, call.svc_id, limit=req.limit, before_seq=before)
    last = {"s": page[-1]["seq"]} if more else None
    for entry in page:
        del entry["seq"]
    return call.user_page("credits_history", "transactions", page, more, last)


USER: dict[str, Operation] = {
    "credits_history": Operation(
        _credits_history,
        inline=True,
        request=c.CreditsHistory,
        reply=c.CreditsHistoryPage,
        summary="The caller's credits ledger, newest first.",
    ),
}
