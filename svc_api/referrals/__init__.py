"""Referrals: inviters, commissions on referees' purchases, redeeming commission as credits."""
