"""How an SQL question says what its query asks: the words of its columns, tables, values and joins.

`QuestionWording` is the synthesizer's half that words a kept query (`synth.Synthesizer` binds, runs and
checks it): the template's phrasing as the path's data has it said (`_phrasing`: months by name, "have no
senator with ..." where every state has senators), the question a reader is asked (`_question`), the question
a retrieval sample asks with its tables unnamed (`_unnamed`), and how each column is named (`column_words`).
It reads the synthesizer's state: `views`, `infos`, `roles`, `nouns`, `said`, `months`, `english`, `graph`,
`keys_between`, `_facts`, and its `step_key` and `one_to_one_letters`.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from curate.curation import column_key
from curate.curation.semantics import COUNT, MEASURE, says_itself, value_meaning
from curate.curation.sources.numfmt import MONTHS
from curate.generators.sql.render import (Noun, column_words, counted_in_number, date_said,
                                          distinct_in_plural, label, month_said, owner_unsaid, render, whose_is,
                                          without_table_names)

if TYPE_CHECKING:  # pragma: no cover
    from curate.generators.sql.synth import Orientation
    from curate.generators.sql.templates import SqlTemplate

# a measure whose words name events counted, stored as a float (SOWC's maternal deaths, in thousands or not):
# "with more than 600 maternal deaths in 2017", not "whose maternal deaths in 2017 is more than 600"
_COUNTED_THINGS = re.compile(r"^[\w\- ]*\b(?:deaths|births|cases|visits|admissions|arrests|crimes|accidents|injuries|"
                             r"infections)\b(?! (?:rate|ratio|per)\b)")


class QuestionWording:
    """The words of a kept query's questions (a mixin of `synth.Synthesizer`, whose state it reads)."""

    def _counts(self, table: str, column: str) -> bool:
        """Does the column count things: a count, or a measure in whole numbers ("games", "home runs
        allowed"), which a question says as "the largest number of games"?"""
        import pyarrow as pa

        role = getattr(self.infos[table].get(column), "role", "")
        if role == COUNT:
            return True
        return role == MEASURE and (pa.types.is_integer(self.views[table].schema.field(column).type)
                                    or _COUNTED_THINGS.search(self.column_words(table, column)) is not None)

    def join_words(self, orientation: Orientation) -> str:
        """Which key joins two tables, in words, when more than one could: "(flights are linked to
        airports by their dest)"; "" when each pair of tables shares one key."""
        parts = []
        for i in range(len(orientation.edges)):
            first, second = orientation.tables[i], orientation.tables[i + 1]
            if self.keys_between.get(frozenset((first, second)), 0) < 2:
                continue
            key = self.step_key(orientation, i)
            columns = " and ".join(self.column_words(key.table, c) for c in key.columns)
            parts.append(f"{self._many(key.table)} are linked to {self._many(key.ref_table)} by their {columns}")
        return f" ({'; '.join(parts)})" if parts else ""

    def role_nouns(self, orientation: Orientation) -> dict[str, Noun] | None:
        """Where two keys could join a step, the referenced table's noun with the key's role ("origin
        airport" for `flights.origin`): the question then says which ("the flights whose origin airport
        has ..."). None where a role has no words of its own: the key is said in parentheses (`join_words`)."""
        nouns: dict[str, Noun] = {}
        for i in range(len(orientation.edges)):
            if self.keys_between.get(frozenset(orientation.tables[i:i + 2]), 0) < 2:
                continue
            key = self.step_key(orientation, i)
            noun, role = self.nouns.get(key.ref_table), self._role(key)
            if noun is None or not role or key.ref_table in nouns:
                return None
            nouns[key.ref_table] = Noun(f"{role} {noun.one}", f"{role} {noun.many}", noun.from_key)
        return nouns

    def _role(self, key: Any) -> str:
        """What a key's own column says its referenced row is to it, in one or two words: "origin" for
        `flights.origin`, "loser" for `SeriesPost.teamIDloser` beside `teamID`; "" where none says it."""
        roles = []
        for column, referenced in zip(key.columns, key.ref_columns):
            if column.lower() == referenced.lower():
                continue  # yearID -> yearID: no role
            rest = re.sub(re.escape(referenced), "", column, flags=re.I).strip("_. ")
            roles.append(label(rest) if rest and rest != column and says_itself(rest)
                         else self.column_words(key.table, column))
        if len(roles) != 1 or roles[0].startswith("`") or len(roles[0].split()) > 2:
            return ""
        return roles[0]

    def _many(self, table: str) -> str:
        """A table's rows in a sentence: "flights", else "child rows" or "`MplsStops` rows"."""
        noun = self.nouns.get(table)
        return noun.many if noun is not None else f"{self.said[table]} rows"

    def _unnamed(self, template: SqlTemplate, orientation: Orientation, columns: dict[str, str],
                 values: dict[str, Any], words: dict[str, str], meanings: dict[str, str], spoken: dict[str, str]) -> str:
        """The question a retrieval sample asks, its tables unnamed (`render.without_table_names`)."""
        names = dict(zip("ABC", orientation.tables))
        text = without_table_names(self._phrasing(template, orientation, columns, words),
                                   {r: self._unrevealing(t) for r, t in names.items()})
        return render(self._grammar(text, orientation, columns, words), {}, columns, values, words=words,
                      meanings=meanings, spoken=spoken)

    def _grammar(self, text: str, orientation: Orientation, columns: dict[str, str], words: dict[str, str]) -> str:
        """A phrasing with its slots' words in mind: counts said as numbers ("more than 9 shutouts"), "whose
        ... is", "different countries of death"."""
        names = dict(zip("ABC", orientation.tables))
        counts = [slot for slot, column in columns.items() if slot[:1].upper() in names
                  and self._counts(names[slot[0].upper()], column)]
        return distinct_in_plural(whose_is(counted_in_number(text, words, counts)), words)

    def _phrasing(self, template: SqlTemplate, orientation: Orientation, columns: dict[str, str],
                  words: dict[str, str]) -> str:
        """The template's question as this path's data has it said: without "have {A} entries" where every
        {B} entry has some, months in their words, a date's "(by ...)" only where the table has another date."""
        import pyarrow as pa

        names = dict(zip("ABC", orientation.tables))
        text = template.question_all_linked if template.question_all_linked and self.all_linked(orientation) \
            else template.question
        slots = {slot: (names[slot[0].upper()], column) for slot, column in columns.items() if slot[:1].upper() in names}
        text = month_said(text, words, [slot for slot, where in slots.items() if where in self.months])
        alone = [slot for slot, (table, _) in slots.items() if len(self.roles[table]["date"]) == 1]
        years = [slot for slot, (table, column) in slots.items()
                 if slot[2:].startswith("date") and pa.types.is_integer(self.views[table].schema.field(column).type)]
        return date_said(text, alone, years)

    def _question(self, template: SqlTemplate, orientation: Orientation, columns: dict[str, str],
                  values: dict[str, Any], words: dict[str, str], meanings: dict[str, str], spoken: dict[str, str]) -> str:
        """The question a reader is asked, in words (`render`), with the join named where two keys could join."""
        names = dict(zip("ABC", orientation.tables))
        holders = {letter: set(self.graph.bodies[t].column_names) for letter, t in names.items()}
        text = owner_unsaid(self._phrasing(template, orientation, columns, words), columns, holders,
                            self.one_to_one_letters(orientation))
        roles = self.role_nouns(orientation)  # "the flights whose origin airport has ..."
        question = render(self._grammar(text, orientation, columns, words), names, columns, values,
                          {**self.nouns, **(roles or {})}, words, self.said, meanings, spoken)
        return _with_join_words(question, self.join_words(orientation) if roles is None else "")

    def all_linked(self, orientation: Orientation) -> bool:
        """Does every row of the path's second table have a row of the first joined to it (every state
        its senators)? A key that is NULL joins nothing, on either side."""
        key = ("all_linked", orientation.key)
        if key not in self._facts:
            (left, right), first, second = orientation.edges[0], orientation.tables[0], orientation.tables[1]
            linked = {row for row in zip(*(self.views[first].column(c).to_pylist() for c in left)) if None not in row}
            self._facts[key] = all(row in linked for row in zip(*(self.views[second].column(c).to_pylist() for c in right)))
        return self._facts[key]

    def _spoken(self, template: SqlTemplate, tables: dict[str, str], columns: dict[str, str],
                values: dict[str, Any]) -> dict[str, str]:
        """Value name -> the value in words where a question says it so: a month's name."""
        return {name: MONTHS[values[name] - 1] for name, spec in template.values.items()
                if name in values and spec.slot in columns and spec.kind == "equal"
                and (tables[spec.slot[0].upper()], columns[spec.slot]) in self.months}

    def keyed(self, table: str, column: str) -> bool:
        """Does the table's column key (shown under it in every prompt) say what the column stands for?"""
        if table not in self._keyed:
            self._keyed[table] = column_key.keyed_columns(self.infos[table].values(), self.graph.bodies[table].column_names)
        return column in self._keyed[table]

    def column_words(self, table: str, column: str) -> str:
        """How a question over the shown tables names a column (`render.column_words`): by its label
        alone where the table's column key ties it to its header, and without its table's own noun
        ("the states whose Census division is ...", not "whose state has state's Census division")."""
        said = self._words.get((table, column))
        if said is None:  # asked for every slot of every candidate: computed once per column
            said = column_words(column, self.infos[table].get(column), self.english, keyed=self.keyed(table, column))
            noun = self.nouns.get(table)
            if noun is not None and said.lower().startswith(f"{noun.one}'s "):  # a state's "state's Census division"
                said = said[len(noun.one) + 3:]
            if noun is not None and column in self.roles[table]["label"] and (
                    said.lower() in (noun.one, noun.many) or said.lower().startswith(f"{noun.one} name")
                    or said.lower().endswith(" name") and noun.one in said.lower()):
                said = "name"  # "the name of every country", not "the country or area name of every country"
            self._words[(table, column)] = said
        return said

    def _unrevealing(self, table: str) -> Noun | None:
        """The noun a retrieval question may use for a table: one its key names ("states"), or a
        natural name that is not the table's own identifier ("students" for `schüler`); "flights"
        for `flights` would name the answer."""
        noun = self.nouns.get(table)
        if noun is None or noun.from_key:
            return noun
        spelled = re.sub(r"[\W_]+", "", table).casefold()
        if re.sub(r"\W+", "", noun.one).casefold() in spelled or re.sub(r"\W+", "", noun.many).casefold() in spelled:
            return None
        return Noun(noun.one, noun.many, from_key=True)

    def _meanings(self, template: SqlTemplate, tables: dict[str, str], columns: dict[str, str],
                  values: dict[str, Any]) -> dict[str, str]:
        """Value name -> what the value stands for ("1" of a flag: "yes"; a documented code's level)."""
        out = {}
        for name, spec in template.values.items():
            if name in values and spec.slot in columns:
                info = self.infos[tables[spec.slot[0].upper()]].get(columns[spec.slot])
                meaning = value_meaning(info, values[name])
                if meaning:
                    out[name] = meaning
        return out


def _with_join_words(question: str, words: str) -> str:
    """The join named before the question's closing mark: "...? (flights ... by their dest)" reads
    as "... (flights ... by their dest)?"."""
    if not words:
        return question
    end = question[-1] if question[-1] in "?." else ""
    return question[: len(question) - len(end)] + words + end
