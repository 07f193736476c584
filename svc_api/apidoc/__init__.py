"""The API description (``svc_api/openapi.yaml``), generated from the operation tables and models.

Example:
    >>> from svc_api.apidoc.build import document
    >>> document()["info"]["title"]
    'svc trading platform API'
"""
