"""Personal data in a database's columns: never a question's label, filter or answer.

A column holds personal data when its name says so (in English or German: `password`,
`kundenpasswort`, `email_adresse`, `telefon`, `login_name`, `ssn`, `strasse`) or when its values
do: most are e-mail addresses, phone numbers, street addresses, hex digests or password hashes, or
national id numbers (`123-45-6789`). Such a column takes no role in a SQL template (so no question names it, filters
by it or answers with it); the `sql` stage lists each one by kind, and the dataset card says they
are present in the tables.
"""

from __future__ import annotations

import re
import unicodedata
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow as pa

MIN_SHARE = 0.8  # share of a column's distinct values that must look like one kind
SAMPLE = 200  # distinct values looked at per column

# name fragments, folded (no accents, letters and digits only), per kind; a fragment inside a
# compound counts (`kundenpasswort`), so each is long or specific enough not to occur by chance
_NAME_PARTS: dict[str, tuple[str, ...]] = {
    "password": ("password", "passwort", "kennwort", "passwd", "pwd"),
    "hash": ("hash", "secret", "apitoken", "authtoken"),
    "e-mail": ("email", "mailadresse", "mailaddress"),
    "phone": ("phone", "telefon", "telephone", "handynummer", "mobilnummer", "mobilephone", "faxnummer",
              "faxnumber", "cellphone"),
    "login": ("login", "username", "benutzername", "nutzername", "userid", "accountname", "anmeldename"),
    "national id": ("ssn", "socialsecurity", "sozialversicherung", "nationalid", "passport", "reisepass",
                    "ausweis", "taxid", "steuerid", "steuernummer"),
    "card or account number": ("iban", "creditcard", "kreditkarte", "cardnumber", "kartennummer", "kontonummer",
                               "accountnumber", "bankaccount"),
}
_ADDRESS_NAMES = ("address", "adresse", "anschrift", "strasse", "street")
_WHOLE_NAMES = {"ssn": "national id", "pin": "password", "fax": "phone", "tel": "phone", "mobile": "phone",
                "handy": "phone", "mail": "e-mail", "user": "login", "nin": "national id"}
_EMAIL = re.compile(r"^[\w.+%-]+@[\w-]+(\.[\w-]+)+$")
_PHONE = re.compile(r"^\+?[\d(][\d\s().\-/]{5,}\d(\s*(x|ext\.?)\s*\d+)?$", re.I)
_HEX = re.compile(r"^[0-9a-f]{8,}$", re.I)
_CRYPT = re.compile(r"^\$\d[a-z]?\$|^[A-Za-z0-9+/]{20,}={0,2}$")
_NATIONAL_ID = re.compile(r"^\d{3}-\d{2}-\d{4}$")
_STREET = re.compile(r"^\d{1,6}[A-Za-z]? +[A-Z][\w'.-]*( +[\w'.-]+){1,5}$")  # "3720 Vito View Apt. 148"
_DATE = re.compile(r"^\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|^\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4}$")
# a date written out ("18 May 2007", "1. März 2001"): a number, a month, a year, no street
_WRITTEN_DATE = re.compile(r"^\d{1,2}\.? +(jan|feb|m[aä]r|apr|ma[iy]|jun|jul|aug|sep|o[ck]t|nov|de[cz])[a-zä]*\.? +\d{2,4}$",
                           re.I)


def _street(value: str) -> bool:
    """A street line ("3720 Vito View Apt. 148"), alone or as the first line of a postal address
    ("465 Emely Bypass\nWest Mafalda, CO 23309"), and not a date written out."""
    first_line = value.splitlines()[0].strip()
    return bool(_STREET.match(first_line)) and not _WRITTEN_DATE.match(first_line)


def _phone(value: str) -> bool:
    """Digits with a phone's punctuation: a leading + or (, an extension, or two separators."""
    if not _PHONE.match(value) or _DATE.match(value) or sum(c.isdigit() for c in value) < 7:
        return False
    groups = len(re.findall(r"[\s().\-/]+", value.strip("+(")))
    return value[:1] in "+(" or bool(re.search(r"(x|ext\.?)\s*\d+$", value, re.I)) or groups >= 2


def _fold(name: str) -> str:
    text = "".join(ch for ch in unicodedata.normalize("NFKD", name.lower()) if not unicodedata.combining(ch))
    return re.sub(r"[^0-9a-z]+", "", text.replace("ß", "ss"))


def kind_by_name(name: str) -> str:
    """The kind of personal data a column's name says it holds, or ""."""
    folded = _fold(name)
    words = [_fold(w) for w in re.split(r"[\W_]+|(?<=[a-z])(?=[A-Z])", name) if w]
    for word in words:
        if word in _WHOLE_NAMES:
            return _WHOLE_NAMES[word]
    for kind, parts in _NAME_PARTS.items():
        if any(part in folded for part in parts):
            return kind
    if any(part in folded for part in _ADDRESS_NAMES) and not folded.endswith(("id", "code", "type", "typ")):
        return "street address"
    return ""


def kind_by_values(values: list[str]) -> str:
    """The kind of personal data most of these (distinct, non-null) text values are, or ""."""
    values = [v.strip() for v in values if isinstance(v, str) and v.strip()]
    if len(values) < 2:
        return ""

    def share(test) -> float:
        return sum(1 for v in values if test(v)) / len(values)

    if share(_EMAIL.match) >= MIN_SHARE:
        return "e-mail"
    if share(_NATIONAL_ID.match) >= MIN_SHARE:
        return "national id"
    if share(_phone) >= MIN_SHARE:
        return "phone"
    if share(_street) >= MIN_SHARE:
        return "street address"
    if share(lambda v: _HEX.match(v) and any(c.isdigit() for c in v) and any(c.isalpha() for c in v)) >= MIN_SHARE:
        return "hash"
    if share(lambda v: _CRYPT.match(v) and any(c.isdigit() for c in v) and not v.isdigit()
             and any(c.isupper() for c in v) and any(c.islower() for c in v)) >= MIN_SHARE:
        return "hash"
    return ""


def personal_columns(body: "pa.Table") -> dict[str, str]:
    """Column name -> kind of personal data ("e-mail", "phone", "password", "hash", "login",
    "national id", "card or account number", "street address"), for the columns that hold it by their name or their values."""
    import pyarrow as pa
    import pyarrow.compute as pc

    out: dict[str, str] = {}
    for name, column in zip(body.column_names, body.columns):
        kind = kind_by_name(name)
        if not kind and (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
            distinct = pc.unique(column.drop_null()).slice(0, SAMPLE).to_pylist()
            kind = kind_by_values(distinct)
        if kind:
            out[name] = kind
    return out
