"""Deterministic English for SQL questions: template phrasings filled with readable words.

Questions are English whatever the language of the schema, and a name that is not English is said
as the identifier the model sees, in backticks: a German schema (`schiff`, `getötet`) gets "How
many `schiff` rows ...", never "schiff entries" or "getotet" pasted into an English sentence. (A
German template catalog would need each noun's gender and case, which identifiers do not tell;
quoted identifiers are exact, and the values of such databases are English anyway.)

A table is named by what its rows are, where that is clear: the entity its key names (`State` ->
"states", `countries_and_areas` -> "countries"), its own English plural name (`flights`), or its
natural English name (Spider's tables.json: "students" for `schüler`); otherwise as its identifier's
rows ("`MplsStops` rows"). A column is named by its documented label, with the header the model sees
where the label neither spells it nor is in the table's column key (which every prompt shows: "wild
card berth" for `WCWin`, "population" for `pop`; "population (`pop_2018`)" beside `pop_2030`), by its
header as words where the schema is English and the header says itself (`air_time` -> "air time"),
else by its identifier (`getötet`). String values are
quoted, numbers written plainly. An LLM rephrasing step can replace this text later; this
rendering is the default, and never shows SQL.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Mapping

if TYPE_CHECKING:  # pragma: no cover
    from curate.curation.semantics import ColumnInfo

_PLACEHOLDER = re.compile(r"\{([^}]*)\}")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z][a-z])")
_ARTICLE = re.compile(r"\b([Aa]n?) (?=([\"`]?)(\w))")
# share of a schema's words (identifiers of 4 letters or more, not all capitals) that must say themselves in
# English: R packages' schemas run 0.60 to 0.89 (`gdpPercap`, `dep_delay` and `rownames` fail; Lahman's `W`,
# `G` and `SHO` are abbreviations, which tell no language), German ones written in ASCII 0.22 to 0.44 on the
# part of spider/more tuned on (`alter`, `land` and `name` pass); stevedata's survey codes (0.41) stay quoted
ENGLISH_SHARE = 0.5


def quoted(name: str) -> str:
    """An identifier as the model sees it in a table's header: `getötet`."""
    return f"`{name}`"


def english_schema(names: Iterable[str]) -> bool:
    """Do a database's table and column names read as English? Most of its words must say themselves
    in English, and none may hold a letter English does not write (`schüler`, `getötet`). One decision
    for the whole schema: `alter` (German for age) is an English word too, but not in a German one."""
    from curate.curation.semantics import says_itself

    names = [n for n in names if n]
    if not names or any(not ch.isascii() and ch.isalpha() for n in names for ch in n):
        return False
    words = [n for n in names if len(n) > 3 and not n.isupper()] or names
    return sum(says_itself(n) for n in words) >= ENGLISH_SHARE * len(words)


def label(name: str) -> str:
    """An identifier as words: underscores and camel case split, lower case unless an acronym."""
    words = _CAMEL.sub(" ", name.replace("_", " ").replace(".", " ")).split()
    return " ".join(w if (w.isupper() and len(w) > 1) else w.lower() for w in words) or name


def value_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        text = repr(value)
        return text[:-2] if text.endswith(".0") else text
    if isinstance(value, int):
        return str(value)
    return f'"{value}"'


@dataclass(frozen=True)
class Noun:
    """What one row of a table is: "state" / "states". `from_key`: the entity its key names, which
    a retrieval question may say without naming the table ("the states whose ...")."""

    one: str
    many: str
    from_key: bool = False


# the words a key column's name or label may reduce to that name a kind of thing people ask about
_ENTITY_WORDS = frozenset("""country nation state province county city district region neighborhood neighbourhood
team player airline airport carrier school student teacher hospital patient company firm bank store species
plot site station party candidate senator author book movie film song artist singer""".split())
_KEY_SUFFIX = re.compile(r"(?:[ _.]?(?:name|names|full|id|code|abb|abbr|abbreviation|label))+$", re.I)
_YEAR_KEY = re.compile(r"^(?:year|yr|year_?id|season)$", re.I)
_NAME_OF = re.compile(r"^(?:the )?(?:name|names) of (?:the |each |a )?([a-z]+)$", re.I)


