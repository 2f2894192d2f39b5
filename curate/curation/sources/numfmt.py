"""Excel number formats: a cell's value as the spreadsheet shows it ("$1,461.60", "12.5%", "7/16/2014").

A workbook stores 1461.6 and a format; readers (people, multimodal models, the authors of
RealHiTBench's renderings) see the formatted text. Execution keeps the stored value; renderings
of a sheet use this text. The common grammar is covered: sections (positive;negative;zero;text),
literals ("..", \\x), padding (_x) and fill (*x), colours and locales in brackets, digits
(0 # ?), thousands separators, scaling commas, percent, scientific notation, and dates and times
(y m d h s, AM/PM, elapsed [h]). Conditions ([>=100]) are read as plain sections.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

# Excel's built-in formats as openpyxl names them, shown the way Excel (en-US) shows them
LOCALE_DEFAULTS = {"mm-dd-yy": "m/d/yyyy", "m/d/yy h:mm": "m/d/yyyy h:mm"}
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
EPOCH = dt.datetime(1899, 12, 30)
GENERAL_WIDTH = 11  # characters General fills in a column of standard width
_DATE_TOKEN = re.compile(r"(?i)\[h+\]|\[m+\]|\[s+\]|am/pm|a/p|y+|m+|d+|h+|s+(\.0+)?|e")


def general(value: Any) -> str:
    """Excel's General: integers as they are, other numbers rounded to the width of a cell."""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            return str(value)
        return _general_number(value)
    if isinstance(value, dt.datetime):
        return f"{value.month}/{value.day}/{value.year}" + (f" {value.hour}:{value.minute:02d}" if value.time() != dt.time()
                                                           else "")
    if isinstance(value, dt.date):
        return f"{value.month}/{value.day}/{value.year}"
    if isinstance(value, dt.time):
        return f"{value.hour}:{value.minute:02d}:{value.second:02d}"
    return "" if value is None else str(value)


def _general_number(value: float) -> str:
    """What General shows in a cell of standard width: at most 11 characters besides the sign,
    rounded (0.916666667, 4672.552167), in scientific notation where that keeps more (4.16334E-17)."""
    sign, number = ("-", -value) if value < 0 else ("", value)
    if number.is_integer() and number < 1e11:
        return sign + str(int(number))
    if number < 1e11:
        whole = len(str(int(number)))
        decimals = max(0, GENERAL_WIDTH - whole - 1)
        text = format(Decimal(repr(number)).quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP), "f")
        text = text.rstrip("0").rstrip(".") if "." in text else text
        if number >= 1e-4 or text not in ("0", "0.0"):
            if abs(float(text) - number) <= abs(float(_scientific_general(number)) - number) or number >= 1:
                return sign + text
    return sign + _scientific_general(number)


def _scientific_general(number: float) -> str:
    exp = math.floor(math.log10(number)) if number else 0
    mantissa = Decimal(repr(number / 10 ** exp)).quantize(Decimal("0.00001"), rounding=ROUND_HALF_UP)
    if mantissa >= 10:
        mantissa, exp = mantissa / 10, exp + 1
    digits = format(mantissa, "f").rstrip("0").rstrip(".")
    return f"{digits}E{'+' if exp >= 0 else '-'}{abs(exp):02d}"


def display(value: Any, number_format: str | None) -> str:
    """The text a spreadsheet shows for `value` under `number_format`; General when the format is
    empty or not understood (never an exception: a format is decoration, the value is the data)."""
    fmt = LOCALE_DEFAULTS.get(number_format or "General", number_format or "General")
    try:
        return _display(value, fmt)
    except (ValueError, OverflowError, IndexError):
        return general(value)


def shown_places(number_format: str | None) -> int | None:
    """How many decimals a number format shows a positive number with ("#,##0.00" 2, "0" 0,
    "0.0%" 3, as a fraction of one); None where the format does not fix them: General, text,
    dates, fractions, scientific notation, or a format that scales by thousands ("#,##0,")."""
    fmt = LOCALE_DEFAULTS.get(number_format or "General", number_format or "General")
    section = _strip_brackets(_sections(fmt)[0])[0]
    if section.strip().lower() in ("general", "") or _is_date_format(section):
        return None
    tokens = _tokens(section)
    codes = "".join(t for k, t in tokens if k == "code")
    if "@" in codes or "/" in codes or re.search(r"[eE][+-]", codes) or not re.search(r"[0#?]", codes):
        return None
    if re.search(r"[0#?],+(?![0#?])", codes):  # trailing commas: shown in thousands
        return None
    point = codes.find(".")
    decimals = 0 if point < 0 else len(re.findall(r"[0#?]", codes[point:]))
    return decimals + 2 * codes.count("%")


def _sections(fmt: str) -> list[str]:
    out, buf, quoted, bracket, escaped = [], [], False, False, False
    for ch in fmt:
        if escaped:
            buf.append(ch)
            escaped = False
        elif ch == "\\":
            buf.append(ch)
            escaped = True
        elif ch == '"':
            quoted = not quoted
            buf.append(ch)
        elif ch == "[" and not quoted:
            bracket = True
            buf.append(ch)
        elif ch == "]" and not quoted:
            bracket = False
            buf.append(ch)
        elif ch == ";" and not quoted and not bracket:
            out.append("".join(buf))
            buf = []
        else:
            buf.append(ch)
    out.append("".join(buf))
    return out


