"""Billing: plan purchases applied once (plan time and the inviter's commission) and their refunds."""