def natural_name(table: str, caption: str) -> str:
    """A table's name in words: its natural name where the source gives one (Spider's tables.json:
    "has pet" for `hat_haustier`; a short lower-case caption), else its identifier as words."""
    if re.fullmatch(r"[a-z]+( [a-z]+){0,3}", caption.strip()):
        return caption.strip()
    return label(table)


# what the documentation says each row is: "a unique identifier for the respondent", "unique record identifier"
_ROW_ENTITY = re.compile(r"\bunique (?:(?:identifier|id|id number) (?:for|of) (?:the |each |a |an |every )?([A-Za-z]+)\b|"
                         r"([A-Za-z]+) (?:identifier|id)\b)", re.I)


def table_noun(table: str, key: Iterable[str], infos: Mapping[str, "ColumnInfo"] | None = None,
               said: str = "") -> Noun | None:
    """What one row of `table` is, when its key or its name (or its natural name `said`) says it;
    None when none does (the question then says "{table} entries")."""
    from curate.curation.semantics import is_word, plural, singular

    key = tuple(key)
    if len(key) == 1:
        info = (infos or {}).get(key[0])
        spoken = [_KEY_SUFFIX.sub("", key[0]).replace("_", " ").replace(".", " ").strip().lower()]
        if info is not None and info.label:
            text = info.label.strip().lower().split(",")[0].strip()  # "senator name, party and state": a senator
            named = _NAME_OF.match(text)
            spoken.append(named.group(1) if named else _KEY_SUFFIX.sub("", text).strip())
        for words in spoken:
            first = words.split(" or ")[0].split(" and ")[0].strip()  # "countries and areas": countries
            one = singular(first)
            if one in _ENTITY_WORDS:
                return Noun(one, plural(one), from_key=True)
    if len(key) == 2 and not said.strip():  # (country, year): one year of a country, "countries with a year of ..."
        times = [k for k in key if _YEAR_KEY.match(k)]
        others = [k for k in key if k not in times]
        if len(times) == 1 and others and table_noun(table, others, infos) is not None:
            return Noun("year", "years")
    if table.lower() in _ENTITY_WORDS:  # `school`, `student`: a singular identifier that names the thing
        return Noun(table.lower(), plural(table.lower()))
    words = (said.strip() or label(table)).split()
    if 2 <= len(words) <= 3 and all(re.fullmatch(r"[a-z]+", w) for w in words):  # "car makers", "department stores"
        last = words[-1]
        one = singular(last) if not re.search(r"(ss|us|is)$", last) else last
        if one != last and all(is_word(w) for w in (*words, one)) and last not in _NOT_COUNTED:
            return Noun(" ".join([*words[:-1], one]), " ".join(words))
        many = plural(last)
        if one == last and all(is_word(w) for w in (*words, many)) and last not in _NOT_COUNTED \
                and len(last) >= 4 and not _NOT_A_NOUN.search(last):  # "department store chain", not "complete old"
            return Noun(" ".join(words), " ".join([*words[:-1], many]))
    for name, given in ((said.strip(), True), (table.lower(), False)):
        if not re.fullmatch(r"[a-z]+", name):
            continue
        one = singular(name) if not re.search(r"(ss|us|is)$", name) else name
        if one != name and is_word(one) and is_word(name):
            return Noun(one, name)  # "flights", "airlines", "surveys"
        if given and one == name and is_word(name) and name not in _NOT_COUNTED:
            return Noun(name, plural(name))  # a natural name said in the singular: "student", "city"
    for info in (infos or {}).values():  # "uid: a unique identifier for the respondent": each row is one
        row = _ROW_ENTITY.search(info.description or info.label or "")
        one = singular((row.group(1) or row.group(2)).lower()) if row else ""
        if one and is_word(one) and one not in _NOT_COUNTED:
            return Noun(one, plural(one))
    return None


_NOT_COUNTED = frozenset("staff data information info equipment weather music software personnel final total full "
                         "main clean".split())