def _display(value: Any, fmt: str) -> str:
    if value is None:
        return ""
    if fmt.lower() == "general" or isinstance(value, bool):
        return general(value)
    sections = _sections(fmt)
    if isinstance(value, str):
        text_section = sections[3] if len(sections) > 3 else next((s for s in sections if "@" in s), None)
        return _literal(text_section, value) if text_section is not None else value
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return _date(value, _strip_brackets(sections[0])[0]) if _is_date_format(sections[0]) else general(value)
    if not isinstance(value, (int, float)) or not math.isfinite(value):
        return general(value)
    section, number, sign = sections[0], float(value), ""
    if number < 0 and len(sections) > 1 and sections[1].strip():
        section, number = sections[1], -number
    elif number < 0:
        sign, number = "-", -number
    elif number == 0 and len(sections) > 2:
        section = sections[2]
    body, elapsed = _strip_brackets(section)
    if _is_date_format(section):
        return sign + _date(EPOCH + dt.timedelta(days=number), body, elapsed_days=number if elapsed else None)
    if "/" in re.sub(r'"[^"]*"|\\.', "", body):  # fractions (# ?/?): not rendered as fractions
        return sign + general(number)
    if body.strip().lower() == "general":
        return sign + general(number)
    return sign + _number(number, body)


def _strip_brackets(section: str) -> tuple[str, bool]:
    """The section without colours, conditions and locales; a currency tag [$€-407] becomes its symbol."""
    elapsed = bool(re.search(r"\[[hms]+\]", section, re.IGNORECASE))

    def repl(m: re.Match[str]) -> str:
        inner = m.group(1)
        if inner.startswith("$"):
            return '"' + inner[1:].split("-")[0] + '"'
        return m.group(0) if re.fullmatch(r"[hms]+", inner, re.IGNORECASE) else ""

    return re.sub(r"\[([^\]]*)\]", repl, section), elapsed


def _is_date_format(section: str) -> bool:
    body = re.sub(r'"[^"]*"|\\.|\[[^\]]*\]|_.|\*.', "", _strip_brackets(section)[0])
    return bool(re.search(r"[ymdhs]", body, re.IGNORECASE)) and not re.search(r"[0#?]", body)


def _literal(section: str, text: str) -> str:
    """A text section: literals around @."""
    return "".join(text if k == "code" and t == "@" else t for k, t in _tokens(section))


def _tokens(section: str) -> list[tuple[str, str]]:
    """(kind, text): "lit" for shown text, "code" for placeholders and date codes."""
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(section):
        ch = section[i]
        if ch == '"':
            end = section.find('"', i + 1)
            end = len(section) if end < 0 else end
            out.append(("lit", section[i + 1:end]))
            i = end + 1
        elif ch == "\\" and i + 1 < len(section):
            out.append(("lit", section[i + 1]))
            i += 2
        elif ch == "_" and i + 1 < len(section):
            out.append(("lit", " "))
            i += 2
        elif ch == "*" and i + 1 < len(section):
            i += 2  # fill to the column's width: nothing in text
        else:
            out.append(("code", ch))
            i += 1
    return out


def _number(number: float, section: str) -> str:
    tokens = _tokens(section)
    codes = "".join(t for k, t in tokens if k == "code")
    percent = codes.count("%")
    number *= 100 ** percent
    exponent_match = re.search(r"[eE][+-]", codes)
    # trailing commas after the last digit placeholder scale by thousands
    placeholders = [i for i, (k, t) in enumerate(tokens) if k == "code" and t in "0#?"]
    if not placeholders and "@" in codes:  # a text format on a number: shown as General
        return general(number)
    if not placeholders:  # only literals: the text itself (e.g. "-" for zero)
        return "".join(t for k, t in tokens if k == "lit" or t != "@")
    last = placeholders[-1]
    scale = 0
    j = last + 1
    while j < len(tokens) and tokens[j] == ("code", ","):
        scale += 1
        j += 1
    number /= 1000 ** scale
    point = next((i for i, (k, t) in enumerate(tokens) if k == "code" and t == "."), None)
    if exponent_match:
        return _scientific(number, tokens)
    int_codes = "".join(t for i, (k, t) in enumerate(tokens) if k == "code" and t in "0#?,"
                        and (point is None or i < point) and i <= last)
    frac_codes = "".join(t for i, (k, t) in enumerate(tokens) if k == "code" and t in "0#?"
                         and point is not None and i > point)
    grouping = "," in int_codes.rstrip(",")
    decimals = len(frac_codes)
    # Excel rounds halves away from zero, on the decimal digits it stores (242.25 -> 242.3)
    text = format(Decimal(repr(number)).quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP), "f")
    whole, _, frac = text.partition(".")
    if frac_codes:  # optional decimals (#) drop trailing zeros
        required = len(frac_codes.rstrip("#?"))
        keep = len(frac.rstrip("0"))
        frac = frac[:max(required, keep)]
    min_int = len(int_codes.replace(",", "").lstrip("#?"))
    if whole == "0" and min_int == 0:
        whole = ""
    whole = whole.zfill(min_int) if min_int else whole
    if grouping and whole:
        whole = f"{int(whole):,}".zfill(len(whole)) if whole.isdigit() else whole
    numeral = whole + ("." + frac if point is not None and (frac or frac_codes) else "")
    out, placed = [], False
    for k, t in tokens:
        if k == "lit":
            out.append(t)
        elif t in "0#?.,":
            if not placed:
                out.append(numeral)
                placed = True
        elif t == "%":
            out.append("%")
        elif t == "@":
            continue
        else:
            out.append(t)
    return "".join(out)


