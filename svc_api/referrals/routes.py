"""Referral operations on ``/user``: ``set_inviter``, ``referral_list``, ``referral_redeem``.

Example:
    >>> sorted(USER)
    ['referral_list', 'referral_redeem', 'set_inviter']
"""

from __future__ import annotations

from typing import Any

from svc_api.core.contract import NoFields
from svc_api.core.dispatch import Call, Operation, Reply
from svc_api.referrals import contract as c
from svc_api.referrals import service as referrals


def _set_inviter(call: Call, req: c.SetInviter) -> Reply:
    result = referrals.name_inviter(call.store, call.svc_id, req.inviter_id, now=call.now)
    return Reply(result, timestamp=call.now)


def _list(call: Call, req: NoFields) -> dict[str, Any]:
    return referrals.referrals(call.store, call.svc_id, now=call.now)


def _redeem(call: Call, req: c.ReferralRedeem) -> dict[str, Any]:
    return referrals.redeem_commission(call.store, call.svc_id, req.amount, now=call.now)


USER: dict[str, Operation] = {
    "set_inviter": Operation(
        _set_inviter,
        request=c.SetInviter,
        reply=c.InviterSet,
        summary="Name the account that invited the caller (once, soon after registering).",
        errors=c.SET_INVITER_ERRORS,
    ),
    "referral_list": Operation(
        _list,
        request=NoFields,
        reply=c.ReferralList,
        summary="The accounts that named the caller as inviter, newest first.",
    ),
    "referral_redeem": Operation(
        _redeem,
        request=c.ReferralRedeem,
        reply=c.ReferralRedeemed,
        summary="Turn available referral commission into credits.",
        errors=c.REDEEM_ERRORS,
    ),
}