# a last word that ends like an adjective or a verb form names no thing to count: "product pricing", "data final"
_NOT_A_NOUN = re.compile(r"(ing|ed|al|ic|ous|ive|ful|less|able|ible|ary)$")


# a documented label's coding note ("won a wild card (Y or N)", "sex (1 = male)"): the values say it
_CODING_NOTE = re.compile(r"\s*[(\[][^()\[\]]*(?:\bor\b|=|/|:)[^()\[\]]*[)\]]\s*$", re.I)
# a label that is a clause, not a name: "won a wild card", "whether the team ...", "1 if male"
_CLAUSE_START = re.compile(r"^(?:won|lost|has|had|have|is|was|were|are|did|does|do|whether|if|\d+\s+(?:if|=))\b", re.I)


def noun_phrase(text: str) -> str:
    """A documented label as a question can carry it after "with a ... of": its coding note
    dropped, and "" where what is left is a clause ("won a wild card"), which pasted into a
    question reads "team seasons with won a wild card (Y or N)"."""
    text = _CODING_NOTE.sub("", text.strip()).strip()
    return "" if not text or _CLAUSE_START.match(text) else text


# a documented label longer than this is a definition ("type of experimental manipulation conducted on the plot"):
# a header that says itself is said instead ("estimated annual urban population growth rate" is a name)
SHORT_LABEL_WORDS = 6
MAX_LABEL_WORDS = 8  # longer still, it is never pasted into a question
# English words that headers use as shorthand for another word: `pop` (population), `temp`, `min`, `alt`
_SHORTHAND = frozenset("pop temp num min max avg std var exp cum lat lon alt dep arr amt qty pct tot iso dir".split())
# shorthand that means one thing in any table's header: said in full ("latitude", "percent urban")
_SPELLED_OUT = {"lat": "latitude", "lon": "longitude", "lng": "longitude", "pop": "population", "qty": "quantity",
                "pct": "percent", "amt": "amount", "avg": "average"}
_INDICATOR = re.compile(r"^(?:an? )?(?:indicator|dummy)(?: variable)? (?:for|of) (?=\w)", re.I)
# a year at the end, said "in 2018": after a word, an age range ("aged 5–14 1990") or a unit ("(thousands) 2018"),
# not after "in" ("rate in in 2018") nor as the end of a span ("2013 to 2018")
_YEAR_LAST = re.compile(r"(?<=[a-z\d)])(?<!\bin)(?<!\bof)(?<!\bfor)(?<!\bby)(?<!\bto)(?<!\band)(?<!\d{4}) ((?:18|19|20)\d\d)$")
_SPAN_LAST = re.compile(r"(?<=[a-z\d]) ((?:18|19|20)\d\d) to ((?:18|19|20)\d\d)$")  # "births by age 18 in 2013 to 2018"
_UNIT_BEFORE_YEAR = re.compile(r"^(.+?) (\([^()]+\)) (in (?:18|19|20)\d\d)$")  # "deaths (thousands) in 2018"
# a scale or a unit's symbol, said in parentheses: "population in 2018 (thousands)", "weight (g)", not "weight in g"
_IN_SCALE = re.compile(r" in (thousands|millions|billions|mm|cm|km|m|g|kg|mg|lbs?|ml)$")
# words that say whose part of a measure a column holds: said first, as English does ("child dependency ratio",
# "male under-5 mortality rate in 2018"), where a header or a label puts them last
_QUALIFIERS = ("male", "female", "child", "total", "urban", "rural", "adult")
_MEASURE_NOUN = re.compile(r"\b(?:rate|ratio|expectancy|mortality|population|deaths|births|income|earnings|wage|size)$")
_REMARK = re.compile(r"\s*\([^()]*[,;$][^()]*\)$")  # a trailing aside with a comma or a currency: "(US$, adjusted)"


def in_documentation(column: str, info: "ColumnInfo | None") -> bool:
    """Does the column's English documentation use its header as a word ("the age of the respondent"
    for `age`)? Then the header is that word, whatever the rest of the schema reads as."""
    description = info.description if info is not None else ""
    return bool(description) and re.search(rf"(?<![\w`]){re.escape(label(column))}(?![\w`])", description, re.I) is not None


