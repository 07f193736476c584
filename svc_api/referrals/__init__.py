"""Referrals: an account's inviter, the commissions earned on referees' purchases, their redemption."""
