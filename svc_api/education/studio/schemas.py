"""The JSON Schemas of the pieces several studio bodies share (a title, a price, a lesson of the
curriculum, the payout profile), as the description shows them; the rules that enforce them are the
models' own (:mod:`~svc_api.education.studio.contract`).

Example:
    >>> PRICE_IN["required"]
    ['amount_minor', 'currency']
"""

from __future__ import annotations

from typing import Any

JsonDict = dict[str, Any]

TITLE: JsonDict = {
    "type": "string",
    "minLength": 3,
    "maxLength": 160,
    "description": "3-160 characters once trimmed.",
}
PRICE_IN: JsonDict = {
    "type": "object",
    "additionalProperties": False,
    "required": ["amount_minor", "currency"],
    "description": "Minor units; `currency` must be the catalog's (`EDU_CURRENCY`, 400 otherwise).",
    "properties": {
        "amount_minor": {"type": "integer", "minimum": 0, "maximum": 10**12},
        "currency": {"type": "string", "pattern": "^[A-Z]{3}$"},
    },
}
_LESSON_COMMON: JsonDict = {
    "lesson_id": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,40}$", "description": "Unique in the tree."},
    "title": {
        "type": "string",
        "minLength": 1,
        "maxLength": 160,
        "description": "1-160 characters once trimmed.",
    },
    "preview": {"type": "boolean", "description": "Playable before buying (default false)."},
}
LESSON_IN: JsonDict = {
    "description": "`video` and `pdf` lessons name an `upload_id`: a processed upload of the caller of that"
    " kind (the video's duration and the PDF's page count come from it); an `article` gives its `pages`.",
    "oneOf": [
        {
            "type": "object",
            "additionalProperties": False,
            "required": ["lesson_id", "title", "kind", "upload_id"],
            "properties": {
                **_LESSON_COMMON,
                "kind": {"enum": ["video", "pdf"]},
                "upload_id": {
                    "type": "string",
                    "description": "A processed upload of the caller, of the lesson's kind.",
                },
            },
        },
        {
            "type": "object",
            "additionalProperties": False,
            "required": ["lesson_id", "title", "kind", "pages"],
            "properties": {
                **_LESSON_COMMON,
                "kind": {"enum": ["article"]},
                "pages": {"type": "integer", "minimum": 1, "maximum": 10_000},
            },
        },
    ],
}
PAYOUT_PROFILE: JsonDict = {
    "type": "object",
    "additionalProperties": False,
    "required": ["country", "legal_entity", "tax_id", "bank_account"],
    "description": "`country` ISO 3166-1 alpha-2 (`TR` is Turkey-based, any other international);"
    " `legal_entity` `individual` (`tax_id` of 11 digits) or `company` (10 digits); `bank_account` an IBAN"
    " with valid check digits (a `TR` IBAN for Turkey-based sellers) or 6-34 digits where the country has"
    " no IBANs; international sellers add `swift_bic` (8 or 11 characters) and `payout_currency` (ISO"
    " 4217); Turkey-based sellers add `e_document_type`. Text is trimmed, spaces dropped and letters"
    " upper-cased before the checks. Each broken rule is a 400 naming it.",
    "properties": {
        "country": {"type": "string", "minLength": 1, "description": "ISO 3166-1 alpha-2."},
        "legal_entity": {"enum": ["individual", "company"]},
        "tax_id": {
            "type": "string",
            "minLength": 1,
            "description": "11 digits (individual) or 10 (company).",
        },
        "bank_account": {"type": "string", "minLength": 1},
        "swift_bic": {"type": "string", "description": "International sellers only (ignored for TR)."},
        "payout_currency": {
            "type": "string",
            "description": "International sellers only (TR is paid in TRY).",
        },
        "e_document_type": {
            "enum": ["e_invoice", "e_archive", "self_employment_receipt"],
            "description": "Turkey-based sellers only.",
        },
    },
}