def column_words(column: str, info: "ColumnInfo | None", english: bool = True, keyed: bool = False) -> str:
    """How a question names a column (`named_by`), in the order English says it (`spoken_order`)."""
    return spoken_order(named_by(column, info, english, keyed), column)


def named_by(column: str, info: "ColumnInfo | None", english: bool = True, keyed: bool = False) -> str:
    """How a question names a column: its documented label, alone where it holds or spells the header
    ("per capita income in the state", "population" for `pop`) or where the table's column key lists
    it (`keyed`: "wild card berth" for `WCWin`), else with the header the model sees
    ("wild card berth (`WCWin`)", "weight (`gewicht`)"); the header as words in an English schema
    where it says itself ("air time"); else the header itself (`getötet`). A label of more than
    SHORT_LABEL_WORDS words that does not hold the header defines the column rather than names it
    ("type of experimental manipulation conducted on the plot"): a header that says itself ("plot
    type") wins."""
    from curate.curation.semantics import evident, says_itself

    said = noun_phrase(info.label) if info is not None and info.label else ""
    said = _REMARK.sub("", said).strip()  # "GDP per capita (US$, inflation-adjusted)": the remark aside
    said = _INDICATOR.sub("", said)  # "indicator variable for part-time job": its values say yes or no
    said = _YEAR_LAST.sub(r" in \1", _unflattened(said))  # "neonatal mortality rate in 2000"
    header = label(column) if (english or in_documentation(column, info)) and says_itself(column) else ""
    header = " ".join(_SPELLED_OUT.get(w.lower(), w) for w in header.split())
    if _SHORTHAND.intersection(header.lower().split()) or any(
            w.isdigit() and not 1800 <= int(w) <= 2100 for w in header.split()):
        header = ""  # `pop` stands for population, "1519" for ages 15 to 19: the reader sees the header
    header = _YEAR_LAST.sub(r" in \1", header)  # `life_expectancy_1970`: "life expectancy in 1970"
    if said and len(said.split()) <= MAX_LABEL_WORDS and re.search(rf"(?<![\w`]){re.escape(column)}(?![\w`])", said, re.I) \
            and said.lower() != column.lower():
        return said  # the header, qualified: "per capita income in the state"
    if not said or len(said.split()) > MAX_LABEL_WORDS or (header and len(said.split()) > SHORT_LABEL_WORDS):
        return header or quoted(column)  # "air time", not "amount of time spent in the air (`air_time`)"
    if re.sub(r"[\W_]+", "", said.lower()) == re.sub(r"[\W_]+", "", column.lower()):
        return header or quoted(column)  # "address id" says no more
    return said if keyed or evident(column, said) else f"{said} (`{column}`)"


# a label flattened from a two-level heading: "maternal mortality 2017 Lifetime risk of maternal death",
# "postnatal health check 2013 to 2018 For newborns": the group, its year or period, then the column's own words
_FLATTENED = re.compile(r"^(?P<group>[a-z][\w\- ]*?) (?P<when>(?:18|19|20)\d\d(?:(?:–|-| to )(?:18|19|20)\d\d)?) "
                        r"(?P<own>[A-Z][\w\- ]*)$")


def _unflattened(text: str) -> str:
    """A label flattened from a two-level heading, said as one name: its own words, with the group's where
    they do not repeat them ("lifetime risk of maternal death in 2017", "postnatal health check for newborns",
    "delivery care (C-section)"); a single year is kept, a period of collection ("2013 to 2018") is not."""
    match = _FLATTENED.match(text)
    if not match:
        return text
    group, when, own = match.group("group"), match.group("when"), match.group("own")
    own = own if re.match(r"[A-Z](?:[A-Z]|-)", own) else own[0].lower() + own[1:]  # "C-section", "HIV" stay
    year = f" in {when}" if when.isdigit() else ""
    if own.split()[0] in ("for", "among", "in", "of"):
        return f"{group} {own}{year}"
    if set(group.lower().split()) & set(re.findall(r"[a-z]+", own.lower())):
        return f"{own}{year}"  # "number of maternal deaths": the group's word is already said
    return f"{group} ({own}){year}"


