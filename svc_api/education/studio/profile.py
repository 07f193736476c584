"""The payout profile's rules: each broken rule is a 400 that names it.

- ``country``: ISO 3166-1 alpha-2; ``TR`` is Turkey-based, any other country international.
- ``legal_entity``: ``individual`` with a tax or ID number of 11 digits, or ``company`` with 10.
- ``bank_account``: an IBAN (letters and digits, checked with its ISO 13616 mod-97 checksum) or, for
  countries without IBANs, 6-34 digits; Turkey-based sellers give a ``TR`` IBAN.
- international sellers add ``swift_bic`` (8 or 11 characters: bank, country, location, branch) and
  ``payout_currency`` (ISO 4217);
- Turkey-based sellers add ``e_document_type``: ``e_invoice``, ``e_archive`` or
  ``self_employment_receipt`` (ours: the three documents a Turkish seller issues).

Example:
    >>> check({"country": "DE", "legal_entity": "company", "tax_id": "1234567890",
    ...        "bank_account": "DE89370400440532013000", "swift_bic": "DEUTDEFF500",
    ...        "payout_currency": "EUR"})["bank_account"]
    'DE89370400440532013000'
    >>> iban_ok("DE89370400440532013000"), iban_ok("DE89370400440532013001")
    (True, False)
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from svc_api.core.errors import Invalid

E_DOCUMENT_TYPES = ("e_invoice", "e_archive", "self_employment_receipt")
TAX_DIGITS = {"individual": 11, "company": 10}
FIELDS = (
    "country",
    "legal_entity",
    "tax_id",
    "bank_account",
    "swift_bic",
    "payout_currency",
    "e_document_type",
)
_COUNTRY = re.compile(r"[A-Z]{2}")
_CURRENCY = re.compile(r"[A-Z]{3}")
_IBAN = re.compile(r"[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}")
_ACCOUNT = re.compile(r"[0-9]{6,34}")
_BIC = re.compile(r"[A-Z]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?")


def iban_ok(iban: str) -> bool:
    """Whether an IBAN's check digits are right (ISO 13616: the rearranged number mod 97 is 1)."""
    if not _IBAN.fullmatch(iban):
        return False
    moved = iban[4:] + iban[:4]
    return int("".join(str(int(ch, 36)) for ch in moved)) % 97 == 1


def _text(body: Mapping[str, Any], name: str) -> str:
    value = body.get(name)
    if not isinstance(value, str) or not value.strip():
        raise Invalid(f"{name} is required")
    return value.strip().replace(" ", "").upper() if name != "legal_entity" else value.strip()


def check(body: Mapping[str, Any]) -> dict[str, Any]:
    """The normalised profile, or a 400 naming the first broken rule (see the module docstring)."""
    if not isinstance(body, Mapping):
        raise Invalid("payout_profile must be an object")
    unknown = sorted(set(body) - set(FIELDS))
    if unknown:
        raise Invalid(f"unknown payout profile field {unknown[0]!r}")
    country = _text(body, "country")
    if not _COUNTRY.fullmatch(country):
        raise Invalid("country must be an ISO 3166-1 alpha-2 code such as TR or DE")
    entity = _text(body, "legal_entity")
    if entity not in TAX_DIGITS:
        raise Invalid("legal_entity must be individual or company")
    tax_id, digits = _text(body, "tax_id"), TAX_DIGITS[entity]
    if not (tax_id.isdigit() and len(tax_id) == digits):
        raise Invalid(
            f"tax_id of an {entity} must be {digits} digits"
            if entity == "individual"
            else f"tax_id of a company must be {digits} digits"
        )
    account = _text(body, "bank_account")
    if account[:2].isalpha():
        if not iban_ok(account):
            raise Invalid("bank_account is not a valid IBAN (its check digits do not match)")
    elif country == "TR" or not _ACCOUNT.fullmatch(account):
        raise Invalid("bank_account must be an IBAN, or 6-34 digits where the country has no IBANs")
    if country == "TR" and not account.startswith("TR"):
        raise Invalid("bank_account of a Turkey-based seller must be a TR IBAN")
    profile: dict[str, Any] = {
        "country": country,
        "legal_entity": entity,
        "tax_id": tax_id,
        "bank_account": account,
        "swift_bic": None,
        "payout_currency": None,
        "e_document_type": None,
    }
    if country == "TR":
        kind = body.get("e_document_type")
        if kind not in E_DOCUMENT_TYPES:
            raise Invalid(
                f"e_document_type is required for a Turkey-based seller: one of {', '.join(E_DOCUMENT_TYPES)}"
            )
        profile["e_document_type"] = kind
        profile["payout_currency"] = "TRY"
        return profile
    bic = _text(body, "swift_bic")
    if not _BIC.fullmatch(bic):
        raise Invalid("swift_bic must be 8 or 11 characters: bank (4 letters), country, location, branch")
    currency = _text(body, "payout_currency")
    if not _CURRENCY.fullmatch(currency):
        raise Invalid("payout_currency must be an ISO 4217 code such as USD or EUR")
    profile["swift_bic"], profile["payout_currency"] = bic, currency
    return profile
