"""Referral operations on ``/user``: ``set_inviter``, ``referral_list``, ``referral_redeem``.

Example:
    >>> sorted(USER)
    ['referral_list', 'referral_redeem', 'set_inviter']
"""

from __future__ import annotations

from typing import Any

from svc_api.core.dispatch import Call, Operation, Reply
from svc_api.referrals import service as referrals


def _set_inviter(call: Call) -> Reply:
    result = referrals.name_inviter(call.store, call.svc_id, call.params.get("inviter_id"), now=call.now)
    return Reply(result, timestamp=call.now)


def _list(call: Call) -> dict[str, Any]:
    return referrals.referrals(call.store, call.svc_id, now=call.now)


def _redeem(call: Call) -> dict[str, Any]:
    p = call.params
    return referrals.redeem_commission(
        call.store, call.svc_id, p.get("redeem_type"), p.get("amount"), now=call.now
    )


USER: dict[str, Operation] = {
    "set_inviter": Operation(_set_inviter),
    "referral_list": Operation(_list),
    "referral_redeem": Operation(_redeem),
}