def spoken_order(words: str, column: str) -> str:
    """A column's words in the order English says them: a year last as "in 2018", a unit in parentheses
    after it ("annual number of under-5 deaths in 2018 (thousands)"), and a qualifier first ("child
    dependency ratio" for `dependency_ratio_child`; "female life expectancy" where the label of
    `life_expectancy_female` dropped the word its header says). Quoted identifiers stay as written."""
    if words.startswith("`"):
        return words
    words = _IN_SCALE.sub(r" (\1)", _SPAN_LAST.sub(r" in \1 to \2", _YEAR_LAST.sub(r" in \1", words)))
    words = _UNIT_BEFORE_YEAR.sub(r"\1 \3 \2", words)
    core, year, unit = re.fullmatch(r"(.+?)((?: in (?:18|19|20)\d\d)?)((?: \([^()]+\))?)", words).groups()
    last = core.rsplit(" ", 1)
    if len(last) == 2 and last[1].lower() in _QUALIFIERS and _MEASURE_NOUN.search(last[0]):
        return f"{last[1].lower()} {last[0]}{year}{unit}"
    header = label(column).lower().split()
    missing = [q for q in _QUALIFIERS if q in header and q not in core.lower().split()]
    if len(missing) == 1 and _MEASURE_NOUN.search(core):
        return f"{missing[0]} {core}{year}{unit}"
    return words


def render(text: str, tables: dict[str, str], columns: dict[str, str], values: dict[str, Any],
           nouns: Mapping[str, Noun | None] | None = None, words: Mapping[str, str] | None = None,
           names: Mapping[str, str] | None = None, meanings: Mapping[str, str] | None = None,
           spoken: Mapping[str, str] | None = None) -> str:
    """Fill `{A}` (a table), `{a.num}` (a column slot) and `{v}` (a value). `nouns` (by table)
    names a table by what its rows are; `words` (by column slot) names a column; `names` (by table)
    how a table without a noun is said (default: its identifier, "`hat_haustier` rows"); `meanings` (by value) what a code's value stands
    for ("1 (yes)"); `spoken` (by value) a value said in words instead ("March" for a month 3). Two
    tables of one question that are rows of the same thing both keep their names, so a reader tells them apart."""
    nouns = nouns or {}
    words = words or {}
    named = {ref: nouns.get(table) for ref, table in tables.items()}
    # neither is "countries" where both are: "How many countries belong to a `sowc_demographics` row ..."
    # counts the rows of the other table, and a reader cannot tell which; a table the question no longer
    # names ("the countries with a maternal mortality ratio of ...": its column said without it) takes no noun
    said = [noun.one for ref, noun in named.items() if noun is not None and f"{{{ref}}}" in text]
    named = {ref: None if noun is not None and said.count(noun.one) > 1 else noun for ref, noun in named.items()}
    for ref, noun in named.items():
        if noun is not None:
            text = (text.replace(f"{{{ref}}} entries", noun.many).replace(f"{{{ref}}} entry", noun.one)
                    .replace(f"{{{ref}}}", noun.many))
        elif ref in tables:  # its identifier's rows: "`schiff` rows", "linked through `hat_haustier`"
            said = (names or {}).get(tables[ref]) or quoted(tables[ref])
            text = (text.replace(f"{{{ref}}} entries", f"{said} rows").replace(f"{{{ref}}} entry", f"{said} row")
                    .replace(f"through {{{ref}}}", f"through {said}").replace(f"{{{ref}}}", f"{said} rows"))

    def fill(match: re.Match) -> str:
        ref = match.group(1)
        if ref in tables:
            return (names or {}).get(tables[ref]) or quoted(tables[ref])
        if ref in columns:
            return words.get(ref) or label(columns[ref])
        if ref in (spoken or {}):
            return spoken[ref]
        if ref in values:
            meaning = (meanings or {}).get(ref)
            return value_text(values[ref]) + (f" ({meaning})" if meaning else "")
        raise KeyError(ref)

    for ref in [r for r in columns if r.split(".")[1].startswith("label") and words.get(r) == "name"]:
        text = text.replace(f" with {{{ref}}} {{", " {")  # "the state "Arizona"", not "the state with name "Arizona""
    out = _ARTICLE.sub(_article, _PLACEHOLDER.sub(fill, text))
    return out[:1].upper() + out[1:]


