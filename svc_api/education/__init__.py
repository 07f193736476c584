"""The education marketplace, a sub-app mounted at ``/education/v1``."""
