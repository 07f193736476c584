"""Every table of the education marketplace, from the subdomain that owns it: catalog, commerce,
learning, studio, payouts and uploads (each subdomain's ``tables.py``). Importing this module
registers them all in the metadata.

Example:
    >>> sorted(t.name for t in TABLES)[:3]
    ['edu_answers', 'edu_bundle_items', 'edu_bundles']
"""

from __future__ import annotations

from svc_api.education.catalog import tables as catalog
from svc_api.education.commerce import tables as commerce
from svc_api.education.learning import tables as learning
from svc_api.education.payouts import tables as payouts
from svc_api.education.studio import tables as studio
from svc_api.education.uploads import tables as uploads

TABLES = (
    *catalog.TABLES,
    *commerce.TABLES,
    *learning.TABLES,
    *studio.TABLES,
    payouts.payouts,
    payouts.payout_statements,
    payouts.payables,
    payouts.fx_rates,
    uploads.uploads,
    uploads.upload_parts,
)