def _scientific(number: float, tokens: list[tuple[str, str]]) -> str:
    codes = "".join(t for k, t in tokens if k == "code")
    mantissa_codes, _, exp_codes = re.split(r"([eE][+-])", codes, maxsplit=1)
    decimals = len(mantissa_codes.split(".")[1]) if "." in mantissa_codes else 0
    exp = 0 if number == 0 else math.floor(math.log10(abs(number)))
    mantissa = number / 10 ** exp
    if round(mantissa, decimals) >= 10:
        mantissa, exp = mantissa / 10, exp + 1
    sign = "+" if exp >= 0 else "-"
    digits = len(re.sub(r"[^0#?]", "", exp_codes)) or 1
    return f"{mantissa:.{decimals}f}E{sign if '+' in codes else ('-' if exp < 0 else '')}{abs(exp):0{digits}d}"


def _date(value: Any, section: str, elapsed_days: float | None = None) -> str:
    if isinstance(value, dt.time):
        value = dt.datetime.combine(EPOCH, value)
    elif not isinstance(value, dt.datetime):
        value = dt.datetime(value.year, value.month, value.day)
    tokens = _tokens(section)
    ampm = any(k == "code" for k, _ in tokens) and re.search(r"(?i)am/pm|a/p", "".join(
        t for k, t in tokens if k == "code"))
    # rejoin the code characters into runs so "mmm" and "AM/PM" read as single tokens
    runs: list[tuple[str, str]] = []
    for k, t in tokens:
        if k == "code" and runs and runs[-1][0] == "code":
            runs[-1] = ("code", runs[-1][1] + t)
        else:
            runs.append((k, t))
    parts: list[tuple[str, str]] = []
    for k, t in runs:
        if k == "lit":
            parts.append(("lit", t))
            continue
        pos = 0
        for m in _DATE_TOKEN.finditer(t):
            if m.start() > pos:
                parts.append(("lit", t[pos:m.start()]))
            parts.append(("code", m.group(0)))
            pos = m.end()
        if pos < len(t):
            parts.append(("lit", t[pos:]))
    out = []
    for i, (k, t) in enumerate(parts):
        if k == "lit":
            out.append(t)
            continue
        low = t.lower()
        prev = next((p for kk, p in reversed(parts[:i]) if kk == "code"), "").lower()
        nxt = next((p for kk, p in parts[i + 1:] if kk == "code"), "").lower()
        if low.startswith("y"):
            out.append(f"{value.year % 100:02d}" if len(low) <= 2 else str(value.year))
        elif low.startswith("m") and not low.startswith("[") and (prev.startswith("h") or prev.startswith("[h")
                                                                  or nxt.startswith("s")):
            out.append(f"{value.minute:02d}" if len(low) >= 2 else str(value.minute))
        elif low.startswith("m") and not low.startswith("["):
            n = len(low)
            out.append(str(value.month) if n == 1 else f"{value.month:02d}" if n == 2 else
                       MONTHS[value.month - 1][:3] if n == 3 else MONTHS[value.month - 1][0] if n == 5
                       else MONTHS[value.month - 1])
        elif low.startswith("d"):
            n = len(low)
            out.append(str(value.day) if n == 1 else f"{value.day:02d}" if n == 2 else
                       DAYS[value.weekday()][:3] if n == 3 else DAYS[value.weekday()])
        elif low.startswith("[h"):
            hours = int((elapsed_days or 0) * 24) if elapsed_days is not None else value.hour
            out.append(str(hours))
        elif low.startswith("h"):
            hour = value.hour % 12 or 12 if ampm else value.hour
            out.append(f"{hour:02d}" if len(low) >= 2 else str(hour))
        elif low.startswith("s"):
            out.append(f"{value.second:02d}" if len(low.split(".")[0]) >= 2 else str(value.second))
            if "." in low:
                places = len(low.split(".")[1])
                out.append("." + f"{value.microsecond / 1e6:.{places}f}"[2:])
        elif low in ("am/pm", "a/p"):
            pm = value.hour >= 12
            out.append(("PM" if pm else "AM") if low == "am/pm" else ("P" if pm else "A"))
        else:
            out.append(t)
    return "".join(out)