def month_said(text: str, words: Mapping[str, str], months: Iterable[str]) -> str:
    """A template's "with {a.cat} {v}" said "in {v}" where the slot is a month ("a flight in March"), with
    the verb its label holds ("surveys captured in May" for "month captured"); `months`: such slots. The
    value itself is said as the month's name (`render`'s `spoken`)."""
    for slot in months:
        verb = re.fullmatch(r"month (?:of )?(\w+ed)", words.get(slot, ""), re.I)
        said = f"{verb.group(1)} in" if verb else "in"
        text = re.sub(rf"\bwith (?:an? )?\{{{re.escape(slot)}\}} (\{{\w+\}})", lambda m: f"{said} {m.group(1)}", text)
    return text


_DATED = re.compile(r"\bdated (\{\w+\} or (?:later|earlier)) \(by \{([abc]\.date\d*)\}\)")


def date_said(text: str, alone: Iterable[str], years: Iterable[str]) -> str:
    """A template's "dated {v} or later (by {a.date})" without "(by ...)" where the table has no other date
    (`alone`: such slots), and "from 1989 or later" where the date is a year (`years`)."""
    alone, years = set(alone), set(years)

    def said(match: re.Match) -> str:
        slot = match.group(2)
        return (f"{'from' if slot in years else 'dated'} {match.group(1)}"
                + ("" if slot in alone else f" (by {{{slot}}})"))

    return _DATED.sub(said, text)


_WHOSE_ENTRY = re.compile(r"\bwhose \{([ABC])\} entry has (?=(?:an? )?\{([abc]\.\w+)\})")


def owner_unsaid(text: str, columns: Mapping[str, str], holders: Mapping[str, set[str]],
                 same_things: Iterable[str] | None = None) -> str:
    """A template's question with "whose {B} entry has {b.cat} {v}" said as "with {b.cat} {v}" where no
    other table of the question has that column: "the countries with a maternal mortality ratio of more
    than 186", not "the countries whose `sowc_maternal_newborn` row has a ...". Each row of the first
    table has one entry in the other (the reference runs that way), so naming that table adds only
    database words. `holders`: per table letter, the column names of that table. `same_things`: the
    letters whose rows are the very things the other table's rows are (joined one to one); only those
    are unsaid, for "the managerial half seasons with a height of more than 73" gives a season the
    height of its manager ("whose player has a height ..." says whose it is)."""
    same = None if same_things is None else set(same_things)

    def unsaid(match: re.Match) -> str:
        letter, slot = match.group(1), match.group(2)
        if slot[0].upper() != letter or slot not in columns or (same is not None and letter not in same):
            return match.group(0)
        column = columns[slot]
        if any(column in names for other, names in holders.items() if other != letter):
            return match.group(0)
        return "with "

    return _WHOSE_ENTRY.sub(unsaid, text)


_HEAD = re.compile(r"^([a-z][a-z\- ]*?)(?= (?:in|of|by|per|between|for)\b| \(|$)")


def counted_in_number(text: str, words: Mapping[str, str], counts: Iterable[str]) -> str:
    """A template's question with "a {b.num} of more than {v}" said as "more than {v} {b.num}" where
    the column counts things named in the plural ("wins", "shutouts (`SHO`)", "strikeouts by
    pitchers"): "with more than 9 shutouts", not "with a shutouts of more than 9", and "the largest
    number of losses", not "the highest losses" ("the average number of games", not "the average
    games"; "the total number of first-place votes"). `counts`: the slots whose column counts: a count,
    or a measure in whole numbers."""
    from curate.curation.semantics import singular

    for slot in counts:
        head = _HEAD.match(words.get(slot, ""))
        nouns = head.group(1).split() if head else []
        while len(nouns) > 1 and nouns[-1].endswith("ed"):  # "votes received", "home runs allowed"
            nouns.pop()
        last = nouns[-1] if nouns else ""
        if not last or singular(last) == last:
            continue
        text = re.sub(rf"\ban? \{{{re.escape(slot)}\}} of (more|less) than (\{{\w+\}})", rf"\1 than \2 {{{slot}}}", text)
        text = re.sub(rf"\bwhose \{{{re.escape(slot)}\}} is (more|less) than (\{{\w+\}})",  # not "whose stolen bases is"
                      rf"with \1 than \2 {{{slot}}}", text)
        text = re.sub(rf"(?<!highest and )\bthe (highest|lowest) (\{{{re.escape(slot)}\}})",  # "the lowest losses": the fewest
                      lambda m: f"the {'largest' if m.group(1) == 'highest' else 'smallest'} number of {m.group(2)}", text)
        text = re.sub(rf"\b(average|total) (\{{{re.escape(slot)}\}})", r"\1 number of \2", text)  # not "average games"
        text = re.sub(rf"\bthe highest and the lowest (\{{{re.escape(slot)}\}})",  # not "the lowest wins"
                      r"the largest and the smallest number of \1", text)
    return text


_WITH_A_OF = re.compile(r"\bwith an? (\{[abc]\.\w+\}) of ((?:more|less) than \{\w+\}|at (?:least|most) \{\w+\}|"
                        r"\{\w+\} or (?:more|less))(?! whose)")


def whose_is(text: str) -> str:
    """A template's "with a {b.num} of more than {v}" said as "whose {b.num} is more than {v}": a
    label with its own words ("population in 2018 in thousands", "percent urban in 2018") reads as
    a noun phrase after "whose", not between "a" and "of" ("a percent urban in 2018 of more than
    80"). Not before another "whose" (two in a row), nor where a count was said as a number."""
    return _WITH_A_OF.sub(r"whose \1 is \2", text)


def distinct_in_plural(text: str, words: Mapping[str, str]) -> str:
    """A template's "different {b.cat} values" said as the things counted, where the label's head is a
    noun: "How many different countries of death ...", not "different country of death values". A
    header the model sees as written (`stateabb`) keeps "values"."""
    from curate.curation.semantics import is_word, plural, singular

    def said(match: re.Match) -> str:
        slot = match.group(1)
        text = words.get(slot, "")
        head = _HEAD.match(text)
        last = head.group(1).split()[-1] if head else ""
        if not last or not is_word(last) or singular(last) != last or plural(last) == last:
            return match.group(0)
        start, end = head.span(1)
        return f"different {text[:start]}{plural(head.group(1))}{text[end:]}"

    return re.sub(r"\bdifferent \{([abc]\.\w+)\} values\b", said, text)


def without_table_names(text: str, entities: Mapping[str, Noun | None] | None = None) -> str:
    """A template's question with its tables unnamed, as MMQA's retrieval questions read: a table
    is the entity its key names ("states"), else plain "entries"; a table that only links two others
    goes unsaid ("the pets linked to students with ..."). The columns and values it names are what
    point to the tables."""
    said: set[str] = set()
    for letter in "ABC":
        noun = (entities or {}).get(letter)
        if noun is not None and noun.from_key and noun.one not in said:
            said.add(noun.one)
            text = (text.replace(f"{{{letter}}} entries", noun.many).replace(f"{{{letter}}} entry", noun.one)
                    .replace(f"{{{letter}}}", noun.many))
    text = re.sub(r" through \{B\}(?= to )", "", text)  # the linking table is what the reader must find
    # "the countries whose {B} entry has a `c_section` of more than 28": the related table is the reader's to find
    text = re.sub(r"\bwhose \{[ABC]\} entry has ", "with ", text)
    for letter in "ABC":
        text = text.replace(f"{{{letter}}} entries", "entries").replace(f"{{{letter}}} entry", "entry")
        text = text.replace(f"{{{letter}}}", "entries")
    return text


def _article(match: re.Match) -> str:
    """"a"/"an" by the sound of the next word's first letter (a filled label may change it)."""
    word = match.group(1)
    an = match.group(3).lower() in "aeiou"
    fixed = ("an" if an else "a") if word.islower() else ("An" if an else "A")
    return fixed + " "
